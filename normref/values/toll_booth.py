"""Values of the toll-booth page: what the three measurements showed (computed, cached)."""

from __future__ import annotations

import numpy as np

from . import fmt, register


# The cached experiments this module reads (normref.experiments.declared): a build runs each once, first.
EXPERIMENTS = (
    'normref.experiments.toll_booth:grad_per_layer()',
    'normref.experiments.toll_booth:stream_norms()',
    'normref.experiments.toll_booth:warmup_runs()',
)


def _grad() -> dict:
    """Gradient norms per layer at initialization, Post-LN and Pre-LN, over seeds."""
    from ..experiments.toll_booth import grad_per_layer

    return grad_per_layer()


def grad_ratio(placement: str) -> float:
    """Mean gradient norm of layer 1's FFN weights over that of the last layer (mean over seeds first)."""
    m = _grad()[placement].mean(axis=0)
    return float(m[0] / m[-1])


def _last_layer_post_over_pre() -> str:
    g = _grad()
    return fmt(float(g["post"].mean(0)[-1] / g["pre"].mean(0)[-1]), 1)


def _stream() -> dict:
    """Squared stream norms per layer (Xiong et al.'s Lemma 2 setting)."""
    from ..experiments.toll_booth import stream_norms

    return stream_norms()


def _stream_per_d(key: str, reduce) -> float:
    r = _stream()
    return float(reduce(r[key]) / r["d"])


def _n_layers() -> int:
    return int(_stream()["layers"][-1])


def _warm() -> dict:
    """The four training runs: Post-LN and Pre-LN, with and without warmup."""
    from ..experiments.toll_booth import warmup_runs

    return warmup_runs()


FINAL_STEPS = 20  # the page compares the runs' mean loss over their last steps


def final_loss(key: str, last: int = FINAL_STEPS) -> float:
    """Mean loss over the last ``last`` steps of one run ("post/none", "pre/warmup", ...)."""
    return float(np.mean(_warm()[key][-last:]))


register({
    "grad.layers": lambda: str(len(_grad()["layers"])),
    "grad.seeds": lambda: str(len(_grad()["seeds"])),
    "grad.pre_ratio": lambda: fmt(grad_ratio("pre"), 2),
    # Last layer over layer 1 for Post-LN: how much larger the gradient is near the output.
    "grad.post_growth": lambda: fmt(1 / grad_ratio("post"), 2),
    "grad.last_post_over_pre": _last_layer_post_over_pre,
    # Measured E‖x + FFN(x)‖² / d for Post-LN, averaged over layers (Lemma 2: 3/2).
    "lemma2.post_sum": lambda: fmt(_stream_per_d("post_sum", np.mean), 2),
    "lemma2.post_out": lambda: fmt(_stream_per_d("post", lambda a: a[:, 1:].mean()), 2),
    "lemma2.pre_last": lambda: fmt(_stream_per_d("pre", lambda a: a.mean(0)[-1]), 1),
    "lemma2.n_layers": lambda: str(_n_layers()),
    "lemma2.pre_lo": lambda: fmt(1 + _n_layers() / 2, 1),
    "lemma2.pre_hi": lambda: fmt(1 + 1.5 * _n_layers(), 1),
    "lemma2.d": lambda: str(_stream()["d"]),
    "lemma2.seeds": lambda: str(len(_stream()["seeds"])),
    "warm.post_none": lambda: fmt(final_loss("post/none"), 2),
    "warm.post_warmup": lambda: fmt(final_loss("post/warmup"), 2),
    "warm.pre_none": lambda: fmt(final_loss("pre/none"), 2),
    "warm.pre_warmup": lambda: fmt(final_loss("pre/warmup"), 2),
    "warm.entropy_floor": lambda: fmt(_warm()["entropy"], 2),
    "warm.uniform_loss": lambda: fmt(_warm()["uniform"], 2),
    "warm.final_steps": lambda: str(FINAL_STEPS),
    "warm.steps": lambda: str(_warm()["setting"]["steps"]),
    "warm.warmup": lambda: str(_warm()["setting"]["warmup"]),
    "warm.lr": lambda: f"{_warm()['setting']['lr']:g}",
})
