"""Values of the control experiment on the toll-booth page: Pre-LN with the branch inputs detached.

Read from :func:`normref.experiments.pre_ln_gradient.pre_ln_gradient_paths`
(cached); the setting is that of the toll-booth gradient experiment.
"""

from __future__ import annotations

from . import fmt, value


def _r():
    from ..experiments.pre_ln_gradient import pre_ln_gradient_paths

    return pre_ln_gradient_paths()


def first_over_last(key: str) -> float:
    """Seed-mean of layer 1 over seed-mean of the last layer, for ``ffn`` or ``ffn_detached``."""
    m = _r()[key].mean(axis=0)
    return float(m[0] / m[-1])


@value("pre_ln_grad.detached_first_over_last")
def _det_ratio(lang):
    """Layer 1's FFN gradient over the last layer's, branch inputs detached (below 1: rising with depth)."""
    return fmt(first_over_last("ffn_detached"), 2)


@value("pre_ln_grad.detached_growth")
def _det_growth(lang):
    """The last layer's FFN gradient over layer 1's, branch inputs detached."""
    return fmt(1 / first_over_last("ffn_detached"), 2)


@value("pre_ln_grad.stream_first_over_last")
def _stream_ratio(lang):
    """‖∂loss/∂x_0‖ over ‖∂loss/∂x_L‖ in plain Pre-LN: how much more gradient the stream carries near the input."""
    m = _r()["stream"].mean(axis=0)
    return fmt(float(m[0] / m[-1]), 1)


@value("pre_ln_grad.stream_detached_spread")
def _stream_det(lang):
    """Largest relative deviation of ‖∂loss/∂x_l‖ from the last layer's, branch inputs detached (0: identical)."""
    s = _r()["stream_detached"]
    dev = abs(s / s[:, -1:] - 1).max()
    return f"{dev:.0e}".replace("e-0", "e-").replace("-", "−") if dev > 0 else "0"


@value("pre_ln_grad.ffn_input_cos_first")
def _cos_first(lang):
    return fmt(float(_r()["ffn_input_cos"].mean(axis=0)[0]), 2)


@value("pre_ln_grad.ffn_input_cos_last")
def _cos_last(lang):
    return fmt(float(_r()["ffn_input_cos"].mean(axis=0)[-1]), 2)


@value("pre_ln_grad.sqrt_layers")
def _sqrt_L(lang):
    """√L for the toll-booth model's depth: the order Theorem 1's two bounds differ by."""
    import math

    return fmt(math.sqrt(len(_r()["layers"])), 1)
