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
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
import platform
import shutil
import statistics
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable

import torch
import torch.nn.functional as F

__all__ = ["BenchConfig", "FULL", "QUICK", "run_bench", "machine_info", "count_bytes", "budgets", "small_tensors", "add_arguments", "run"]

SCHEMA = "normref.bench/1"
SMALL_SCHEMA = "normref.bench.small/1"  # python -m normref bench --small (small_tensors)
FAMILIES = ("copy", "composed", "functional", "module", "compiled", "normref")


@dataclass(frozen=True)
class BenchConfig:
    total: int = 4096 * 4096  # elements per tensor, the same for every shape
    dims: tuple = (256, 512, 1024, 2048, 4096, 8192, 16384)
    dtypes: tuple = ("float32", "bfloat16")
    modes: tuple = ("forward", "forward+backward")
    warmup: int = 3
    repeats: int = 15
    threads: int | None = 2  # CPU intra-op threads; None leaves torch's default
    compile: bool = True  # torch.compile'd versions, where the machine can compile
    eps: float = 1e-6
    seed: int = 0


FULL = BenchConfig()
QUICK = BenchConfig(total=64 * 1024, dims=(256, 1024), warmup=1, repeats=3, compile=False)


# ---------------------------------------------------------------- the implementations


def _composed_rms(x, w, b, eps):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w


def _composed_ln(x, w, b, eps):
    mu = x.mean(-1, keepdim=True)
    xc = x - mu
    return xc * torch.rsqrt(xc.pow(2).mean(-1, keepdim=True) + eps) * w + b


def _impls(d: int, w, b, eps: float, compiled: dict) -> list[tuple[str, str, Callable]]:
    """(family, norm, fn(x, w, b)) for every implementation. norm is rms, ln or copy."""
    import normref.nn as nnr

    # The modules share this shape's parameters, so every implementation computes the same thing.
    def param(p):
        return p if isinstance(p, torch.nn.Parameter) else torch.nn.Parameter(p, requires_grad=False)

    rms_mod = torch.nn.RMSNorm(d, eps=eps, device=w.device, dtype=w.dtype)
    ln_mod = torch.nn.LayerNorm(d, eps=eps, device=w.device, dtype=w.dtype)
    rms_mod.weight, ln_mod.weight, ln_mod.bias = param(w), param(w), param(b)

    out = [
        ("copy", "copy", lambda x, w, b: x.clone()),
        ("composed", "rms", lambda x, w, b: _composed_rms(x, w, b, eps)),
        ("composed", "ln", lambda x, w, b: _composed_ln(x, w, b, eps)),
        ("functional", "rms", lambda x, w, b: F.rms_norm(x, (d,), w, eps)),
        ("functional", "ln", lambda x, w, b: F.layer_norm(x, (d,), w, b, eps)),
        ("module", "rms", lambda x, w, b: rms_mod(x)),
        ("module", "ln", lambda x, w, b: ln_mod(x)),
        ("normref", "rms", lambda x, w, b: nnr.rms_norm(x, w, eps)),
        ("normref", "ln", lambda x, w, b: nnr.layer_norm(x, w, b, eps)),
    ]
    if compiled:
        out += [
            ("compiled", "rms", lambda x, w, b: compiled["rms"](x, w, b, eps)),
            ("compiled", "ln", lambda x, w, b: compiled["ln"](x, w, b, eps)),
        ]
    return out


def impl_name(family: str, norm: str) -> str:
    return {
        ("copy", "copy"): "x.clone()",
        ("composed", "rms"): "composed RMSNorm", ("composed", "ln"): "composed LayerNorm",
        ("functional", "rms"): "F.rms_norm", ("functional", "ln"): "F.layer_norm",
        ("module", "rms"): "torch.nn.RMSNorm", ("module", "ln"): "torch.nn.LayerNorm",
        ("compiled", "rms"): "compiled RMSNorm", ("compiled", "ln"): "compiled LayerNorm",
        ("normref", "rms"): "normref rms_norm", ("normref", "ln"): "normref layer_norm",
    }[(family, norm)]


# ---------------------------------------------------------------- bytes and machine


