"""Byte accounting: the bytes a norm must move at least, and the passes over memory an implementation makes.

A norm is memory-bound, so its yardstick is bytes per second against a copy.
:func:`count_bytes` is the least any implementation must move, term by term;
:func:`memory_passes` counts what an eager implementation actually moves, op by
op, under a dispatch mode (no timing).
"""

from __future__ import annotations

import torch

from .implementations import impls

__all__ = ["count_bytes", "memory_passes", "pass_counts"]


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
    for fam, norm, fn in impls(d, torch.ones(d), torch.zeros(d), 1e-6, {}):
        if fam in ("copy", "composed", "functional", "module"):
            out[(fam, norm)] = memory_passes(fn, d=d, norm=norm)
    return out
