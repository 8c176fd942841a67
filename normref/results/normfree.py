"""The committed measurement inside SmolLM2-135M: ``normfree-cpu.json``, a full run of ``python -m normref normfree``.

Each RMSNorm frozen to a constant 1/rms, DyT fitted to each norm, and each
block dropped, over the texts of ``normref/experiments/normfree.yml``
(:mod:`normref.experiments.normfree`). Like the placement lab's file, it is run
on purpose and committed with the machine, versions, date and seconds it took:
the whole run is minutes of CPU, too long for every build. Refresh it with
``python -m normref normfree --json normref/results/normfree-cpu.json`` and
commit it; ``tests/test_normfree.py`` re-runs a few cells and compares them with it.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

__all__ = ["NORMFREE_CPU", "normfree_cpu", "summary"]

# A literal: normref.cache reads it from the source, without importing the module.
__cache_files__ = ("normfree-cpu.json",)
NORMFREE_CPU = Path(__file__).parent / __cache_files__[0]


@functools.lru_cache(maxsize=None)
def normfree_cpu() -> dict:
    """The committed report (schema normref.normfree/1)."""
    if not NORMFREE_CPU.is_file():
        raise FileNotFoundError(f"{NORMFREE_CPU} is missing: run `python -m normref normfree --json {NORMFREE_CPU}`")
    return json.loads(NORMFREE_CPU.read_text(encoding="utf-8"))


@functools.lru_cache(maxsize=None)
def summary() -> dict:
    """:func:`normref.experiments.normfree.summarize` of the committed report."""
    from ..experiments.normfree import summarize

    return summarize(normfree_cpu())
