"""Values of the interview page's common follow-up questions.

- the final norm and its gain, measured on SmolLM2 (:mod:`normref.experiments.smollm2_batch`);
- how large attention logits get although each attention layer reads a normalized vector (same run);
- DeepNorm's constants, computed from the formula of the official torchscale code.
"""

from __future__ import annotations

import math

from . import fmt, register


# The cached experiments this module reads (normref.experiments.declared): a build runs each once, first.
EXPERIMENTS = (
    'normref.experiments.smollm2_batch:smollm2_batch()',
)


def _r():
    from ..experiments.smollm2_batch import smollm2_batch

    return smollm2_batch()


def _fin():
    return _r()["final_norm"]


# ---------------------------------------------------------------- attention logits


def _attn():
    return _r()["attn_max"]


def _attn_max() -> float:
    """The largest |q·k/√head_dim| over the measured layers, heads and sentences."""
    return max(v["max"] for v in _attn().values())


def _attn_max_layer() -> str:
    a = _attn()
    return str(max(a, key=lambda k: a[k]["max"]))


def _attn_weight_ratio() -> str:
    """e^(max logit): how many times more weight the top key can get than a key scored 0."""
    e = int(math.floor(_attn_max() / math.log(10)))
    return "10" + str(e).translate(str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹"))


# ---------------------------------------------------------------- DeepNorm


def deepnorm_decoder(n_layers: int) -> tuple[float, float]:
    """DeepNorm's (α, β) for a decoder-only model of ``n_layers`` layers, from normref.blocks (one formula:
    α = (2M)^{1/4}, β = (8M)^{-1/4}, the official microsoft/torchscale code; see REFERENCES.md)."""
    from ..blocks import deepnorm_alpha, deepnorm_beta

    return deepnorm_alpha(n_layers), deepnorm_beta(n_layers)


DEEPNORM_DEPTHS = (12, 30, 100, 1000)


register({
    # the final norm: the stream it reads, its gain, and the next-token cross-entropy of four heads
    # (trained; gain replaced by ones; by one scalar; no final norm at all)
    "final_norm.n_predictions": lambda: str(_fin()["n_predictions"]),
    "final_norm.stream_l2": lambda: fmt(_fin()["stream_l2"], 0),  # median L2 over the scored positions
    **{f"final_norm.ce_{h}": (lambda h=h: fmt(_fin()["heads"][h]["ce"], 2 if h != "no_final_norm" else 0))
       for h in ("trained", "gain_ones", "gain_scalar", "no_final_norm")},
    # the mean top-1 probability when the last stream skips the final norm (it saturates)
    "final_norm.top_p_no_final_norm": lambda: fmt(_fin()["heads"]["no_final_norm"]["top_p"], 2),
    "final_norm.gain_rms": lambda: fmt(_fin()["rms_gain"], 2),
    "final_norm.best_scalar": lambda: f"{_fin()['best_scalar']['c']:g}",
    "final_norm.ce_best_scalar": lambda: fmt(_fin()["best_scalar"]["ce"], 2),
    # attention logits, although each attention layer reads a normalized vector
    "attn_logits.max": lambda: fmt(_attn_max(), 1),
    "attn_logits.max_layer": _attn_max_layer,
    "attn_logits.weight_ratio": _attn_weight_ratio,
    # DeepNorm's constants at the depths of the interview page's table
    **{f"deepnorm.alpha_{m}": (lambda m=m: fmt(deepnorm_decoder(m)[0], 2)) for m in DEEPNORM_DEPTHS},
    **{f"deepnorm.beta_{m}": (lambda m=m: fmt(deepnorm_decoder(m)[1], 3)) for m in DEEPNORM_DEPTHS},
})
