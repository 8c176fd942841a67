"""Torch RMSNorm and LayerNorm that you can drop into a model.

Why not just call ``torch.nn.functional.rms_norm``? On CPU, torch 2.13 runs it
as a composite of several element-wise kernels, each a full pass over memory,
so it is about 3x slower than the fused ``F.layer_norm`` (see the performance
page). Our forward makes the memory traffic of a fused kernel without a
compiler: it walks the rows in cache-sized blocks, and for each block takes the
row norms (one read), then writes ``x * rstd * g`` while the block is still in
cache. The backward is the closed form, blocked the same way. The blocks are
shared among the CPU threads by plain Python threads (see ``_parallel_rows``
for why), so there is no compile step, at import or ever.

Small tensors are the exception. Up to ``SMALL_BYTES`` (a decode step, a
short sequence) the tensor sits in cache, so torch's extra passes cost little,
while our forward pays Python's per-operation overhead on a dozen small ops:
there, in inference (no gradient needed) and in float32/float64, ``rms_norm``
calls ``F.rms_norm`` itself, after one cheap finiteness check.
``normref.bench.small_tensors`` measures where the blocked forward starts to win.

LayerNorm already has a fused kernel in torch, so ours only validates input and
calls it.

``DyT`` and ``Derf`` are not norms: they are the element-wise maps that
"Transformers without Normalization" (arXiv 2503.10622) and "Stronger
Normalization-Free Transformers" (arXiv 2512.10938) put where a norm was.
They take no statistic over the row, so a token's output does not depend on
its other features.
"""

from __future__ import annotations

import math
import numbers
import os
import threading
from concurrent.futures import ThreadPoolExecutor

import torch
import torch.nn.functional as F

__all__ = ["rms_norm", "layer_norm", "RMSNorm", "LayerNorm", "DyT", "Derf"]

# Rows are processed in blocks of about this many bytes per thread, so that
# the second pass over a block (the scaling) reads from cache, not from DRAM.
BLOCK_BYTES = 4 << 20
# At most this many bytes of x, in inference and float32/64 on CPU, go to torch's
# own F.rms_norm (module docstring). Set it to -1 to always take the blocked path.
# `python -m normref bench --small` measures the crossover; on the project's
# 2-core machine the blocked forward began to win between 1 and 4 MiB
# (normref/results/small-cpu.json).
SMALL_BYTES = 1 << 20


_POOL: dict = {"size": 0, "executor": None}
_POOL_LOCK = threading.Lock()
# A forked child (a DataLoader worker, say) has none of the parent's threads: start afresh.
os.register_at_fork(after_in_child=lambda: _POOL.update(size=0, executor=None))


def _single_threaded_pool(n: int) -> ThreadPoolExecutor:
    """A pool of ``n`` threads whose torch ops run single-threaded, made once and reused.

    torch keeps its thread count per thread (OpenMP's), read on a thread's
    first op. Each pool thread reads it, then sets its own to 1; the caller's
    count (and the default for other threads) is put back once the pool is up.
    """
    with _POOL_LOCK:
        if _POOL["size"] < n:
            old = torch.get_num_threads()
            ex = ThreadPoolExecutor(n, thread_name_prefix="normref-rows")
            ready = threading.Barrier(n)  # n tasks that wait for each other need n threads

            def init():
                torch.get_num_threads()  # this thread's lazy init of torch's settings ...
                torch.set_num_threads(1)  # ... then one thread for its own ops, for good
                ready.wait()

            for f in [ex.submit(init) for _ in range(n)]:
                f.result()
            torch.set_num_threads(old)
            if _POOL["executor"] is not None:
                _POOL["executor"].shutdown(wait=False)
            _POOL.update(size=n, executor=ex)
        return _POOL["executor"]


