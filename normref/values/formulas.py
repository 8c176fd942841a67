"""Values of the formulas page: LayerNorm step by step, √d, the LayerNorm Jacobian, softmax saturation."""

from __future__ import annotations

from . import fmt, fmt_vec, register
from .basics import WORKED_X


def _layernorm_steps() -> dict:
    """LayerNorm of the worked example, one step at a time."""
    from ..experiments.formulas import layernorm_steps

    return layernorm_steps(WORKED_X)


def _sqrt_d() -> dict:
    """Why ‖RMSNorm(x)‖ ≈ √d: one random vector, before and after a synthetic gain."""
    from ..experiments.formulas import sqrt_d_demo

    return sqrt_d_demo()


def _jacobian() -> dict:
    """The spectral norm of LayerNorm's Jacobian against √d/‖x − μ‖, over input scales."""
    from ..experiments.formulas import ln_jacobian_sweep

    return ln_jacobian_sweep()


def _jacobian_norm_at(scale: float) -> float:
    for s, _, spectral, _ in _jacobian()["rows"]:
        if s == scale:
            return spectral
    raise KeyError(scale)


def _jacobian_max_relative_error() -> str:
    """Largest relative gap between ‖J‖₂ and √d/‖x − μ‖ over the sweep."""
    rows = _jacobian()["rows"]
    return f"{max(abs(s - b) / b for _, _, s, b in rows):.0e}".replace("e-0", "e-")


def _softmax_top_probability(scale: float) -> str:
    """The largest softmax probability when the scores are multiplied by ``scale``."""
    import numpy as np

    from ..experiments.softmax import saturation

    r = saturation()
    return fmt(float(r["top"][int(np.flatnonzero(r["scales"] == scale)[0])]), 3)


def _softmax_scores() -> str:
    from ..experiments.softmax import SCORES

    return fmt_vec(SCORES, 1)


def _softmax_uniform() -> str:
    from ..experiments.softmax import SCORES

    return fmt(1 / len(SCORES), 3)


register({
    "ln.mean": lambda: fmt(_layernorm_steps()["mean"], 2),
    "ln.centered": lambda: fmt_vec(_layernorm_steps()["centred"], 0),
    "ln.var": lambda: fmt(_layernorm_steps()["variance"], 2),
    "ln.std": lambda: fmt(_layernorm_steps()["std"], 2),
    "ln.y": lambda: fmt_vec(_layernorm_steps()["layer_norm"], 2),
    "ln.l2_y": lambda: fmt(_layernorm_steps()["l2"], 2),
    "sqrtd.d": lambda: str(_sqrt_d()["d"]),
    "sqrtd.l2_in": lambda: fmt(_sqrt_d()["l2_in"], 1),
    "sqrtd.l2_out": lambda: fmt(_sqrt_d()["l2_out"], 2),
    "sqrtd.gain_rms": lambda: fmt(_sqrt_d()["rms_g"], 3),
    "sqrtd.l2_gain": lambda: fmt(_sqrt_d()["l2_gain"], 2),
    "sqrtd.predicted_gain": lambda: fmt(_sqrt_d()["predicted_gain"], 2),
    "jac.d": lambda: str(_jacobian()["d"]),
    "jac.max_rel_err": _jacobian_max_relative_error,
    "jac.at_0.1": lambda: fmt(_jacobian_norm_at(0.1), 2),
    "jac.at_1": lambda: fmt(_jacobian_norm_at(1.0), 2),
    "jac.at_10": lambda: fmt(_jacobian_norm_at(10.0), 3),
    "softmax.scores": _softmax_scores,
    "softmax.top_0.5": lambda: _softmax_top_probability(0.5),
    "softmax.top_1": lambda: _softmax_top_probability(1.0),
    "softmax.top_4": lambda: _softmax_top_probability(4.0),
    "softmax.top_16": lambda: _softmax_top_probability(16.0),
    "softmax.uniform": _softmax_uniform,
})
