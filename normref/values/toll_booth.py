"""Values of the toll-booth page: what the three measurements showed (computed, cached)."""

from __future__ import annotations

import numpy as np

from . import fmt, value


def _grad():
    from ..experiments.toll_booth import grad_per_layer

    return grad_per_layer()


def grad_ratio(placement: str) -> float:
    """Mean gradient norm of layer 1's FFN weights over that of the last layer (mean over seeds first)."""
    m = _grad()[placement].mean(axis=0)
    return float(m[0] / m[-1])


@value("grad.layers")
def _grad_layers(lang):
    return str(len(_grad()["layers"]))


@value("grad.seeds")
def _grad_seeds(lang):
    return str(len(_grad()["seeds"]))


@value("grad.post_ratio")
def _grad_post(lang):
    return fmt(grad_ratio("post"), 2)


@value("grad.pre_ratio")
def _grad_pre(lang):
    return fmt(grad_ratio("pre"), 2)


@value("grad.post_growth")
def _grad_post_growth(lang):
    """Last layer over layer 1 for Post-LN: how much larger the gradient is near the output."""
    return fmt(1 / grad_ratio("post"), 2)


@value("grad.last_post_over_pre")
def _grad_last(lang):
    g = _grad()
    return fmt(float(g["post"].mean(0)[-1] / g["pre"].mean(0)[-1]), 1)


def _stream():
    from ..experiments.toll_booth import stream_norms

    return stream_norms()


@value("lemma2.post_sum")
def _l2_post(lang):
    """Measured E‖x + FFN(x)‖² / d for Post-LN, averaged over layers (Lemma 2: 3/2)."""
    r = _stream()
    return fmt(float(r["post_sum"].mean() / r["d"]), 2)


@value("lemma2.post_out")
def _l2_post_out(lang):
    r = _stream()
    return fmt(float(r["post"][:, 1:].mean() / r["d"]), 2)


@value("lemma2.pre_last")
def _l2_pre_last(lang):
    r = _stream()
    return fmt(float(r["pre"].mean(0)[-1] / r["d"]), 1)


@value("lemma2.L")
def _l2_L(lang):
    return str(int(_stream()["layers"][-1]))


@value("lemma2.pre_lo")
def _l2_lo(lang):
    L = int(_stream()["layers"][-1])
    return fmt(1 + L / 2, 1)


@value("lemma2.pre_hi")
def _l2_hi(lang):
    L = int(_stream()["layers"][-1])
    return fmt(1 + 1.5 * L, 1)


@value("lemma2.d")
def _l2_d(lang):
    return str(_stream()["d"])


def _warm():
    from ..experiments.toll_booth import warmup_runs

    return warmup_runs()


def final_loss(key: str, last: int = 20) -> float:
    """Mean loss over the last ``last`` steps of one run ("post/none", "pre/warmup", ...)."""
    return float(np.mean(_warm()[key][-last:]))


for _key in ("post/none", "post/warmup", "pre/none", "pre/warmup"):
    value("warm." + _key.replace("/", "_"))(lambda lang, k=_key: fmt(final_loss(k), 2))


@value("warm.floor")
def _warm_floor(lang):
    return fmt(_warm()["entropy"], 2)


@value("warm.start")
def _warm_start(lang):
    return fmt(_warm()["uniform"], 2)


@value("warm.steps")
def _warm_steps(lang):
    return str(_warm()["setting"]["steps"])


@value("warm.warmup")
def _warm_warmup(lang):
    return str(_warm()["setting"]["warmup"])


@value("warm.lr")
def _warm_lr(lang):
    return f"{_warm()['setting']['lr']:g}"
