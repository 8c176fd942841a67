"""Values of the control experiment on the toll-booth page: Pre-LN with the branch inputs detached.

Read from :func:`normref.experiments.pre_ln_gradient.pre_ln_gradient_paths`
(cached); the setting is that of the toll-booth gradient experiment.
"""

from __future__ import annotations

import math

from . import fmt, register


# The cached experiments this module reads (normref.experiments.declared): a build runs each once, first.
EXPERIMENTS = (
    'normref.experiments.pre_ln_gradient:pre_ln_gradient_paths()',
)


def _r():
    from ..experiments.pre_ln_gradient import pre_ln_gradient_paths

    return pre_ln_gradient_paths()


def first_over_last(key: str) -> float:
    """Seed-mean of layer 1 over seed-mean of the last layer, for ``ffn`` or ``ffn_detached``."""
    m = _r()[key].mean(axis=0)
    return float(m[0] / m[-1])


def _stream_detached_spread() -> str:
    """Largest relative deviation of ‖∂loss/∂x_l‖ from the last layer's, branch inputs detached (0: identical)."""
    s = _r()["stream_detached"]
    dev = abs(s / s[:, -1:] - 1).max()
    return f"{dev:.0e}".replace("e-0", "e-").replace("-", "−") if dev > 0 else "0"


def _seed_mean(key: str, layer: int) -> float:
    return float(_r()[key].mean(axis=0)[layer])


register({
    # The last layer's FFN gradient over layer 1's, branch inputs detached (above 1: rising with depth).
    "pre_ln_grad.detached_growth": lambda: fmt(1 / first_over_last("ffn_detached"), 2),
    # ‖∂loss/∂x_0‖ over ‖∂loss/∂x_L‖ in plain Pre-LN: how much more gradient the stream carries near the input.
    "pre_ln_grad.stream_first_over_last": lambda: fmt(_seed_mean("stream", 0) / _seed_mean("stream", -1), 1),
    "pre_ln_grad.stream_detached_spread": _stream_detached_spread,
    "pre_ln_grad.ffn_input_cos_first": lambda: fmt(_seed_mean("ffn_input_cos", 0), 2),
    "pre_ln_grad.ffn_input_cos_last": lambda: fmt(_seed_mean("ffn_input_cos", -1), 2),
    # √L for the toll-booth model's depth: the order Theorem 1's two bounds differ by.
    "pre_ln_grad.sqrt_layers": lambda: fmt(math.sqrt(len(_r()["layers"])), 1),
})
