"""Scale invariance of RMSNorm: stretch a vector, its normalized length does not move."""

from __future__ import annotations

import numpy as np

from ..norms import rms_norm
from ..stats import l2


def scale_sweep(d: int = 256, seed: int = 0, lo: float = 0.1, hi: float = 10.0, n: int = 41) -> dict:
    """L2 norm of c·x and of RMSNorm(c·x) for c from ``lo`` to ``hi`` (log-spaced).

    ``x`` is a fixed Gaussian vector (synthetic, seeded). Returns the scales, the
    input L2 norms, the output L2 norms and √d, all as numpy arrays / floats.
    """
    if d <= 0:
        raise ValueError(f"d must be a positive integer, got {d}")
    if not (0 < lo < hi):
        raise ValueError(f"need 0 < lo < hi, got lo={lo}, hi={hi}")
    x = np.random.default_rng(seed).standard_normal(d)
    scales = np.geomspace(lo, hi, n)
    xs = scales[:, None] * x[None, :]
    return {
        "scales": scales,
        "l2_in": l2(xs),
        "l2_out": l2(rms_norm(xs)),
        "sqrt_d": float(np.sqrt(d)),
        "d": d,
        "seed": seed,
    }
