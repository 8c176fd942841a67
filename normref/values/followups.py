"""Values of the interview page's common follow-up questions.

- the final norm and its gain, measured on SmolLM2 (:mod:`normref.experiments.smollm2_batch`);
- how large attention logits get although each attention layer reads a normalized vector (same run);
- DeepNorm's constants, computed from the formula of the official torchscale code.
"""

from __future__ import annotations

from . import fmt, value


def _r():
    from ..experiments.smollm2_batch import smollm2_batch

    return smollm2_batch()


def _fin():
    return _r()["final_norm"]


# ---------------------------------------------------------------- the final norm


@value("final_norm.n_predictions")
def _n_pred(lang):
    return str(_fin()["n_predictions"])


@value("final_norm.stream_l2")
def _stream(lang):
    """Median L2 of the stream entering the final norm, over the scored positions."""
    return fmt(_fin()["stream_l2"], 0)


for _head in ("trained", "gain_ones", "gain_scalar", "no_final_norm"):
    value(f"final_norm.ce_{_head}")(lambda lang, h=_head: fmt(_fin()["heads"][h]["ce"], 2 if h != "no_final_norm" else 0))
    value(f"final_norm.top_p_{_head}")(lambda lang, h=_head: fmt(_fin()["heads"][h]["top_p"], 2))


@value("final_norm.gain_rms")
def _gain_rms(lang):
    return fmt(_fin()["rms_gain"], 2)


@value("final_norm.best_scalar")
def _best_c(lang):
    return f"{_fin()['best_scalar']['c']:g}"


@value("final_norm.ce_best_scalar")
def _best_ce(lang):
    return fmt(_fin()["best_scalar"]["ce"], 2)


# ---------------------------------------------------------------- attention logits


def _attn():
    return _r()["attn_max"]


@value("attn_logits.max")
def _attn_max(lang):
    """The largest |q·k/√head_dim| over the measured layers, heads and sentences."""
    return fmt(max(v["max"] for v in _attn().values()), 1)


@value("attn_logits.max_layer")
def _attn_max_layer(lang):
    a = _attn()
    return str(max(a, key=lambda k: a[k]["max"]))


@value("attn_logits.layers")
def _attn_layers(lang):
    ls = sorted(_attn())
    return ("、" if lang == "zh" else ", ").join(str(v) for v in ls)


@value("attn_logits.weight_ratio")
def _attn_ratio(lang):
    """e^(max logit): how many times more weight the top key can get than a key scored 0."""
    import math

    e = int(math.floor(max(v["max"] for v in _attn().values()) / math.log(10)))
    return "10" + str(e).translate(str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹"))


# ---------------------------------------------------------------- DeepNorm


def deepnorm_decoder(n_layers: int) -> tuple[float, float]:
    """DeepNorm's (α, β) for a decoder-only model of ``n_layers`` layers: α = (2M)^{1/4}, β = (8M)^{-1/4}.

    From the official microsoft/torchscale code (REFERENCES.md); the paper's
    §4.3 gives the encoder-decoder constants. α multiplies the residual before
    the LN, x ← LN(α·x + f(x)); β scales the initialisation of the FFN and of
    attention's value and output projections.
    """
    if isinstance(n_layers, bool) or not isinstance(n_layers, int) or n_layers <= 0:
        raise ValueError(f"n_layers must be a positive integer, got {n_layers!r}")
    return (2 * n_layers) ** 0.25, (8 * n_layers) ** -0.25


DEEPNORM_DEPTHS = (12, 30, 100, 1000)


for _m in DEEPNORM_DEPTHS:
    value(f"deepnorm.alpha_{_m}")(lambda lang, m=_m: fmt(deepnorm_decoder(m)[0], 2))
    value(f"deepnorm.beta_{_m}")(lambda lang, m=_m: fmt(deepnorm_decoder(m)[1], 3))
