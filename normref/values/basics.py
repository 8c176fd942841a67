"""Values of the home page and the formulas page: the worked example, and the scale-invariance sweep."""

from __future__ import annotations

import numpy as np

from . import fmt, fmt_vec, register
from ..norms import rms_norm
from ..stats import rms

# The worked example of the lessons: four numbers, by hand.
WORKED_X = np.array([2.0, -1.0, 3.0, 0.0])


def _sweep() -> dict:
    """The scale-invariance sweep of the home page (figure "scale_invariance")."""
    from ..experiments.scale import scale_sweep

    return scale_sweep()


def _sweep_max_deviation() -> str:
    r = _sweep()
    return f"{float(abs(r['l2_out'] - r['sqrt_d']).max()):.1e}"


def _sweep_range() -> str:
    s = _sweep()["scales"]
    return f"{s[0]:g}×–{s[-1]:g}×"


register({
    "worked.x": lambda: fmt_vec(WORKED_X, 0),
    "worked.x_squared": lambda: fmt_vec(WORKED_X**2, 0),
    "worked.mean_sq": lambda: fmt(float(np.mean(WORKED_X**2)), 1),
    "worked.rms": lambda: fmt(float(rms(WORKED_X)), 2),
    "worked.y": lambda: fmt_vec(rms_norm(WORKED_X), 2),
    "worked.l2_y": lambda: fmt(float(np.linalg.norm(rms_norm(WORKED_X))), 2),
    "scale.d": lambda: str(_sweep()["d"]),
    "scale.sqrt_d": lambda: f"{_sweep()['sqrt_d']:g}",
    "scale.range": _sweep_range,
    "scale.max_dev": _sweep_max_deviation,
})