def _parallel_rows(n_rows: int, rows: int, work) -> None:
    """Call ``work(lo, hi)`` on contiguous row ranges covering [0, n_rows), one per CPU thread.

    Each range is walked in blocks by single-threaded torch ops, on a thread
    of its own (torch releases the GIL inside an op). Why not torch's own
    intra-op threads? Then every op on every block is an OpenMP parallel
    region that ends in a barrier: a blocked norm runs hundreds of them, and
    on a busy machine each barrier can wait a whole scheduler tick for the
    other thread. Measured on a loaded 2-core machine, that made the blocked
    forward about 5x slower than this, where the threads meet once, at the end.
    """
    nt = min(torch.get_num_threads(), -(-n_rows // rows))
    if nt <= 1:
        with torch.no_grad():
            work(0, n_rows)
        return
    # Range boundaries on whole blocks, so every block but the last is full.
    cuts = [(n_rows * k // nt) // rows * rows for k in range(nt)] + [n_rows]

    def run(lo, hi):
        with torch.no_grad():  # grad mode is per thread; these ops must not be recorded
            work(lo, hi)

    pool = _single_threaded_pool(nt)
    futures = [pool.submit(run, cuts[k], cuts[k + 1]) for k in range(nt)]
    for f in futures:
        f.result()  # re-raises a worker's exception here


def _check_x(x, name: str = "x") -> None:
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(x).__name__}")
    if not x.is_floating_point():
        raise TypeError(f"{name} must have a floating-point dtype, got {x.dtype}")
    if x.dim() == 0:
        raise ValueError(f"{name} must have at least one dimension (the hidden dimension), got a scalar")
    if x.shape[-1] == 0:
        raise ValueError(f"{name} must have a non-empty last dimension, got shape {tuple(x.shape)}")


def _check_eps(eps) -> float:
    if isinstance(eps, bool) or not isinstance(eps, numbers.Real):
        raise TypeError(f"eps must be a real number > 0, got {type(eps).__name__}")
    if not (math.isfinite(eps) and eps > 0):
        raise ValueError(f"eps must be a finite number > 0, got {eps!r}")
    return float(eps)


def _check_param(p, d: int, name: str) -> None:
    if p is None:
        return
    if not isinstance(p, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor or None, got {type(p).__name__}")
    if not p.is_floating_point():
        raise TypeError(f"{name} must have a floating-point dtype, got {p.dtype}")
    if tuple(p.shape) != (d,):
        raise ValueError(f"{name} must have shape ({d},) to match the last dimension of x, got {tuple(p.shape)}")


def _rstd_rows(x2: torch.Tensor, eps: float, out: torch.Tensor) -> torch.Tensor:
    """1/RMS per row of a 2-d float tensor into ``out`` (rows, 1): rsqrt(‖x‖²/d + ε).

    Two small ops after the norm (one op per step would be five): on a block
    of a few MB, per-op overhead is not negligible next to the memory time.
    """
    n = torch.linalg.vector_norm(x2, dim=-1, keepdim=True)
    eps_t = torch.tensor(eps, dtype=out.dtype, device=out.device)
    return torch.addcmul(eps_t, n, n, value=1.0 / x2.shape[-1], out=out).rsqrt_()


class _RMSNormFn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, eps, check_finite):
        d = x.shape[-1]
        x2 = x.reshape(-1, d)
        compute = x2 if x2.dtype in (torch.float32, torch.float64) else None
        y2 = torch.empty_like(x2)
        rstd = torch.empty((x2.shape[0], 1), dtype=torch.float32 if compute is None else x2.dtype, device=x.device)
        w = None if weight is None else (weight if compute is not None else weight.float())
        rows = max(1, BLOCK_BYTES // (d * 4)) if x.device.type == "cpu" else x2.shape[0]

        def work(lo, hi):
            for i in range(lo, hi, rows):
                j = min(i + rows, hi)
                xs = x2[i:j]
                if compute is None:  # half / bfloat16: compute in float32, as HF's LlamaRMSNorm does
                    xs = xs.float()
                r = _rstd_rows(xs, eps, out=rstd[i:j])
                if compute is None:
                    ys = xs.mul_(r) if w is None else xs.mul_(r).mul_(w)
                    y2[i:j] = ys
                else:
                    ys = torch.mul(xs, r, out=y2[i:j])
                    if w is not None:
                        ys.mul_(w)

        if x.device.type == "cpu":
            _parallel_rows(x2.shape[0], rows, work)
        else:
            work(0, x2.shape[0])
        # A NaN anywhere in a row makes its rstd NaN; an inf (or an overflowing
        # square) makes it 0; otherwise it is at most 1/sqrt(eps). So one look at
        # the (rows, 1) vector's minimum suffices (amin propagates NaN, and NaN > 0
        # is false); isfinite() there would cost more than the rest of a small call.
        if check_finite and rstd.numel() and not float(rstd.amin()) > 0:
            raise ValueError("x contains NaN or inf (or values whose squares overflow its dtype)")
        ctx.save_for_backward(x, weight, rstd)
        return y2.view(x.shape)

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, gy):
        # y = x̂·w with x̂ = x·rstd.  dL/dx = rstd·(gŵ − x̂·mean(gŵ·x̂)), gŵ = gy·w;
        # dL/dw = Σ_rows gy·x̂.  Like the forward, walk the rows in cache-sized
        # blocks: x and gy are read from memory once and dL/dx written once;
        # the temporaries (t = gy·x, gŵ) live and die in cache. Written unblocked, the
        # same formula makes about a dozen full passes over memory.
        x, weight, rstd = ctx.saved_tensors
        d = x.shape[-1]
        cdt = rstd.dtype  # float32 for half/bfloat16 inputs, else x's dtype
        x2, g2 = x.reshape(-1, d), gy.reshape(-1, d)
        gx = torch.empty(x2.shape, dtype=x.dtype, device=x.device)
        w = None if weight is None else weight.to(cdt)
        need_gw = weight is not None and ctx.needs_input_grad[1]
        partial = []  # one dL/dw accumulator per thread, summed at the end
        # Three streams (x, gy, dL/dx) and two temporaries share the cache here.
        rows = max(1, BLOCK_BYTES // (2 * d * 4)) if x.device.type == "cpu" else x2.shape[0]

        def work(lo, hi):
            gweight = torch.zeros(d, dtype=cdt, device=x.device) if need_gw else None
            for i in range(lo, hi, rows):
                j = min(i + rows, hi)
                r = rstd[i:j]
                xs, gs = x2[i:j].to(cdt), g2[i:j].to(cdt)
                # With t = gy·x (no x̂ needed): mean(gŵ·x̂) = rstd·(t @ w)/d, and
                # dL/dw = Σ_rows rstd·t, a matrix-vector product.
                t = gs * xs
                if gweight is not None:
                    gweight.addmv_(t.mT, r.view(-1))
                s = t.sum(dim=-1, keepdim=True) if w is None else (t @ w).unsqueeze_(-1)
                c = s.mul_(r.square()).div_(-d)  # = −rstd²·(t @ w)/d, one number per row
                gw = gs if w is None else gs * w
                if cdt == x.dtype:
                    torch.addcmul(gw, xs, c, out=gx[i:j]).mul_(r)
                else:
                    gx[i:j] = torch.addcmul(gw, xs, c).mul_(r)
            partial.append(gweight)

        if x.device.type == "cpu":
            _parallel_rows(x2.shape[0], rows, work)
        else:
            work(0, x2.shape[0])
        gweight = torch.stack(partial).sum(0) if need_gw else None
        return gx.view(x.shape), None if gweight is None else gweight.to(weight.dtype), None, None


def rms_norm(x: torch.Tensor, weight: torch.Tensor | None = None, eps: float = 1e-6, *, check_finite: bool = True):
    """RMSNorm over the last dimension: ``x / sqrt(mean(x²) + eps) * weight``.

    Equals ``torch.nn.functional.rms_norm(x, (d,), weight, eps)`` to float
    rounding, with autograd, and is faster on CPU (module docstring).
    ``check_finite`` raises ValueError when a row holds NaN or inf; it costs
    nothing extra, since the row norms are computed anyway.
    """
    _check_x(x)
    _check_param(weight, x.shape[-1], "weight")
    eps = _check_eps(eps)
    if _small(x, weight):
        y = _small_rms_norm(x, weight, eps, check_finite)
        if y is not None:
            return y
    return _RMSNormFn.apply(x, weight, eps, check_finite)


def _small(x: torch.Tensor, weight) -> bool:
    """Whether ``rms_norm`` hands this call to torch's F.rms_norm (module docstring)."""
    if x.device.type != "cpu" or x.dtype not in (torch.float32, torch.float64):
        return False
    if x.numel() * x.element_size() > SMALL_BYTES:
        return False
    if weight is not None and (weight.dtype != x.dtype or weight.device != x.device):
        return False
    needs_grad = x.requires_grad or (weight is not None and weight.requires_grad)
    return not (needs_grad and torch.is_grad_enabled())


def _small_rms_norm(x, weight, eps: float, check_finite: bool):
    """F.rms_norm with the blocked path's finiteness check; None where only that path can tell."""
    if check_finite and x.numel():
        # The sum of squares of all of x, one BLAS dot (isfinite(x).all() is ~10x
        # slower on CPU). Finite, it bounds every row's, so no row holds a NaN or
        # inf or overflows. Otherwise the blocked path decides, row by row, and raises.
        flat = x.reshape(-1)
        if not math.isfinite(float(torch.dot(flat, flat))):
            return None
    return F.rms_norm(x, (x.shape[-1],), weight, eps)


def layer_norm(
    x: torch.Tensor,
    weight: torch.Tensor | None = None,
    bias: torch.Tensor | None = None,
    eps: float = 1e-5,
    *,
    check_finite: bool = True,
):
    """LayerNorm over the last dimension, through torch's fused kernel, with input checks."""
    _check_x(x)
    _check_param(weight, x.shape[-1], "weight")
    _check_param(bias, x.shape[-1], "bias")
    eps = _check_eps(eps)
    y = F.layer_norm(x, (x.shape[-1],), weight, bias, eps)
    # LayerNorm spreads a NaN or inf to its whole row (via the mean), so one column suffices.
    if check_finite and x.numel() and not torch.isfinite(y.reshape(-1, x.shape[-1])[:, 0]).all():
        raise ValueError("x contains NaN or inf (or values whose squares overflow its dtype)")
    return y


class RMSNorm(torch.nn.Module):
    """Drop-in RMSNorm layer: a learned gain (ones at init), no bias, no mean."""

    def __init__(self, dim: int, eps: float = 1e-6, elementwise_affine: bool = True, device=None, dtype=None):
        super().__init__()
        if isinstance(dim, bool) or not isinstance(dim, numbers.Integral) or dim <= 0:
            raise ValueError(f"dim must be a positive integer (the hidden size), got {dim!r}")
        self.dim, self.eps = int(dim), _check_eps(eps)
        self.weight = torch.nn.Parameter(torch.ones(dim, device=device, dtype=dtype)) if elementwise_affine else None

    def forward(self, x):
        if isinstance(x, torch.Tensor) and x.dim() and x.shape[-1] != self.dim:
            raise ValueError(f"x must have last dimension {self.dim}, got shape {tuple(x.shape)}")
        return rms_norm(x, self.weight, self.eps)

    def extra_repr(self):
        return f"{self.dim}, eps={self.eps}, elementwise_affine={self.weight is not None}"


class LayerNorm(torch.nn.Module):
    """Drop-in LayerNorm layer: gain γ (ones) and bias β (zeros) at init."""

    def __init__(self, dim: int, eps: float = 1e-5, elementwise_affine: bool = True, bias: bool = True, device=None, dtype=None):
        super().__init__()
        if isinstance(dim, bool) or not isinstance(dim, numbers.Integral) or dim <= 0:
            raise ValueError(f"dim must be a positive integer (the hidden size), got {dim!r}")
        self.dim, self.eps = int(dim), _check_eps(eps)
        kw = dict(device=device, dtype=dtype)
        self.weight = torch.nn.Parameter(torch.ones(dim, **kw)) if elementwise_affine else None
        self.bias = torch.nn.Parameter(torch.zeros(dim, **kw)) if elementwise_affine and bias else None

    def forward(self, x):
        if isinstance(x, torch.Tensor) and x.dim() and x.shape[-1] != self.dim:
            raise ValueError(f"x must have last dimension {self.dim}, got shape {tuple(x.shape)}")
        return layer_norm(x, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return f"{self.dim}, eps={self.eps}, elementwise_affine={self.weight is not None}"


def _check_scalar(v, name: str, positive: bool) -> float:
    """A finite real number (> 0 where ``positive``), as a float; else TypeError / ValueError naming it."""
    if isinstance(v, bool) or not isinstance(v, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(v).__name__}")
    if not math.isfinite(v) or (positive and v <= 0):
        raise ValueError(f"{name} must be a finite number{' > 0' if positive else ''}, got {v!r}")
    return float(v)


def _check_dim(dim) -> int:
    if isinstance(dim, bool) or not isinstance(dim, numbers.Integral) or dim <= 0:
        raise ValueError(f"dim must be a positive integer (the hidden size), got {dim!r}")
    return int(dim)


class DyT(torch.nn.Module):
    """Dynamic Tanh, γ ⊙ tanh(α·x) + β: the element-wise stand-in for a norm (arXiv 2503.10622).

    As in the official code (``jiachenzhu/DyT``, ``dynamic_tanh.py``): α is one
    learnable scalar per layer, initialized to ``alpha_init`` (0.5 there), γ
    ones and β zeros. Their LLaMA code drops β (``bias=False`` here) and uses
    smaller α0 for wider models; see docs-notes/R-references.md for the values.
    """

    def __init__(self, dim: int, alpha_init: float = 0.5, bias: bool = True, device=None, dtype=None):
        super().__init__()
        self.dim = _check_dim(dim)
        self.alpha_init = _check_scalar(alpha_init, "alpha_init", positive=True)
        if not isinstance(bias, bool):
            raise TypeError(f"bias must be True or False, got {bias!r}")
        kw = dict(device=device, dtype=dtype)
        self.alpha = torch.nn.Parameter(torch.full((1,), self.alpha_init, **kw))
        self.weight = torch.nn.Parameter(torch.ones(dim, **kw))
        self.bias = torch.nn.Parameter(torch.zeros(dim, **kw)) if bias else None

    def squash(self, x):
        """The element-wise map before the gain: tanh(α·x)."""
        return torch.tanh(self.alpha * x)

    def forward(self, x):
        _check_x(x)
        if x.shape[-1] != self.dim:
            raise ValueError(f"x must have last dimension {self.dim}, got shape {tuple(x.shape)}")
        y = self.squash(x) * self.weight
        return y if self.bias is None else y + self.bias

    def extra_repr(self):
        return f"{self.dim}, alpha_init={self.alpha_init}, bias={self.bias is not None}"


class Derf(DyT):
    """Dynamic erf, γ ⊙ erf(α·x + s) + β (arXiv 2512.10938).

    As in the official code (``zlab-princeton/Derf``, ``dynamic_erf.py``): α and
    the shift s are learnable scalars, initialized to 0.5 and 0. erf is the
    standard error function, erf(z) = 2Φ(√2·z) − 1: a Gaussian CDF rescaled to (−1, 1).
    """

    def __init__(self, dim: int, alpha_init: float = 0.5, shift_init: float = 0.0, bias: bool = True,
                 device=None, dtype=None):
        super().__init__(dim, alpha_init, bias, device=device, dtype=dtype)
        self.shift_init = _check_scalar(shift_init, "shift_init", positive=False)
        self.shift = torch.nn.Parameter(torch.full((1,), self.shift_init, device=device, dtype=dtype))

    def squash(self, x):
        return torch.erf(self.alpha * x + self.shift)

    def extra_repr(self):
        return f"{super().extra_repr()}, shift_init={self.shift_init}"
