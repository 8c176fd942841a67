"""Per-token statistics used across the site: RMS, L2 norm, and their means.

All of them reduce over the last axis (the hidden dimension), so a
(tokens, d) array gives one number per token. Accept numpy arrays or torch
tensors (converted with ``.detach().cpu().numpy()``); return numpy.
"""

from __future__ import annotations

import numpy as np

from .norms import check_array

__all__ = ["as_numpy", "rms", "l2", "mean_l2_per_token", "std", "variance"]


def as_numpy(x, name: str = "x") -> np.ndarray:
    """numpy view of an array or a torch tensor (float64 for bfloat16)."""
    if hasattr(x, "detach") and hasattr(x, "numpy"):  # a torch tensor, without importing torch
        t = x.detach().cpu()
        if str(t.dtype) in ("torch.bfloat16", "torch.float16"):
            t = t.float()
        x = t.numpy()
    return check_array(x, name)


def rms(x) -> np.ndarray:
    """Root mean square per token: sqrt(mean(x²)) over the last axis."""
    x = as_numpy(x)
    return np.sqrt(np.mean(np.square(x, dtype=np.float64), axis=-1))


def l2(x) -> np.ndarray:
    """L2 norm (length) per token: sqrt(sum(x²)) over the last axis. Equals rms·√d."""
    x = as_numpy(x)
    return np.sqrt(np.sum(np.square(x, dtype=np.float64), axis=-1))


def mean_l2_per_token(x, skip_first: bool = False) -> float:
    """Mean L2 norm over tokens of a (..., tokens, d) array.

    ``skip_first=True`` drops position 0, which in many decoders carries a
    massive activation (Sun et al. 2024) that would dominate the mean.
    """
    x = as_numpy(x)
    if skip_first:
        if x.ndim < 2 or x.shape[-2] < 2:
            raise ValueError(f"skip_first needs x of shape (..., tokens>=2, d), got {x.shape}")
        x = x[..., 1:, :]
    return float(np.mean(l2(x)))


def variance(x) -> np.ndarray:
    """Population variance per token: mean((x − mean x)²), as LayerNorm uses it."""
    x = as_numpy(x).astype(np.float64)
    return np.mean((x - x.mean(axis=-1, keepdims=True)) ** 2, axis=-1)


def std(x) -> np.ndarray:
    """Standard deviation per token: sqrt(variance)."""
    return np.sqrt(variance(x))
