"""Values of the home page and the formulas page: the worked example."""

from __future__ import annotations

import numpy as np

from . import fmt, fmt_vec, value
from ..norms import rms_norm
from ..stats import rms

# The worked example of the lessons: four numbers, by hand.
WORKED_X = np.array([2.0, -1.0, 3.0, 0.0])


@value("worked.x")
def _x(lang):
    return fmt_vec(WORKED_X, 0)


@value("worked.x2")
def _x2(lang):
    return fmt_vec(WORKED_X**2, 0)


@value("worked.mean_sq")
def _mean_sq(lang):
    return fmt(float(np.mean(WORKED_X**2)), 1)


@value("worked.rms")
def _rms(lang):
    return fmt(float(rms(WORKED_X)), 2)


@value("worked.y")
def _y(lang):
    return fmt_vec(rms_norm(WORKED_X), 2)


@value("worked.l2_y")
def _l2_y(lang):
    return fmt(float(np.linalg.norm(rms_norm(WORKED_X))), 2)


# The scale-invariance sweep of the home page (figure "scale_invariance").
def _sweep():
    from ..experiments.scale import scale_sweep

    return scale_sweep()


@value("scale.d")
def _scale_d(lang):
    return str(_sweep()["d"])


@value("scale.sqrt_d")
def _scale_sqrt_d(lang):
    return f"{_sweep()['sqrt_d']:g}"


@value("scale.range")
def _scale_range(lang):
    s = _sweep()["scales"]
    return f"{s[0]:g}× – {s[-1]:g}×"


@value("scale.max_dev")
def _scale_max_dev(lang):
    r = _sweep()
    return f"{float(abs(r['l2_out'] - r['sqrt_d']).max()):.1e}"
