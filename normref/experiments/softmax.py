"""Softmax saturation: the same six scores, only their overall size changes.

An illustration, not a reading from a model. A dot-product score ⟨x, w⟩ grows
in proportion to the length of x, so if a hidden vector drifts c times longer,
every score it produces is multiplied by c. We keep six fixed scores (their
pattern never changes) and sweep c. As c grows, softmax(c·s) collapses onto
the largest score, and its Jacobian diag(p) − p pᵀ, which carries every
gradient through the softmax, shrinks towards zero.
"""

from __future__ import annotations

import numpy as np

__all__ = ["SCORES", "LABELS", "softmax", "softmax_jacobian", "saturation", "SHOWN_SCALES"]

# Six fixed scores, one per candidate token A–F: a spread-out pattern whose
# softmax at scale 1 is informative (no option dominates). Chosen so that at
# scale 1 the distribution is the one of the seed lesson's widget (top ≈ 0.325).
SCORES = np.array([1.5, 1.1, 0.8, 0.6, 0.3, -0.1])
LABELS = ("A", "B", "C", "D", "E", "F")
# The magnitudes the page shows as bar charts.
SHOWN_SCALES = (0.5, 1.0, 4.0, 16.0)


def softmax(z) -> np.ndarray:
    """softmax over the last axis, shifted by the max so that large scores do not overflow."""
    z = np.asarray(z, dtype=float)
    if z.ndim == 0 or z.shape[-1] == 0:
        raise ValueError(f"z must have a non-empty last axis, got shape {z.shape}")
    if not np.all(np.isfinite(z)):
        raise ValueError("z contains NaN or inf")
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def softmax_jacobian(p) -> np.ndarray:
    """∂softmax/∂z = diag(p) − p pᵀ for one probability vector p."""
    p = np.asarray(p, dtype=float)
    if p.ndim != 1:
        raise ValueError(f"p must be one probability vector (1-d), got shape {p.shape}")
    return np.diag(p) - np.outer(p, p)


def saturation(scores=SCORES, lo: float = 0.25, hi: float = 32.0, n: int = 57) -> dict:
    """softmax(c·scores) for c from ``lo`` to ``hi`` (log-spaced, and always including SHOWN_SCALES).

    Returns the scales, the distributions (n, 6), the top probability, the
    entropy in nats, and the spectral norm of the softmax Jacobian per scale.
    """
    s = np.asarray(scores, dtype=float)
    if s.ndim != 1 or s.size < 2:
        raise ValueError(f"scores must be a 1-d array of at least 2 numbers, got shape {s.shape}")
    if not (0 < lo < hi):
        raise ValueError(f"need 0 < lo < hi, got lo={lo}, hi={hi}")
    if isinstance(n, bool) or not isinstance(n, int) or n < 2:
        raise ValueError(f"n must be an integer >= 2, got {n!r}")
    # Rounding merges a sweep point that equals a shown scale up to float error.
    scales = np.unique(np.round(np.concatenate([np.geomspace(lo, hi, n), [c for c in SHOWN_SCALES if lo <= c <= hi]]), 12))
    p = softmax(scales[:, None] * s[None, :])
    entropy = -np.sum(p * np.log(np.clip(p, 1e-300, None)), axis=1)
    jac = np.array([np.linalg.norm(softmax_jacobian(row), 2) for row in p])
    return {"scales": scales, "scores": s, "p": p, "top": p.max(axis=1), "entropy": entropy,
            "jacobian_norm": jac, "uniform_entropy": float(np.log(s.size))}
