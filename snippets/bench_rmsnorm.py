"""Time RMSNorm against LayerNorm on your own machine, in a few seconds.

A norm is memory-bound, so we compare each implementation with a plain copy
of the same tensor (``x.clone()``: one read, one write), the fastest anything
that reads x and writes y can be. The implementations are timed in turn,
round after round, and we print medians. Your numbers depend on your CPU, its
memory and your torch build; the page's come from the machine it names.
"""

import statistics
import time

import torch
import torch.nn.functional as F

from normref.nn import rms_norm

torch.set_num_threads(2)
rows, d = 512, 4096
x = torch.randn(rows, d, generator=torch.Generator().manual_seed(0))
w = torch.ones(d)

impls = {
    "x.clone() (copy)": lambda: x.clone(),
    "F.layer_norm": lambda: F.layer_norm(x, (d,), w, None, 1e-6),
    "F.rms_norm": lambda: F.rms_norm(x, (d,), w, 1e-6),
    "normref rms_norm": lambda: rms_norm(x, w, 1e-6),
}
times = {name: [] for name in impls}
with torch.no_grad():
    for f in impls.values():  # warm-up: first calls allocate and fault in memory
        f()
    for _ in range(15):
        for name, f in impls.items():
            t0 = time.perf_counter()
            f()
            times[name].append(time.perf_counter() - t0)

copy = statistics.median(times["x.clone() (copy)"])
print(f"{rows} x {d} float32, {torch.get_num_threads()} threads, torch {torch.__version__}")
for name, ts in times.items():
    t = statistics.median(ts)
    print(f"{name:<18} {t * 1e3:6.2f} ms  {copy / t:5.0%} of the copy's bandwidth")
