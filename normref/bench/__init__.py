"""``python -m normref bench``: RMSNorm against LayerNorm, timed on this machine.

A norm is memory-bound: it does a handful of flops per element, and a core can
do those far faster than DRAM can feed it. So the honest yardstick is not
FLOP/s but bytes per second, compared with the fastest thing that moves the
same bytes: a copy (``x.clone()``, one read and one write). We call the copy's
bandwidth the roofline and report each implementation as a fraction of it.

What is timed, for each device (CPU always, CUDA when present), dtype
(float32, and bfloat16 where the device supports it) and shape (rows × d, d
from 256 to 16384 at a fixed total size):

- ``copy``: ``x.clone()``, the roofline;
- ``composed``: the textbook formulas written as separate tensor ops (RMSNorm:
  pow, mean, rsqrt, mul, mul; LayerNorm: mean, sub, pow, mean, rsqrt, mul, mul,
  add), each op one or more full passes over memory;
- ``functional``: ``F.rms_norm`` / ``F.layer_norm``;
- ``module``: ``torch.nn.RMSNorm`` / ``torch.nn.LayerNorm``;
- ``compiled``: the composed formulas through ``torch.compile`` (full runs only,
  where the machine can compile; the one-off compile time is recorded);
- ``normref``: ``normref.nn.rms_norm`` / ``normref.nn.layer_norm``.

Within one shape every implementation is timed in turn, round after round
(interleaved), so a burst of load from another process hits all of them alike;
we report the median with the quartiles. Bytes are counted explicitly: the
least any implementation must move (read x, write y, read the parameters; for
the backward also read dy, write dx, write the parameter gradients).

The package: :mod:`~normref.bench.implementations` (what is timed),
:mod:`~normref.bench.accounting` (bytes and passes over memory),
:mod:`~normref.bench.harness` (timing and the report),
:mod:`~normref.bench.budgets` (the RMSNorm budgets and the small-tensor scan) and
:mod:`~normref.bench.cli` (the command line). Everything public is re-exported here.
"""

from __future__ import annotations

from .accounting import count_bytes, memory_passes, pass_counts
from .budgets import SMALL_SCHEMA, budgets, small_tensors
from .cli import add_arguments, run
from .harness import FULL, QUICK, SCHEMA, BenchConfig, format_ratios, machine_info, ratios, run_bench
from .implementations import FAMILIES, impl_name

__all__ = ["SCHEMA", "SMALL_SCHEMA", "FAMILIES", "BenchConfig", "FULL", "QUICK", "run_bench", "ratios", "format_ratios",
           "machine_info", "count_bytes", "memory_passes", "pass_counts", "impl_name", "budgets", "small_tensors",
           "add_arguments", "run"]
