"""``python -m normref bench``: the full benchmark, ``--quick``, or ``--small`` (the small-tensor scan)."""

from __future__ import annotations

import json
import time
from dataclasses import asdict
from pathlib import Path

import torch

from ..usage import UsageError, positive_int, positive_ints
from .budgets import SMALL_SCHEMA, small_tensors
from .harness import FULL, QUICK, BenchConfig, format_ratios, machine_info, run_bench

__all__ = ["add_arguments", "run"]


def add_arguments(p) -> None:
    p.add_argument("--quick", action="store_true", help="tiny shapes, few repeats, no compile: seconds (for tests)")
    p.add_argument("--json", type=Path, metavar="PATH", help="write the report as JSON to PATH")
    p.add_argument("--device", action="append", choices=("cpu", "cuda"), help="device (repeatable; default: cpu, and cuda if present)")
    p.add_argument("--dtype", action="append", choices=("float32", "bfloat16"), help="dtype (repeatable; default: both)")
    p.add_argument("--dims", type=positive_ints, help="comma-separated d values")
    p.add_argument("--total", type=positive_int, help="elements per tensor (rows = total / d)")
    p.add_argument("--repeats", type=positive_int, help="timed rounds per shape")
    p.add_argument("--threads", type=positive_int, help="CPU threads (default 2, the budgets' setting)")
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
    if cfg.total < max(cfg.dims) or any(cfg.total % d for d in cfg.dims):
        raise UsageError(f"--total: expected a multiple of every d in --dims {','.join(map(str, cfg.dims))}, "
                         f"got {cfg.total}")
    if args.device and "cuda" in args.device and not torch.cuda.is_available():
        raise UsageError("--device cuda: torch sees no CUDA device; expected cpu")
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
