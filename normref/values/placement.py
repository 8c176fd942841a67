"""Values and the summary table of the placement page ("Where the norm goes").

Three sources, as the page says: the initialization measurements are computed at
build time (normref.experiments.placement, cached), but for the detach control,
whose result is committed with the other slow ones (normref/results/committed,
normref.results.committed); the training numbers come from the committed lab
(normref/results/placement-cpu.json), never from a run at build time. Value names use the variant with "+" written "_": ``placement.final.pre_qk.hi.none``;
``lo``/``hi`` are the lab's two learning rates, ``none``/``warmup`` without and with warmup.

The lab and normref.blocks import torch: they are imported inside the functions,
so listing the values loads no torch.
"""

from __future__ import annotations

import math

from . import Column, Table, count, fmt, register, register_tables
from ..labels import labels

# The cached experiments this module reads (normref.experiments.declared): a build runs each once, first.
EXPERIMENTS = (
    'normref.experiments.placement:grad_per_layer()',
    'normref.experiments.placement:stream_lengths(12)',
    'normref.experiments.placement:stream_lengths(48)',
    'normref.experiments.placement:grad_paths()',
)


t = labels(__name__)  # the Chinese is in normref/labels.yml


def _lab():
    from ..experiments import placement as pl

    return pl


def key(variant: str) -> str:
    return variant.replace("+", "_")


def _rep():
    from ..results.placement import placement_cpu

    return placement_cpu()


def _summ():
    from ..results.placement import summary

    return summary()


def _setting(k: str):
    return _rep()["setting"][k]


def _lr(which: str) -> float:
    lrs = sorted(_setting("lrs"))
    return {"lo": lrs[0], "hi": lrs[-1]}[which]


def _w(which: str) -> int:
    return {"none": 0, "warmup": _setting("warmup")}[which]


# ------------------------------------------------------------------ where and when (the committed run)


def machine_text(lang: str) -> str:
    """The committed run's machine, versions and date, as the page and the captions name them (the run
    itself is one process with one torch thread, which the page says in words)."""
    m = _rep()["machine"]
    return t(lang, "{{cpu}} ({{cores}} cores), Python {{python}}, torch {{torch}}, {{date}}", cpu=m["cpu_model"],
             cores=m["cpu_cores"], python=m["python"], torch=m["torch"], date=m["date"][:10])


# ------------------------------------------------------------------ DeepNorm and Mix-LN at the depths the page names


def _deepnorm(which: str, n_layer: int, digits: int) -> str:
    from ..blocks import deepnorm_alpha, deepnorm_beta

    return fmt((deepnorm_alpha if which == "alpha" else deepnorm_beta)(n_layer), digits)


def _mixln_post_layers(n_layer: int) -> str:
    from ..blocks import mixln_post_layers

    return str(mixln_post_layers(n_layer))


# ------------------------------------------------------------------ at initialization (build time, cached; the detach control committed)


def grad_ratio(variant: str) -> float:
    """Layer 1's FFN gradient over the last layer's, at initialization (seed means)."""
    pl = _lab()
    return pl.grad_ratio(pl.grad_per_layer(), variant)


def stream_growth(variant: str, n_layer: int) -> float:
    """How many times longer the residual stream is after ``n_layer`` layers than the input, at initialization."""
    pl = _lab()
    return pl.stream_growth(pl.stream_lengths(n_layer), variant)


def grad_spread(variant: str, detached: bool = False) -> dict:
    """Layer 1 ÷ last, max ÷ min and the CV across layers of the FFN gradient at initialization (seed means),
    as is (grad_per_layer, computed at build time) or with every sub-layer's input detached (the control,
    normref.experiments.placement.grad_paths, committed)."""
    pl = _lab()
    if detached:
        return pl.spread(pl.grad_paths()[variant]["ffn_detached"])
    return pl.spread(pl.grad_per_layer()[variant])


def stream_grad_ratio(variant: str, detached: bool = False) -> float:
    """‖∂loss/∂x_0‖ ÷ ‖∂loss/∂x_L‖ at initialization (seed means)."""
    pl = _lab()
    return pl.stream_grad_ratio(pl.grad_paths(), variant, detached)