def count_bytes(norm: str, mode: str, n: int, d: int, itemsize: int, param_itemsize: int | None = None) -> dict:
    """The bytes an implementation must move at least, term by term.

    n elements of x (rows × d), parameters of length d. A copy reads x and
    writes y. A norm forward also reads its parameters (γ; LayerNorm also β);
    its backward reads x and dy, writes dx, reads the parameters and writes
    their gradients.
    """
    p = itemsize if param_itemsize is None else param_itemsize
    nparams = {"copy": 0, "rms": 1, "ln": 2}[norm]
    if mode == "forward":
        terms = {"read_x": n * itemsize, "write_y": n * itemsize, "read_params": nparams * d * p}
    elif mode == "forward+backward":
        # The forward's bytes, plus the backward's (which reads x again).
        terms = {"read_x": 2 * n * itemsize, "write_y": n * itemsize, "read_dy": n * itemsize,
                 "write_dx": n * itemsize, "read_params": 2 * nparams * d * p, "write_param_grads": nparams * d * p}
        if norm == "copy":  # the copy's "backward" is another copy: dy in, dx out
            terms = {"read_x": n * itemsize, "write_y": n * itemsize, "read_dy": n * itemsize, "write_dx": n * itemsize}
    else:
        raise ValueError(f"mode must be 'forward' or 'forward+backward', got {mode!r}")
    terms["total"] = sum(terms.values())
    return terms


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine_info(threads: int | None = None) -> dict:
    info = {
        "cpu_model": _cpu_model(),
        "cpu_cores": os.cpu_count(),
        "cpu_cores_usable": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
        "torch_threads": threads if threads is not None else torch.get_num_threads(),
        "cpu_capability": torch.backends.cpu.get_cpu_capability(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "torch": torch.__version__,
        "date": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "cuda": None,
    }
    if torch.cuda.is_available():
        info["cuda"] = {"device": torch.cuda.get_device_name(0), "version": torch.version.cuda}
    try:
        # Other processes share the cores: say how busy the machine was.
        info["load_average"] = list(os.getloadavg())
    except OSError:
        pass
    return info


# ---------------------------------------------------------------- timing


def _sync(device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _summary(ts: list[float]) -> dict:
    q = statistics.quantiles(ts, n=4, method="inclusive") if len(ts) > 1 else [ts[0]] * 3
    return {"median": statistics.median(ts), "q1": q[0], "q3": q[2], "min": min(ts), "max": max(ts), "n": len(ts)}


def _can_compile(device) -> tuple[bool, str]:
    """Whether torch.compile works here; (ok, why not)."""
    if device.type == "cpu" and not (shutil.which(os.environ.get("CXX", "g++")) or shutil.which("c++")):
        return False, "no C++ compiler found (torch.compile's CPU backend needs one)"
    try:
        f = torch.compile(lambda a: a * 2 + 1, dynamic=False)
        f(torch.ones(8, device=device))
    except Exception as e:  # inductor raises many kinds
        return False, f"torch.compile failed: {type(e).__name__}: {str(e).splitlines()[0][:200] if str(e) else ''}"
    return True, ""


def _dtype_ok(dtype, device) -> bool:
    try:
        x = torch.ones(4, 8, dtype=dtype, device=device)
        F.rms_norm(x, (8,), None, 1e-6)
        F.layer_norm(x, (8,), None, None, 1e-6)
        return True
    except (RuntimeError, TypeError):
        return False


def _bench_shape(device, dtype, d: int, mode: str, cfg: BenchConfig, compiled: dict, log) -> list[dict]:
    rows = cfg.total // d
    g = torch.Generator(device="cpu").manual_seed(cfg.seed)
    x = torch.randn(rows, d, generator=g).to(device=device, dtype=dtype)
    w = (torch.rand(d, generator=g) + 0.5).to(device=device, dtype=dtype)
    b = (torch.randn(d, generator=g) * 0.1).to(device=device, dtype=dtype)
    backward = mode == "forward+backward"
    if backward:
        gy = torch.randn(rows, d, generator=g).to(device=device, dtype=dtype)
        x.requires_grad_(True)
        w, b = torch.nn.Parameter(w), torch.nn.Parameter(b)
    impls = _impls(d, w, b, cfg.eps, compiled)

    def call(fn):
        if not backward:
            with torch.no_grad():
                return fn(x, w, b)
        if fn is impls[0][2]:  # the copy: forward clone, backward clone (what autograd of a copy costs)
            return x.detach().clone(), gy.clone()
        y = fn(x, w, b)
        y.backward(gy)
        x.grad = w.grad = b.grad = None
        return y

    first = {}
    for k, (_, _, fn) in enumerate(impls):
        _sync(device)
        t0 = time.perf_counter()
        call(fn)
        _sync(device)
        first[k] = time.perf_counter() - t0  # includes a compile, if any
        for _ in range(cfg.warmup - 1):
            call(fn)
    times = {k: [] for k in range(len(impls))}
    order = list(range(len(impls)))
    for r in range(cfg.repeats):
        # Rotate the order each round, so no implementation always runs right after the same one.
        for k in order[r % len(order):] + order[: r % len(order)]:
            fn = impls[k][2]
            _sync(device)
            t0 = time.perf_counter()
            call(fn)
            _sync(device)
            times[k].append(time.perf_counter() - t0)

    itemsize = torch.empty((), dtype=dtype).element_size()
    out = []
    for k, (family, norm, _) in enumerate(impls):
        s = _summary(times[k])
        nbytes = count_bytes(norm, mode, rows * d, d, itemsize)
        out.append({
            "device": device.type, "dtype": str(dtype).removeprefix("torch."), "mode": mode,
            "family": family, "norm": norm, "impl": impl_name(family, norm),
            "rows": rows, "d": d, "n_elements": rows * d, "itemsize": itemsize,
            "bytes": nbytes, "time_s": s, "first_call_s": first[k],
            "gbps": nbytes["total"] / s["median"] / 1e9,
        })
    copy_gbps = out[0]["gbps"]
    for r_ in out:
        r_["copy_fraction"] = r_["gbps"] / copy_gbps
    log(_format_rows(out))
    return out


# ---------------------------------------------------------------- passes over memory


_NO_DATA = {"view", "_unsafe_view", "reshape", "slice", "select", "expand", "as_strided", "unsqueeze", "squeeze",
            "t", "transpose", "permute", "detach", "alias", "empty", "empty_like", "empty_strided",
            "_local_scalar_dense"}


def memory_passes(fn, rows: int = 64, d: int = 256, norm: str = "rms") -> dict:
    """Count the full passes an implementation makes over x-sized tensors.

    Runs ``fn(x, w, b)`` once under a dispatch mode that sees every aten op
    torch executes, and counts each x-sized tensor an op reads or writes: one
    read or one write of the whole tensor is one pass. Per-row vectors (means,
    rstd) and parameters are too small to count. A fused kernel makes two
    passes (read x, write y), like a copy; at best an implementation runs at
    2 / passes of the copy bandwidth.
    """
    from torch.utils._python_dispatch import TorchDispatchMode
    from torch.utils._pytree import tree_flatten

    n = rows * d
    log = []

    class _Count(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            if func.__name__.split(".")[0] in _NO_DATA:
                return out  # views and allocations move no data
            big = lambda ts: sum(1 for t in tree_flatten(ts)[0] if isinstance(t, torch.Tensor) and t.numel() == n)
            log.append((func.__name__, big((args, kwargs)), big(out)))
            return out

    g = torch.Generator().manual_seed(0)
    x = torch.randn(rows, d, generator=g)
    w, b = torch.ones(d), torch.zeros(d)
    with torch.no_grad(), _Count():
        fn(x, w, b)
    reads, writes = sum(r for _, r, _ in log), sum(wr for _, _, wr in log)
    return {"ops": [name for name, _, _ in log], "reads": reads, "writes": writes, "passes": reads + writes}


def pass_counts(d: int = 256) -> dict:
    """{(family, norm): memory_passes} for torch's eager implementations (no compile, no timing).

    normref's RMSNorm is left out on purpose: it reads each block twice, but
    the second time from cache, which this count cannot see.
    """
    out = {}
    for fam, norm, fn in _impls(d, torch.ones(d), torch.zeros(d), 1e-6, {}):
        if fam in ("copy", "composed", "functional", "module"):
            out[(fam, norm)] = memory_passes(fn, d=d, norm=norm)
    return out


# ---------------------------------------------------------------- the run


def run_bench(cfg: BenchConfig = FULL, devices=None, log=print) -> dict:
    """Time every implementation on every shape; return the JSON-able report."""
    if cfg.total < max(cfg.dims) or any(cfg.total % d for d in cfg.dims):
        raise ValueError(f"total must be a multiple of every d in dims, got total={cfg.total}, dims={cfg.dims}")
    if cfg.repeats < 1 or cfg.warmup < 1:
        raise ValueError(f"repeats and warmup must be >= 1, got repeats={cfg.repeats}, warmup={cfg.warmup}")
    old_threads = torch.get_num_threads()
    if cfg.threads is not None:
        torch.set_num_threads(cfg.threads)
    machine = machine_info(cfg.threads)  # at the start: the date and load average the run began with
    notes = []
    compile_probe_s = {}  # device -> seconds to compile and run a tiny function (toolchain start-up)
    try:
        if devices is None:
            devices = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
        results = []
        for dev in map(torch.device, devices):
            compiled = {}
            if cfg.compile:
                # A fresh inductor cache, so that first_call_s shows what a first compile costs
                # rather than a hit in the cache of an earlier run.
                os.environ["TORCHINDUCTOR_CACHE_DIR"] = tempfile.mkdtemp(prefix="normref-bench-inductor-")
                t0 = time.perf_counter()
                ok, why = _can_compile(dev)
                compile_probe_s[dev.type] = time.perf_counter() - t0
                if ok:
                    # dynamic=True: one compile serves every shape (a static compile per shape
                    # would cost tens of seconds each on a small CPU).
                    compiled = {"rms": torch.compile(_composed_rms, dynamic=True),
                                "ln": torch.compile(_composed_ln, dynamic=True)}
                else:
                    notes.append(f"{dev.type}: compiled versions skipped: {why}")
            else:
                notes.append(f"{dev.type}: compiled versions skipped: not requested (quick mode or --no-compile)")
            for dt_name in cfg.dtypes:
                dtype = getattr(torch, dt_name)
                if not _dtype_ok(dtype, dev):
                    notes.append(f"{dev.type}: {dt_name} skipped: not supported by the norms on this device")
                    continue
                for mode in cfg.modes:
                    if mode == "forward+backward" and dt_name != "float32":
                        continue  # training-step timings in float32 only: half the run time
                    for d in cfg.dims:
                        log(f"[{dev.type} {dt_name} {mode}] {cfg.total // d} x {d}")
                        results.extend(_bench_shape(dev, dtype, d, mode, cfg, compiled, log))
        for dev in {r["device"] for r in results}:
            if dev == "cpu" and "compiled" in {r["family"] for r in results if r["device"] == dev}:
                notes.append("cpu: compiled versions use torch.compile(dynamic=True); first_call_s of the first "
                             "shape includes the one-off compile")
    finally:
        torch.set_num_threads(old_threads)
    report = {
        "schema": SCHEMA,
        "machine": machine,
        "config": asdict(cfg),
        "notes": notes,
        "bytes_counted": "read x + write y + read parameters (forward); forward+backward adds read x, read dy, "
                         "write dx, read parameters, write parameter gradients. The copy reads x and writes y "
                         "(twice for forward+backward).",
        "compile_probe_s": compile_probe_s,
        # Which normref RMSNorm was timed (its source changes what the normref rows mean).
        "normref_nn_sha256": hashlib.sha256(Path(__file__).with_name("nn.py").read_bytes()).hexdigest(),
        "results": results,
        "ratios": ratios(results),
    }
    return report


def ratios(results: list[dict]) -> list[dict]:
    """RMSNorm time / LayerNorm time, per implementation family and shape (below 1: RMSNorm faster)."""
    by = {}
    for r in results:
        by[(r["device"], r["dtype"], r["mode"], r["d"], r["family"], r["norm"])] = r
    out = []
    for (dev, dt, mode, d, fam, norm), r in sorted(by.items()):
        if norm != "rms" or (dev, dt, mode, d, fam, "ln") not in by:
            continue
        ln = by[(dev, dt, mode, d, fam, "ln")]
        out.append({"device": dev, "dtype": dt, "mode": mode, "d": d, "rows": r["rows"], "family": fam,
                    "rms_over_ln": r["time_s"]["median"] / ln["time_s"]["median"]})
    return out


def _format_rows(rows: list[dict]) -> str:
    lines = [f"  {'implementation':<20} {'median ms':>10} {'q1–q3 ms':>15} {'GB/s':>7} {'of copy':>8}"]
    for r in rows:
        t = r["time_s"]
        lines.append(f"  {r['impl']:<20} {t['median'] * 1e3:>10.2f} {t['q1'] * 1e3:>7.2f}–{t['q3'] * 1e3:<7.2f} "
                     f"{r['gbps']:>7.2f} {r['copy_fraction'] * 100:>7.0f}%")
    return "\n".join(lines)


def format_ratios(report: dict) -> str:
    rs = report["ratios"]
    fams = [f for f in FAMILIES if any(r["family"] == f for r in rs)]
    lines = ["RMSNorm time / LayerNorm time (below 1: RMSNorm is faster)"]
    keys = sorted({(r["device"], r["dtype"], r["mode"]) for r in rs})
    for dev, dt, mode in keys:
        lines.append(f"[{dev} {dt} {mode}]")
        lines.append(f"  {'d':>6} " + " ".join(f"{f:>11}" for f in fams))
        for d in sorted({r["d"] for r in rs if (r["device"], r["dtype"], r["mode"]) == (dev, dt, mode)}):
            vals = {r["family"]: r["rms_over_ln"] for r in rs if (r["device"], r["dtype"], r["mode"], r["d"]) == (dev, dt, mode, d)}
            lines.append(f"  {d:>6} " + " ".join(f"{vals[f]:>11.2f}" if f in vals else f"{'—':>11}" for f in fams))
    return "\n".join(lines)


# ---------------------------------------------------------------- the RMSNorm budgets


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


# ---------------------------------------------------------------- command line


def add_arguments(p) -> None:
    p.add_argument("--quick", action="store_true", help="tiny shapes, few repeats, no compile: seconds (for tests)")
    p.add_argument("--json", type=Path, metavar="PATH", help="write the report as JSON to PATH")
    p.add_argument("--device", action="append", choices=("cpu", "cuda"), help="device (repeatable; default: cpu, and cuda if present)")
    p.add_argument("--dtype", action="append", choices=("float32", "bfloat16"), help="dtype (repeatable; default: both)")
    p.add_argument("--dims", type=lambda s: tuple(int(v) for v in s.split(",")), help="comma-separated d values")
    p.add_argument("--total", type=int, help="elements per tensor (rows = total / d)")
    p.add_argument("--repeats", type=int, help="timed rounds per shape")
    p.add_argument("--threads", type=int, help="CPU threads (default 2, the budgets' setting)")
    p.add_argument("--forward-only", action="store_true", help="skip the forward+backward timings")
    p.add_argument("--no-compile", action="store_true", help="skip torch.compile'd versions")
    p.add_argument("--small", action="store_true",
                   help="instead: normref's RMSNorm against torch.nn.RMSNorm from one row up (small_tensors), "
                        "for d in --dims (default 1024,4096); about ten seconds")


def run(args) -> int:
    if args.small:
        return _run_small(args)
    cfg = QUICK if args.quick else FULL
    over = {}
    for k in ("dims", "total", "repeats", "threads"):
        if getattr(args, k) is not None:
            over[k] = getattr(args, k)
    if args.dtype:
        over["dtypes"] = tuple(args.dtype)
    if args.forward_only:
        over["modes"] = ("forward",)
    if args.no_compile:
        over["compile"] = False
    cfg = BenchConfig(**{**asdict(cfg), **over})
    if args.device and "cuda" in args.device and not torch.cuda.is_available():
        raise SystemExit("error: --device cuda given, but torch sees no CUDA device")
    t0 = time.perf_counter()
    report = run_bench(cfg, devices=args.device)
    print()
    print(format_ratios(report))
    for n in report["notes"]:
        print(f"note: {n}")
    return _finish(report, args, t0)


def _run_small(args) -> int:
    import normref.nn as nnr

    dims = args.dims or (1024, 4096)
    threads = args.threads or 2
    t0 = time.perf_counter()
    report = {"schema": SMALL_SCHEMA, "machine": machine_info(threads), "small_bytes": nnr.SMALL_BYTES, "scans": []}
    for d in dims:
        rows = (1, 4, 16) if args.quick else tuple(r for r in (1, 16, 64, 256, 1024, 4096, 16384) if r * d <= 4096 * 4096)
        print(f"[cpu float32 forward, inference] d = {d}")
        report["scans"].append(small_tensors(d=d, rows=rows, threads=threads, seconds=0.05 if args.quick else 0.4))
    print(f"normref hands tensors of at most {nnr.SMALL_BYTES / 2**20:g} MiB to F.rms_norm.")
    return _finish(report, args, t0)


def _finish(report: dict, args, t0: float) -> int:
    """Both commands end alike: the machine line, then the JSON where --json asks for it."""
    m = report["machine"]
    print(f"machine: {m['cpu_model']}, {m['cpu_cores']} cores, {m['torch_threads']} threads, torch {m['torch']}, "
          f"{m['date']}; {time.perf_counter() - t0:.0f} s")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {args.json}")
    return 0
