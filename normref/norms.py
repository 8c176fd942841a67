"""The readable reference: RMSNorm and LayerNorm on numpy arrays.

Both normalize over the last axis, one token (one row) at a time. They are
written to be read next to their formulas; the fast torch versions that you
can drop into a model live in :mod:`normref.nn`.

``dyt`` and ``derf`` are the element-wise maps that replace a norm in
"Transformers without Normalization" and its successor: no row statistic at all.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

__all__ = ["rms_norm", "layer_norm", "dyt", "derf", "check_array", "check_eps", "check_param"]


def check_array(x, name: str = "x") -> np.ndarray:
    """Return ``x`` as a float array, or raise a clear error.

    Accepts anything ``np.asarray`` takes. Raises TypeError for integer, bool,
    complex or object data, ValueError for a 0-d array, an empty last axis or
    NaN/inf values. Nothing is modified.
    """
    arr = np.asarray(x)
    if arr.dtype == object or not np.issubdtype(arr.dtype, np.floating):
        raise TypeError(
            f"{name} must be a real floating-point array (float16/32/64), "
            f"got dtype {arr.dtype}; convert with np.asarray({name}, dtype=float)"
        )
    if arr.ndim == 0:
        raise ValueError(f"{name} must have at least one dimension (the hidden dimension), got a scalar")
    if arr.shape[-1] == 0:
        raise ValueError(f"{name} must have a non-empty last dimension, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} contains NaN or inf; the norm of such a vector is undefined")
    return arr


def check_eps(eps) -> float:
    """Return ``eps`` as a float if it is a finite number > 0, else raise."""
    if isinstance(eps, bool) or not isinstance(eps, numbers.Real):
        raise TypeError(f"eps must be a real number > 0, got {type(eps).__name__}")
    if not (np.isfinite(eps) and eps > 0):
        raise ValueError(f"eps must be a finite number > 0, got {eps!r}")
    return float(eps)


def check_param(p, d: int, name: str) -> np.ndarray | None:
    """Validate a per-feature parameter (gain or bias): None, or shape (d,)."""
    if p is None:
        return None
    p = check_array(p, name)
    if p.shape != (d,):
        raise ValueError(f"{name} must have shape ({d},) to match the last dimension of x, got {p.shape}")
    return p


def rms_norm(x, gain=None, eps: float = 1e-6) -> np.ndarray:
    r"""RMSNorm over the last axis (Zhang & Sennrich 2019, eq. 4).

    .. math::

        \mathrm{RMS}(x) = \sqrt{\tfrac{1}{d}\textstyle\sum_i x_i^2 + \varepsilon},
        \qquad y_i = \frac{x_i}{\mathrm{RMS}(x)}\, g_i

    ε sits inside the square root, as in PyTorch and Hugging Face (the paper's
    own code adds it outside). Without a gain, every output row has RMS 1 and
    L2 norm √d (up to ε). No mean is subtracted and there is no bias.
    """
    x = check_array(x, "x")
    gain = check_param(gain, x.shape[-1], "gain")
    eps = check_eps(eps)
    rms = np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps)
    y = x / rms
    return y if gain is None else y * gain


def layer_norm(x, gain=None, bias=None, eps: float = 1e-5) -> np.ndarray:
    r"""LayerNorm over the last axis (Ba et al. 2016), the 2017 Transformer's norm.

    .. math::

        \mu = \tfrac{1}{d}\textstyle\sum_i x_i,\quad
        \sigma^2 = \tfrac{1}{d}\textstyle\sum_i (x_i-\mu)^2,\quad
        y_i = \frac{x_i-\mu}{\sqrt{\sigma^2+\varepsilon}}\,\gamma_i + \beta_i

    It is RMSNorm applied to the centred vector x − μ, plus a bias β.
    """
    x = check_array(x, "x")
    gain = check_param(gain, x.shape[-1], "gain")
    bias = check_param(bias, x.shape[-1], "bias")
    eps = check_eps(eps)
    mu = np.mean(x, axis=-1, keepdims=True)
    var = np.mean((x - mu) ** 2, axis=-1, keepdims=True)
    y = (x - mu) / np.sqrt(var + eps)
    if gain is not None:
        y = y * gain
    return y if bias is None else y + bias


def _scalar(v, name: str, positive: bool) -> float:
    if isinstance(v, bool) or not isinstance(v, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(v).__name__}")
    if not np.isfinite(v) or (positive and v <= 0):
        raise ValueError(f"{name} must be a finite number{' > 0' if positive else ''}, got {v!r}")
    return float(v)


def dyt(x, alpha: float = 0.5, gain=None, bias=None) -> np.ndarray:
    r"""Dynamic Tanh (Zhu et al. 2025, arXiv 2503.10622): :math:`y_i = \gamma_i \tanh(\alpha x_i) + \beta_i`.

    α is one scalar for the whole layer; each element is mapped on its own, so
    unlike a norm the output of x_i does not depend on the other features.
    """
    x = check_array(x, "x")
    alpha = _scalar(alpha, "alpha", positive=True)
    gain = check_param(gain, x.shape[-1], "gain")
    bias = check_param(bias, x.shape[-1], "bias")
    y = np.tanh(alpha * x)
    if gain is not None:
        y = y * gain
    return y if bias is None else y + bias


_erf = np.frompyfunc(math.erf, 1, 1)  # numpy has no erf; math.erf element by element is exact enough to read


def derf(x, alpha: float = 0.5, shift: float = 0.0, gain=None, bias=None) -> np.ndarray:
    r"""Dynamic erf (Chen et al. 2025, arXiv 2512.10938): :math:`y_i = \gamma_i\,\mathrm{erf}(\alpha x_i + s) + \beta_i`.

    erf(z) = 2Φ(√2 z) − 1, the Gaussian CDF rescaled to (−1, 1); α and s are scalars.
    """
    x = check_array(x, "x")
    alpha = _scalar(alpha, "alpha", positive=True)
    shift = _scalar(shift, "shift", positive=False)
    gain = check_param(gain, x.shape[-1], "gain")
    bias = check_param(bias, x.shape[-1], "bias")
    y = _erf(alpha * x.astype(np.float64) + shift).astype(np.float64).astype(x.dtype)
    if gain is not None:
        y = y * gain
    return y if bias is None else y + bias
