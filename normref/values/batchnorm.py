"""Values of the interview page's BatchNorm section: batch statistics on SmolLM2's real activations.

Read from :func:`normref.experiments.smollm2_batch.smollm2_batch` (one cached
forward pass over a set of sentences). The section quotes the middle layer
of the three measured; the figure shows all three.
"""

from __future__ import annotations

from . import value


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


@value("batchnorm.n_texts")
def _n_texts(lang):
    return str(_r()["n_texts"])


@value("batchnorm.n_tokens")
def _n_tokens(lang):
    return str(_r()["n_tokens"])


@value("batchnorm.length_range")
def _lengths(lang):
    ls = _r()["lengths"]
    return f"{min(ls)}–{max(ls)}"


@value("batchnorm.layer")
def _layer(lang):
    return str(_main_layer())


@value("batchnorm.n_batches")
def _n_batches(lang):
    from ..experiments.smollm2_batch import N_BATCHES

    return str(N_BATCHES)


@value("batchnorm.batch_small")
def _b_small(lang):
    return str(_sizes()[0])


@value("batchnorm.batch_large")
def _b_large(lang):
    return str(_sizes()[1])


for _end, _i in (("small", 0), ("large", 1)):
    value(f"batchnorm.tokens_per_batch_{_end}")(lambda lang, i=_i: f"{_bn(_sizes()[i])['tokens_per_batch']:.0f}")
    value(f"batchnorm.var_cv_{_end}")(lambda lang, i=_i: _pct(_bn(_sizes()[i])["var_cv"]))
    value(f"batchnorm.output_change_{_end}")(lambda lang, i=_i: _pct(_bn(_sizes()[i])["out_change"]))
    value(f"batchnorm.train_vs_inference_{_end}")(lambda lang, i=_i: _pct(_bn(_sizes()[i])["train_vs_inference"]))


@value("batchnorm.per_token_change")
def _per_token(lang):
    """Largest difference between a token normalized alone and inside a batch (per-token statistics): 0."""
    worst = max(L["batchnorm"]["per_token_change"] for L in _r()["layers"].values())
    return "0" if worst == 0 else f"{worst:.1e}".replace("-", "−")


@value("batchnorm.pad_batch")
def _pad_batch(lang):
    from ..experiments.smollm2_batch import PAD_BATCH

    return str(PAD_BATCH)


@value("batchnorm.pad_share")
def _pad_share(lang):
    return _pct(_r()["layers"][_main_layer()]["padding"]["pad_share"])


@value("batchnorm.pad_var_ratio")
def _pad_ratio(lang):
    return f"{_r()['layers'][_main_layer()]['padding']['var_ratio']:.2f}"
