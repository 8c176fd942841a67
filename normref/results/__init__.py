"""Committed measurement results, drawn by figures and quoted by values.

``bench-cpu.json`` is a full run of ``python -m normref bench`` on the
machine it names (its ``machine`` block). Figures are drawn from it rather
than re-measured at every build: a build must be fast and deterministic, and a
timing taken while the site builds would measure the build. To refresh it, run
``python -m normref bench --json normref/results/bench-cpu.json`` on a quiet
machine and commit the file.

``small-cpu.json`` is a run of ``python -m normref bench --small``: normref's
RMSNorm against torch.nn.RMSNorm from one row up, the scan behind
``normref.nn.SMALL_BYTES``. Refresh it the same way (``--small --json
normref/results/small-cpu.json``).

The files are listed in ``__cache_files__``, so their bytes are part of this
module's cache key (normref.cache): a new run re-draws every figure that
depends on ``normref.results``.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

__all__ = ["bench_cpu", "small_cpu", "BENCH_CPU", "SMALL_CPU"]

# A literal: normref.cache reads it from the source, without importing the module.
__cache_files__ = ("bench-cpu.json", "small-cpu.json")
BENCH_CPU = Path(__file__).parent / __cache_files__[0]
SMALL_CPU = Path(__file__).parent / __cache_files__[1]


@functools.lru_cache(maxsize=None)
def bench_cpu() -> dict:
    """The committed CPU benchmark report (schema normref.bench/1)."""
    return json.loads(BENCH_CPU.read_text(encoding="utf-8"))


@functools.lru_cache(maxsize=None)
def small_cpu() -> dict:
    """The committed small-tensor scan (schema normref.bench.small/1)."""
    return json.loads(SMALL_CPU.read_text(encoding="utf-8"))


def row(report: dict, *, family: str, norm: str, d: int, dtype: str = "float32", mode: str = "forward",
        device: str = "cpu") -> dict:
    """The one result row for an implementation and shape; KeyError if the run lacks it."""
    for r in report["results"]:
        if (r["family"], r["norm"], r["d"], r["dtype"], r["mode"], r["device"]) == (family, norm, d, dtype, mode, device):
            return r
    raise KeyError(f"no bench result for {family}/{norm} d={d} {dtype} {mode} on {device}")
