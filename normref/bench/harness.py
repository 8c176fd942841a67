"""The timing harness: configurations, the machine's description, interleaved timing and the report.

Within one shape every implementation is timed in turn, round after round
(interleaved), so a burst of load from another process hits all of them alike;
the report gives the median with the quartiles, and bytes per second against
the copy (:mod:`normref.bench.accounting`).
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import os
import platform
import shutil
import statistics
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import torch
import torch.nn.functional as F

from . import implementations
from .accounting import count_bytes
from .implementations import FAMILIES, composed_ln, composed_rms, impl_name

__all__ = ["SCHEMA", "BenchConfig", "FULL", "QUICK", "machine_info", "run_bench", "ratios", "format_ratios"]

SCHEMA = "normref.bench/1"


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


# ---------------------------------------------------------------- machine


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
    impls = implementations.impls(d, w, b, cfg.eps, compiled)

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
                    compiled = {"rms": torch.compile(composed_rms, dynamic=True),
                                "ln": torch.compile(composed_ln, dynamic=True)}
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
        "normref_nn_sha256": hashlib.sha256(Path(__file__).parent.parent.joinpath("nn.py").read_bytes()).hexdigest(),
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
