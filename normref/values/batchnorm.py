"""Values of the interview page's BatchNorm section: batch statistics on SmolLM2's real activations.

Read from :func:`normref.experiments.smollm2_batch.smollm2_batch` (one cached
forward pass over a set of sentences). The section quotes the middle layer
of the three measured; the figure shows all three.
"""

from __future__ import annotations

import math

from . import register


# The cached experiments this module reads (normref.experiments.declared): a build runs each once, first.
EXPERIMENTS = (
    'normref.experiments.smollm2_batch:smollm2_batch()',
)


def _r():
    from ..experiments.smollm2_batch import smollm2_batch

    return smollm2_batch()


def _main_layer() -> int:
    from ..experiments.smollm2_batch import LAYERS

    return LAYERS[len(LAYERS) // 2]


def _pct(x: float) -> str:
    return f"{100 * x:.0f}%"


def _bn(b: int) -> dict:
    return _r()["layers"][_main_layer()]["batchnorm"]["by_batch"][b]


def _sizes():
    from ..experiments.smollm2_batch import BATCH_SIZES

    return BATCH_SIZES[0], BATCH_SIZES[-1]


def _per_token_change() -> str:
    """Largest difference between a token normalized alone and inside a batch (per-token statistics): 0."""
    worst = max(L["batchnorm"]["per_token_change"] for L in _r()["layers"].values())
    return "0" if worst == 0 else f"{worst:.1e}".replace("-", "−")


def _setting(name: str):
    """A setting of the measurement (N_BATCHES, PAD_BATCH, ...), read from the experiment module."""
    from ..experiments import smollm2_batch

    return getattr(smollm2_batch, name)


def _padding(k: str):
    return _r()["layers"][_main_layer()]["padding"][k]


_ENDS = (("small", 0), ("large", 1))  # the smallest and the largest batch size

register({
    # the measurement
    "batchnorm.n_texts": lambda: str(_r()["n_texts"]),
    "batchnorm.n_tokens": lambda: str(_r()["n_tokens"]),
    "batchnorm.length_range": lambda: f"{min(_r()['lengths'])}–{max(_r()['lengths'])}",
    "batchnorm.layer": lambda: str(_main_layer()),
    "batchnorm.n_batches": lambda: str(_setting("N_BATCHES")),
    "batchnorm.batch_small": lambda: str(_sizes()[0]),
    "batchnorm.batch_large": lambda: str(_sizes()[1]),
    # BatchNorm's statistics at the smallest and the largest batch
    **{f"batchnorm.tokens_per_batch_{end}": (lambda i=i: f"{_bn(_sizes()[i])['tokens_per_batch']:.0f}")
       for end, i in _ENDS},
    **{f"batchnorm.var_cv_{end}": (lambda i=i: _pct(_bn(_sizes()[i])["var_cv"])) for end, i in _ENDS},
    **{f"batchnorm.output_change_{end}": (lambda i=i: _pct(_bn(_sizes()[i])["out_change"])) for end, i in _ENDS},
    **{f"batchnorm.train_vs_inference_{end}": (lambda i=i: _pct(_bn(_sizes()[i])["train_vs_inference"]))
       for end, i in _ENDS},
    # what i.i.d. sampling alone gives: the CV of a variance estimated from n Gaussian values is about √(2/n)
    **{f"batchnorm.iid_cv_{end}": (lambda i=i: _pct(math.sqrt(2 / _bn(_sizes()[i])["tokens_per_batch"])))
       for end, i in _ENDS},
    # per-token statistics (LayerNorm, RMSNorm): nothing changes
    "batchnorm.per_token_change": _per_token_change,
    # padding
    "batchnorm.pad_batch": lambda: str(_setting("PAD_BATCH")),
    "batchnorm.pad_share": lambda: _pct(_padding("pad_share")),
    "batchnorm.pad_var_ratio": lambda: f"{_padding('var_ratio'):.2f}",
})
