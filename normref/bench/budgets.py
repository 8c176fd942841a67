"""The normref RMSNorm budgets (``make perf``) and the small-tensor scan behind ``normref.nn.SMALL_BYTES``.

Both time a few implementations interleaved in one process and report ratios
of medians, never absolute times alone.
"""

from __future__ import annotations

import statistics
import time

import torch

__all__ = ["SMALL_SCHEMA", "budgets", "small_tensors"]

SMALL_SCHEMA = "normref.bench.small/1"  # python -m normref bench --small (small_tensors)


def budgets(rows: int = 4096, d: int = 4096, repeats: int = 31, threads: int = 2, log=print) -> dict:
    """The normref RMSNorm budgets as ratios measured in one process.

    float32, ``threads`` CPU threads, rows × d; the implementations are
    interleaved and each ratio is of medians. Returns the numbers and whether
    each budget holds:
    - forward: torch.nn.RMSNorm / normref ≥ 2, normref / x.clone() ≤ 1.35;
    - agreement with torch.nn.RMSNorm within 1e-5 (max abs difference);
    - forward+backward: normref / torch.nn.RMSNorm ≤ 1;
    - gradcheck in float64.
    """
    import normref.nn as nnr

    old = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        g = torch.Generator().manual_seed(0)
        x = torch.randn(rows, d, generator=g)
        w = torch.rand(d, generator=g) + 0.5
        gy = torch.randn(rows, d, generator=g)
        ref = torch.nn.RMSNorm(d, eps=1e-6)
        with torch.no_grad():
            ref.weight.copy_(w)
        wp = torch.nn.Parameter(w.clone())
        xg = x.clone().requires_grad_(True)

        def fwd_ours():
            with torch.no_grad():
                return nnr.rms_norm(x, w, 1e-6)

        def fwd_ref():
            with torch.no_grad():
                return ref(x)

        def fb_ours():
            nnr.rms_norm(xg, wp, 1e-6).backward(gy)
            xg.grad = wp.grad = None

        def fb_ref():
            ref(xg).backward(gy)
            xg.grad = ref.weight.grad = None

        fns = {"copy": lambda: x.clone(), "ours": fwd_ours, "torch": fwd_ref, "ours_fb": fb_ours, "torch_fb": fb_ref}
        for f in fns.values():
            f(), f()
        ts = {k: [] for k in fns}
        for r in range(repeats):
            for k in list(fns)[r % len(fns):] + list(fns)[: r % len(fns)]:
                t0 = time.perf_counter()
                fns[k]()
                ts[k].append(time.perf_counter() - t0)
        med = {k: statistics.median(v) for k, v in ts.items()}
        max_diff = float((fwd_ours() - fwd_ref()).abs().max())
        x64 = torch.randn(3, 5, 16, dtype=torch.float64, generator=g, requires_grad=True)
        w64 = torch.randn(16, dtype=torch.float64, generator=g, requires_grad=True)
        gradcheck = bool(torch.autograd.gradcheck(lambda a, c: nnr.rms_norm(a, c, 1e-6), (x64, w64)))
    finally:
        torch.set_num_threads(old)
    out = {
        "shape": [rows, d], "threads": threads, "repeats": repeats,
        "median_ms": {k: v * 1e3 for k, v in med.items()},
        "speedup_vs_torch_nn": med["torch"] / med["ours"],
        "over_copy": med["ours"] / med["copy"],
        "max_abs_diff": max_diff,
        "fb_over_torch_nn": med["ours_fb"] / med["torch_fb"],
        "gradcheck": gradcheck,
    }
    out["holds"] = {
        "speedup_vs_torch_nn >= 2": out["speedup_vs_torch_nn"] >= 2,
        "over_copy <= 1.35": out["over_copy"] <= 1.35,
        "max_abs_diff <= 1e-5": max_diff <= 1e-5,
        "fb_over_torch_nn <= 1": out["fb_over_torch_nn"] <= 1,
        "gradcheck": gradcheck,
    }
    return out


def small_tensors(d: int = 4096, rows=(1, 16, 64, 256, 512, 1024, 2048, 4096), threads: int = 2,
                  seconds: float = 0.4, log=print) -> dict:
    """Forward times of normref's RMSNorm against torch.nn.RMSNorm from one row to 64 MiB.

    Inference (no gradient), float32, ``threads`` CPU threads, d fixed, rows
    growing. For each size three things are timed, interleaved, each round
    calling each of them enough times to fill about ``seconds`` / 20: torch.nn.RMSNorm,
    normref as it dispatches (torch's F.rms_norm up to ``normref.nn.SMALL_BYTES``)
    and normref's blocked forward forced at every size. The ratios show where
    the blocked forward starts to win, which is what sets SMALL_BYTES.
    """
    import normref.nn as nnr

    if isinstance(d, bool) or not isinstance(d, int) or d <= 0:
        raise ValueError(f"d must be a positive integer, got {d!r}")
    if not rows or any(isinstance(r, bool) or not isinstance(r, int) or r <= 0 for r in rows):
        raise ValueError(f"rows must be a non-empty sequence of positive integers, got {rows!r}")
    old_threads, old_small = torch.get_num_threads(), nnr.SMALL_BYTES
    torch.set_num_threads(threads)
    out = []
    try:
        g = torch.Generator().manual_seed(0)
        w = torch.rand(d, generator=g) + 0.5
        ref = torch.nn.RMSNorm(d, eps=1e-6)
        with torch.no_grad():
            ref.weight.copy_(w)
        for n in rows:
            x = torch.randn(n, d, generator=g)

            def blocked():
                nnr.SMALL_BYTES = -1
                try:
                    return nnr.rms_norm(x, w, 1e-6)
                finally:
                    nnr.SMALL_BYTES = old_small

            fns = {"torch": lambda: ref(x), "normref": lambda: nnr.rms_norm(x, w, 1e-6), "blocked": blocked}
            with torch.no_grad():
                t0 = time.perf_counter()
                for f in fns.values():
                    f()
                per_call = max((time.perf_counter() - t0) / len(fns), 1e-6)
                calls = max(1, int(seconds / 20 / per_call))
                ts = {k: [] for k in fns}
                for r in range(20):
                    for k in list(fns)[r % 3:] + list(fns)[: r % 3]:
                        t0 = time.perf_counter()
                        for _ in range(calls):
                            fns[k]()
                        ts[k].append((time.perf_counter() - t0) / calls)
            med = {k: statistics.median(v) for k, v in ts.items()}
            row = {"rows": n, "d": d, "mib": n * d * 4 / 2**20, "small_path": n * d * 4 <= old_small,
                   "median_us": {k: v * 1e6 for k, v in med.items()},
                   "torch_over_normref": med["torch"] / med["normref"],
                   "torch_over_blocked": med["torch"] / med["blocked"]}
            out.append(row)
            log(f"  {n:5d} x {d}  {row['mib']:8.3f} MiB  torch.nn.RMSNorm {row['median_us']['torch']:9.1f} us  "
                f"normref {row['median_us']['normref']:9.1f} us ({'F.rms_norm' if row['small_path'] else 'blocked'})  "
                f"blocked {row['median_us']['blocked']:9.1f} us  torch/normref {row['torch_over_normref']:5.2f}  "
                f"torch/blocked {row['torch_over_blocked']:5.2f}")
    finally:
        torch.set_num_threads(old_threads)
        nnr.SMALL_BYTES = old_small
    return {"threads": threads, "small_bytes": old_small, "sizes": out}
