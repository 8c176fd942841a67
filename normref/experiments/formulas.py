"""Small computations behind the formulas page: each formula, evaluated once.

Cheap (milliseconds, numpy only), so not cached on disk.
"""

from __future__ import annotations

import numpy as np

from ..norms import check_array, layer_norm, rms_norm
from ..stats import l2, rms, std, variance

__all__ = ["layernorm_steps", "sqrt_d_demo", "ln_jacobian", "ln_jacobian_sweep"]


def layernorm_steps(x) -> dict:
    """LayerNorm of one vector step by step, and the identity LayerNorm(x) = RMSNorm(x − mean x)."""
    x = check_array(x)
    if x.ndim != 1:
        raise ValueError(f"x must be one vector (1-d), got shape {x.shape}")
    mu = float(np.mean(x))
    centred = x - mu
    out = layer_norm(x)
    return {
        "mean": mu, "centred": centred, "variance": float(variance(x)), "std": float(std(x)),
        "layer_norm": out, "rms_norm_of_centred": rms_norm(centred, eps=1e-5), "l2": float(l2(out)),
        "rms_norm": rms_norm(x), "rms": float(rms(x)),
    }


def sqrt_d_demo(d: int = 1024, seed: int = 0, scale: float = 7.0, gain_spread: float = 0.3) -> dict:
    """Why ‖RMSNorm(x)‖ ≈ √d, and what a gain does to it.

    ``x`` is a Gaussian vector stretched by ``scale`` (its length is far from
    √d); the gain is 1 + gain_spread·N(0, 1), a synthetic stand-in for learned
    gains. ‖y ⊙ g‖ ≈ √d · RMS(g), since y² and g² are unrelated.
    """
    if isinstance(d, bool) or not isinstance(d, int) or d <= 0:
        raise ValueError(f"d must be a positive integer, got {d!r}")
    rng = np.random.default_rng(seed)
    x = scale * rng.standard_normal(d)
    g = 1.0 + gain_spread * rng.standard_normal(d)
    y = rms_norm(x)
    yg = rms_norm(x, gain=g)
    return {"d": d, "seed": seed, "l2_in": float(l2(x)), "mean_sq_out": float(np.mean(y**2)), "l2_out": float(l2(y)),
            "sqrt_d": float(np.sqrt(d)), "rms_g": float(rms(g)), "l2_gain": float(l2(yg)),
            "predicted_gain": float(np.sqrt(d) * rms(g))}


def ln_jacobian(x, eps: float = 1e-5) -> np.ndarray:
    """Jacobian ∂LN(x)/∂x of LayerNorm without gain, in closed form, for one vector x (d,).

    With x̃ = x − mean(x) and s = sqrt(mean(x̃²) + eps):
    J = (1/s) (I − 11ᵀ/d) − x̃ x̃ᵀ (I − 11ᵀ/d) / (d s³).
    """
    x = check_array(x)
    if x.ndim != 1:
        raise ValueError(f"x must be one vector (1-d), got shape {x.shape}")
    d = x.size
    C = np.eye(d) - np.ones((d, d)) / d
    xt = C @ x
    s = np.sqrt(np.mean(xt**2) + eps)
    return C / s - np.outer(xt, xt) @ C / (d * s**3)


def ln_jacobian_sweep(d: int = 64, seed: int = 0, scales=(0.1, 1.0, 10.0, 100.0)) -> dict:
    """‖J_LN(c·x)‖₂ against √d / ‖c·x − mean‖₂ (Xiong et al. 2020, Lemma 3), for several c."""
    x = np.random.default_rng(seed).standard_normal(d)
    rows = []
    for c in scales:
        xc = c * x
        spectral = float(np.linalg.norm(ln_jacobian(xc), 2))
        rows.append((float(c), float(l2(xc)), spectral, float(np.sqrt(d) / l2(xc - xc.mean()))))
    return {"d": d, "seed": seed, "rows": rows}