def _ratio_text(x: float) -> str:
    return fmt(x, 0) if x >= 20 else fmt(x, 1)


def _deep() -> int:
    """The deeper of the two stacks the stream is measured in."""
    return _lab().STREAM["depths"][-1]


def _stream_growth_text(variant: str, n_layer: int) -> str:
    """Stream growth at one of the measured depths (the value's name says which; it fails if that is gone)."""
    depths = _lab().STREAM["depths"]
    if n_layer not in depths:
        raise ValueError(f"n_layer must be one of the measured depths {depths}, got {n_layer}")
    return fmt(stream_growth(variant, n_layer), 2)


def _lemma2(lo: bool) -> str:
    """Lemma 2's bound on Pre-LN's stream growth at the deeper stack: √(1 + L/2) and √(1 + 3L/2)."""
    return fmt(math.sqrt(1 + (0.5 if lo else 1.5) * _deep()), 2)


# ------------------------------------------------------------------ training (the committed lab)


def final(variant: str, lr: str, w: str) -> dict:
    """The lab's summary of one setting: final held-out loss (mean over seeds that did not diverge), counts."""
    return _summ()[(variant, _lr(lr), _w(w))]


def _final_text(e: dict, lang: str) -> str:
    if not math.isfinite(e["final"]):
        return t(lang, "diverged")
    return fmt(e["final"], 2)


def max_logit(variant: str, w: str = "none") -> float:
    """The largest attention logit at the end of training at the high learning rate (max over layers, mean over seeds)."""
    m = final(variant, "hi", w)["max_logit"]
    return float("nan") if m is None else float(max(m))


def _max_logit_text(variant: str) -> str:
    m = max_logit(variant)
    return f"{m:.0f}" if m >= 100 else fmt(m, 1)


