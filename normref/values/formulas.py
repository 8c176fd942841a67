"""Values of the formulas page: LayerNorm step by step, √d, the LN Jacobian, softmax saturation."""

from __future__ import annotations

from . import fmt, fmt_vec, value
from .basics import WORKED_X


def _ln():
    from ..experiments.formulas import layernorm_steps

    return layernorm_steps(WORKED_X)


@value("ln.mean")
def _ln_mean(lang):
    return fmt(_ln()["mean"], 2)


@value("ln.centred")
def _ln_centred(lang):
    return fmt_vec(_ln()["centred"], 0)


@value("ln.var")
def _ln_var(lang):
    return fmt(_ln()["variance"], 2)


@value("ln.std")
def _ln_std(lang):
    return fmt(_ln()["std"], 2)


@value("ln.y")
def _ln_y(lang):
    return fmt_vec(_ln()["layer_norm"], 2)


@value("ln.l2_y")
def _ln_l2(lang):
    return fmt(_ln()["l2"], 2)


def _sq():
    from ..experiments.formulas import sqrt_d_demo

    return sqrt_d_demo()


@value("sqrtd.d")
def _sq_d(lang):
    return str(_sq()["d"])


@value("sqrtd.l2_in")
def _sq_in(lang):
    return fmt(_sq()["l2_in"], 1)


@value("sqrtd.l2_out")
def _sq_out(lang):
    return fmt(_sq()["l2_out"], 2)


@value("sqrtd.rms_g")
def _sq_rms_g(lang):
    return fmt(_sq()["rms_g"], 3)


@value("sqrtd.l2_gain")
def _sq_gain(lang):
    return fmt(_sq()["l2_gain"], 2)


@value("sqrtd.predicted_gain")
def _sq_pred(lang):
    return fmt(_sq()["predicted_gain"], 2)


def _jac():
    from ..experiments.formulas import ln_jacobian_sweep

    return ln_jacobian_sweep()


@value("jac.d")
def _jac_d(lang):
    return str(_jac()["d"])


@value("jac.max_rel_err")
def _jac_err(lang):
    """Largest relative gap between ‖J‖₂ and √d/‖x − μ‖ over the sweep."""
    rows = _jac()["rows"]
    return f"{max(abs(s - b) / b for _, _, s, b in rows):.0e}".replace("e-0", "e-")


def _jac_at(c):
    for scale, _, spectral, _ in _jac()["rows"]:
        if scale == c:
            return spectral
    raise KeyError(c)


@value("jac.at_0.1")
def _jac_01(lang):
    return fmt(_jac_at(0.1), 2)


@value("jac.at_1")
def _jac_1(lang):
    return fmt(_jac_at(1.0), 2)


@value("jac.at_10")
def _jac_10(lang):
    return fmt(_jac_at(10.0), 3)


# Softmax saturation (figure "softmax_saturation").
def _sat():
    from ..experiments.softmax import saturation

    return saturation()


@value("softmax.scores")
def _sm_scores(lang):
    from ..experiments.softmax import SCORES

    return fmt_vec(SCORES, 1)


def _top(c):
    import numpy as np

    r = _sat()
    return float(r["top"][int(np.flatnonzero(r["scales"] == c)[0])])


@value("softmax.top_0.5")
def _sm_05(lang):
    return fmt(_top(0.5), 3)


@value("softmax.top_1")
def _sm_1(lang):
    return fmt(_top(1.0), 3)


@value("softmax.top_4")
def _sm_4(lang):
    return fmt(_top(4.0), 3)


@value("softmax.top_16")
def _sm_16(lang):
    return fmt(_top(16.0), 3)


@value("softmax.uniform")
def _sm_uniform(lang):
    from ..experiments.softmax import SCORES

    return fmt(1 / len(SCORES), 3)
