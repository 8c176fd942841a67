"""The committed drop-the-norm lab: ``dropnorm-cpu.json``, a full run of ``python -m normref dropnorm``.

Pre-LN with DyT (three α inits), Derf and LayerNorm Scaling, trained in the
placement lab's setting (:mod:`normref.experiments.dropnorm`); the Pre-LN
baseline is the placement lab's own runs (``placement-cpu.json``). Like that
file, it is run on purpose and committed with the machine, versions, date and
seconds it took. Refresh it with ``python -m normref dropnorm --json
normref/results/dropnorm-cpu.json`` and commit it; ``tests/test_dropnorm.py``
re-runs the first steps of a few runs and compares them with it.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

__all__ = ["DROPNORM_CPU", "dropnorm_cpu", "summary"]

# A literal: normref.cache reads it from the source, without importing the module.
__cache_files__ = ("dropnorm-cpu.json",)
DROPNORM_CPU = Path(__file__).parent / __cache_files__[0]


@functools.lru_cache(maxsize=None)
def dropnorm_cpu() -> dict:
    """The committed report (schema normref.dropnorm/1)."""
    if not DROPNORM_CPU.is_file():
        raise FileNotFoundError(f"{DROPNORM_CPU} is missing: run `python -m normref dropnorm --json {DROPNORM_CPU}`")
    return json.loads(DROPNORM_CPU.read_text(encoding="utf-8"))


@functools.lru_cache(maxsize=None)
def summary() -> dict:
    """:func:`normref.experiments.dropnorm.summarize` of the committed report, with the placement lab's
    Pre-LN runs as the "pre" arm."""
    from ..experiments.dropnorm import summarize
    from .placement import placement_cpu

    return summarize(dropnorm_cpu(), placement_cpu())