def _qk_bound() -> str:
    """√d_h at the LM's head size: the largest logit QK-norm allows while the q and k gains are 1."""
    return fmt(math.sqrt(_setting("d_model") // _setting("n_head")), 1)


def _count(field: str) -> str:
    return str(sum(e[field] for e in _summ().values()))


# What the page quotes one by one (the summary table below has every variant and setting):
# (variant, learning rate, warmup) of the final losses and of the stall counts it names, and the variants
# whose gradient ratio, stream growth and largest logit it names.
_FINALS = (("post", "lo", "none"), ("post", "lo", "warmup"), ("post", "hi", "none"), ("post", "hi", "warmup"),
           ("pre", "lo", "none"), ("pre", "lo", "warmup"), ("pre", "hi", "none"), ("pre", "hi", "warmup"),
           ("pre+qk", "hi", "none"), ("output", "lo", "none"), ("output", "lo", "warmup"), ("output", "hi", "warmup"),
           ("peri", "lo", "none"), ("peri", "hi", "none"), ("output", "hi", "none"),
           ("deepnorm", "lo", "none"), ("mixln", "lo", "none"), ("mixln", "hi", "none"), ("mixln", "hi", "warmup"),
           ("peri+qk", "hi", "none"), ("output+qk", "hi", "none"))
_SEED_RANGES = (("post", "lo", "warmup"),)
_STALLS = (("deepnorm", "hi", "none"), ("deepnorm", "hi", "warmup"))
_GRAD_RATIOS = ("post", "pre", "peri", "output", "deepnorm", "mixln", "pre+qk", "output+qk")
_STREAM_DEEP = ("pre", "peri", "mixln")
_SPREADS = ("pre", "mixln")
_DETACH = ("output",)
_STREAM_GRAD = ("output", "output+qk", "pre")
_MAX_LOGITS = ("pre", "pre+qk", "output", "output+qk")  # the QK-norm section's table has all three pairs

def _approx(n: int, lang: str) -> str:
    """A count of thousands, to two significant digits, in each language's own unit: Chinese counts in tens
    of thousands (80 619 → 8.1 of them; its unit is in labels.yml), English in thousands ("81 thousand")."""
    if not isinstance(n, int) or n < 1000:
        raise ValueError(f"n must be an int of at least 1000, got {n!r}")
    if lang == "zh":
        return t(lang, "{{n}} ten thousand", n=f"{float(f'{n / 1e4:.2g}'):g}")
    return t(lang, "{{n}} thousand", n=f"{float(f'{n / 1e3:.2g}'):g}")


register({
    # the committed run: where, when, how long
    "placement.machine": machine_text,
    "placement.load": lambda: fmt(_rep()["machine"]["load_average"][0], 1),  # 1-minute load when the run began
    "placement.minutes": lambda: f"{_rep()['seconds'] / 60:.0f}",
    "placement.runs": lambda: str(len(_rep()["runs"])),
    # the training set-up
    **{f"placement.lm.{k}": (lambda k=k: str(_setting(k)))
       for k in ("n_layer", "d_model", "n_head", "block_size", "batch", "steps", "warmup")},
    "placement.lm.seeds": lambda: str(len(_setting("seeds"))),
    "placement.lm.variants": lambda: str(len(_setting("variants"))),
    "placement.lm.lr_lo": lambda: f"{_lr('lo'):g}",
    "placement.lm.lr_hi": lambda: f"{_lr('hi'):g}",
    "placement.corpus.chars": lambda: count(int(_rep()['corpus']['chars'])),
    "placement.corpus.approx_chars": lambda lang: _approx(int(_rep()["corpus"]["chars"]), lang),
    "placement.corpus.vocab": lambda: str(_rep()["corpus"]["vocab"]),
    "placement.corpus.files": lambda: str(len(_rep()["corpus"]["files"])),
    "placement.corpus.chunk": lambda: count(int(_lab().corpus_of(_rep()).chunk)),
    "placement.corpus.every": lambda: str(_lab().corpus_of(_rep()).every),
    "placement.unigram": lambda: fmt(_rep()["corpus"]["unigram_loss"], 2),
    "placement.uniform": lambda: fmt(_rep()["uniform_loss"], 2),
    # DeepNorm's α and β, and Mix-LN's Post-LN layers, for the lab's depth and the depths the page names
    "placement.deepnorm.alpha_lm": lambda: _deepnorm("alpha", _setting("n_layer"), 2),
    "placement.deepnorm.beta_lm": lambda: _deepnorm("beta", _setting("n_layer"), 2),
    **{f"placement.deepnorm.alpha{n}": (lambda n=n: _deepnorm("alpha", n, 2)) for n in (12, 1000)},
    **{f"placement.deepnorm.beta{n}": (lambda n=n: _deepnorm("beta", n, 3)) for n in (12, 1000)},
    "placement.mixln.post_lm": lambda: _mixln_post_layers(_setting("n_layer")),
    # at initialization: the settings, gradient ratios, stream growth and Lemma 2's range
    "placement.grad.layers": lambda: str(_lab().GRAD["n_layer"]),
    "placement.grad.seeds": lambda: str(len(_lab().GRAD["seeds"])),
    "placement.stream.d": lambda: str(_lab().STREAM["d_model"]),
    "placement.stream.depth_lo": lambda: str(_lab().STREAM["depths"][0]),
    "placement.stream.depth_hi": lambda: str(_deep()),
    "placement.stream.seeds": lambda: str(len(_lab().STREAM["seeds"])),
    **{f"placement.grad_ratio.{key(v)}": (lambda v=v: fmt(grad_ratio(v), 2)) for v in _GRAD_RATIOS},
    **{f"placement.stream48.{key(v)}": (lambda v=v: _stream_growth_text(v, 48)) for v in _STREAM_DEEP},
    # the unevenness of the gradient profile (max ÷ min and CV across layers), where the page compares it
    **{f"placement.grad_max_min.{key(v)}": (lambda v=v: fmt(grad_spread(v)["max_over_min"], 2)) for v in _SPREADS},
    **{f"placement.grad_cv.{key(v)}": (lambda v=v: fmt(grad_spread(v)["cv"], 2)) for v in _SPREADS},
    # the detach control: every sub-layer's input detached, the FFN gradient profile of the output norm ...
    **{f"placement.detach.ratio.{key(v)}": (lambda v=v: fmt(grad_spread(v, detached=True)["first_over_last"], 2))
       for v in _DETACH},
    **{f"placement.detach.max_min.{key(v)}": (lambda v=v: fmt(grad_spread(v, detached=True)["max_over_min"], 2))
       for v in _DETACH},
    # ... and, undetached, how much more gradient the stream carries at x_0 than at x_L
    **{f"placement.stream_grad.{key(v)}": (lambda v=v: _ratio_text(stream_grad_ratio(v))) for v in _STREAM_GRAD},
    "placement.lemma2.pre_lo": lambda: _lemma2(lo=True),
    "placement.lemma2.pre_hi": lambda: _lemma2(lo=False),
    # training: final held-out losses, stalls, the largest attention logits, totals
    **{f"placement.final.{key(v)}.{a}.{b}": (lambda lang, v=v, a=a, b=b: _final_text(final(v, a, b), lang))
       for v, a, b in _FINALS},
    # the spread over seeds where the page gives it (Post-LN with warmup at the low rate)
    **{f"placement.final_{m}.{key(v)}.{a}.{b}": (lambda v=v, a=a, b=b, m=m: fmt(final(v, a, b)["final_" + m], 2))
       for v, a, b in _SEED_RANGES for m in ("min", "max")},
    **{f"placement.stalled.{key(v)}.{a}.{b}": (lambda v=v, a=a, b=b: str(final(v, a, b)["stalled"]))
       for v, a, b in _STALLS},
    **{f"placement.max_logit.{key(v)}.none": (lambda v=v: _max_logit_text(v)) for v in _MAX_LOGITS},
    "placement.qk_bound": _qk_bound,
    "placement.diverged_total": lambda: _count("diverged"),
    "placement.stalled_total": lambda: _count("stalled"),
})


def _summary_table(lang: str) -> Table:
    """One row per variant: gradient ratio (layer 1 ÷ last, and max ÷ min across layers), stream growth at the deeper stack, final held-out loss at each learning
    rate with and without warmup, and how many seeds diverged / stalled in all."""
    pl = _lab()
    lo, hi = f"{_lr('lo'):g}", f"{_lr('hi'):g}"
    runs_per_variant = 4 * len(_setting("seeds"))
    deep = _deep()
    heads = [t(lang, "layout"), t(lang, "gradient ratio (layer 1 ÷ last)"), t(lang, "gradient max ÷ min (across layers)"),
             t(lang, "stream growth at {{deep}} layers", deep=deep)]
    heads += [t(lang, "lr {{lr}}, no warmup", lr=lo), t(lang, "lr {{lr}}, warmup", lr=lo),
              t(lang, "lr {{lr}}, no warmup", lr=hi), t(lang, "lr {{lr}}, warmup", lr=hi)]
    heads.append(t(lang, "diverged / stalled (of {{n}} runs)", n=runs_per_variant))
    rows = []
    for v in pl.VARIANTS:
        cells = [pl.variant_name(v, lang), fmt(grad_ratio(v), 2),
                 fmt(pl.spread(pl.grad_per_layer()[v])["max_over_min"], 2), fmt(stream_growth(v, deep), 2) + "×"]
        div = stalled = 0
        for a in ("lo", "hi"):
            for b in ("none", "warmup"):
                e = final(v, a, b)
                cells.append(_final_text(e, lang))
                div, stalled = div + e["diverged"], stalled + e["stalled"]
        cells.append(f"{div} / {stalled}")
        rows.append(tuple(cells))
    return Table((Column(heads[0], "left"),) + tuple(Column(x) for x in heads[1:]), tuple(rows))


def _qk_table(lang: str) -> Table:
    """The QK-norm section's pairs at the high learning rate without warmup: the largest attention logit at the end
    of training (max over layers of the seed means) and the final held-out loss, without and with QK-norm."""
    pl = _lab()
    heads = [t(lang, x) for x in ("layout", "largest logit, no QK-norm", "largest logit, with QK-norm",
                                  "held-out loss, no QK-norm", "held-out loss, with QK-norm")]
    bases = pl.QK_PAIRS[::2]
    rows = tuple((pl.variant_name(b, lang), _max_logit_text(b), _max_logit_text(b + "+qk"),
                  _final_text(final(b, "hi", "none"), lang), _final_text(final(b + "+qk", "hi", "none"), lang))
                 for b in bases)
    return Table((Column(heads[0], "left"),) + tuple(Column(x) for x in heads[1:]), rows)


register_tables({"placement.by_layout": _summary_table, "placement.qk_pairs": _qk_table})
