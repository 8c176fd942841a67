"""The committed placement lab: ``placement-cpu.json``, a full run of ``python -m normref placement``.

Training every variant of the lab takes minutes, far more than a site build
may spend, so it is run on purpose and committed, like ``bench-cpu.json``: the
file names the machine, the library versions and the date, and carries the
very text the models trained on. Refresh it with ``python -m normref placement
--json normref/results/placement-cpu.json`` (the committed run took about
18 minutes on the project's loaded 2-core machine; its ``seconds`` field records it) and commit it; ``tests/test_placement_lab.py``
re-runs the first steps of a few runs and compares them with it.

The file is listed in ``__cache_files__``, so its bytes are part of this
module's cache key (normref.cache): a new run re-draws every figure that
depends on ``normref.results.placement``.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

__all__ = ["PLACEMENT_CPU", "placement_cpu", "summary"]

# A literal: normref.cache reads it from the source, without importing the module.
__cache_files__ = ("placement-cpu.json",)
PLACEMENT_CPU = Path(__file__).parent / __cache_files__[0]


@functools.lru_cache(maxsize=None)
def placement_cpu() -> dict:
    """The committed lab report (schema normref.placement/1)."""
    if not PLACEMENT_CPU.is_file():
        raise FileNotFoundError(f"{PLACEMENT_CPU} is missing: run `python -m normref placement --json {PLACEMENT_CPU}`")
    return json.loads(PLACEMENT_CPU.read_text(encoding="utf-8"))


@functools.lru_cache(maxsize=None)
def summary() -> dict:
    """:func:`normref.experiments.placement.summarize` of the committed report."""
    from ..experiments.placement import summarize

    return summarize(placement_cpu())
