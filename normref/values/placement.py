"""Values of the placement page ("Where the norm goes").

Two sources, as the page says: the initialisation measurements are computed at
build time (normref.experiments.placement, cached); the training numbers come
from the committed lab (normref/results/placement-cpu.json), never from a run at
build time. Value names use the variant with "+" written "_": ``placement.final.pre_qk.hi.none``.
"""

from __future__ import annotations

import math

from . import fmt, value
from ..blocks import deepnorm_alpha, deepnorm_beta, mixln_post_layers
from ..experiments import placement as pl


def key(variant: str) -> str:
    return variant.replace("+", "_")


def _rep():
    from ..results.placement import placement_cpu

    return placement_cpu()


def _summ():
    from ..results.placement import summary

    return summary()


def _lr(which: str) -> float:
    lrs = sorted(_rep()["setting"]["lrs"])
    return {"lo": lrs[0], "hi": lrs[-1]}[which]


def _w(which: str) -> int:
    return {"none": 0, "warmup": _rep()["setting"]["warmup"]}[which]


# ------------------------------------------------------------------ where and when (the committed run)


def machine_text(lang: str) -> str:
    """The committed run's machine, versions and date, as the page and the captions name them (the run
    itself is one process with one torch thread, which the page says in words)."""
    m = _rep()["machine"]
    if lang == "zh":
        return f"{m['cpu_model']}（{m['cpu_cores']} 核），Python {m['python']}，torch {m['torch']}，{m['date'][:10]}"
    return f"{m['cpu_model']} ({m['cpu_cores']} cores), Python {m['python']}, torch {m['torch']}, {m['date'][:10]}"


@value("placement.machine")
def _machine(lang):
    return machine_text(lang)


@value("placement.date")
def _date(lang):
    return _rep()["machine"]["date"][:10]


@value("placement.load")
def _load(lang):
    """The 1-minute load average when the run began (the machine's 2 cores are shared)."""
    return fmt(_rep()["machine"]["load_average"][0], 1)


@value("placement.minutes")
def _minutes(lang):
    return f"{_rep()['seconds'] / 60:.0f}"


@value("placement.runs")
def _runs(lang):
    return str(len(_rep()["runs"]))


# ------------------------------------------------------------------ the training set-up


for _k in ("n_layer", "d_model", "n_head", "block_size", "batch", "steps", "warmup"):
    value(f"placement.lm.{_k}")(lambda lang, k=_k: str(_rep()["setting"][k]))


@value("placement.lm.seeds")
def _seeds(lang):
    return str(len(_rep()["setting"]["seeds"]))


@value("placement.lm.variants")
def _variants(lang):
    return str(len(_rep()["setting"]["variants"]))


@value("placement.lm.lr_lo")
def _lr_lo(lang):
    return f"{_lr('lo'):g}"


@value("placement.lm.lr_hi")
def _lr_hi(lang):
    return f"{_lr('hi'):g}"


@value("placement.corpus.chars")
def _chars(lang):
    return f"{_rep()['corpus']['chars']:,}"


@value("placement.corpus.kchars")
def _kchars(lang):
    return f"{_rep()['corpus']['chars'] / 1000:.0f}"


@value("placement.corpus.vocab")
def _vocab(lang):
    return str(_rep()["corpus"]["vocab"])


@value("placement.corpus.files")
def _files(lang):
    return str(len(_rep()["corpus"]["files"]))


@value("placement.unigram")
def _unigram(lang):
    return fmt(_rep()["corpus"]["unigram_loss"], 2)


@value("placement.uniform")
def _uniform(lang):
    return fmt(_rep()["uniform_loss"], 2)


@value("placement.deepnorm.alpha_lm")
def _alpha_lm(lang):
    return fmt(deepnorm_alpha(_rep()["setting"]["n_layer"]), 2)


@value("placement.deepnorm.beta_lm")
def _beta_lm(lang):
    return fmt(deepnorm_beta(_rep()["setting"]["n_layer"]), 2)


@value("placement.mixln.post_lm")
def _mix_lm(lang):
    return str(mixln_post_layers(_rep()["setting"]["n_layer"]))


# ------------------------------------------------------------------ DeepNorm's α and β at the depths the page names

for _n in (12, 48, 1000):
    value(f"placement.deepnorm.alpha{_n}")(lambda lang, n=_n: fmt(deepnorm_alpha(n), 2))
    value(f"placement.deepnorm.beta{_n}")(lambda lang, n=_n: fmt(deepnorm_beta(n), 3))


# ------------------------------------------------------------------ at initialisation (build time, cached)


def grad_ratio(variant: str) -> float:
    return pl.grad_ratio(pl.grad_per_layer(), variant)


def stream_growth(variant: str, n_layer: int) -> float:
    return pl.stream_growth(pl.stream_lengths(n_layer), variant)


@value("placement.grad.layers")
def _glayers(lang):
    return str(pl.GRAD["n_layer"])


@value("placement.grad.seeds")
def _gseeds(lang):
    return str(len(pl.GRAD["seeds"]))


@value("placement.stream.d")
def _sd(lang):
    return str(pl.STREAM["d_model"])


@value("placement.stream.depth_lo")
def _depth_lo(lang):
    return str(pl.STREAM["depths"][0])


@value("placement.stream.depth_hi")
def _depth_hi(lang):
    return str(pl.STREAM["depths"][-1])


@value("placement.corpus.chunk")
def _chunk(lang):
    return f"{pl.corpus_of(_rep()).chunk:,}" if lang == "en" else str(pl.corpus_of(_rep()).chunk)


@value("placement.corpus.every")
def _every(lang):
    return str(pl.corpus_of(_rep()).every)


@value("placement.stream.seeds")
def _sseeds(lang):
    return str(len(pl.STREAM["seeds"]))


for _v in pl.VARIANTS:
    value(f"placement.grad_ratio.{key(_v)}")(lambda lang, v=_v: fmt(grad_ratio(v), 2))
    for _n in pl.STREAM["depths"]:
        value(f"placement.stream{_n}.{key(_v)}")(lambda lang, v=_v, n=_n: fmt(stream_growth(v, n), 2))


@value("placement.lemma2.pre_lo")
def _l2lo(lang):
    """Lemma 2's lower bound on Pre-LN's stream growth at the deeper stack: √(1 + L/2)."""
    return fmt(math.sqrt(1 + pl.STREAM["depths"][-1] / 2), 2)


@value("placement.lemma2.pre_hi")
def _l2hi(lang):
    return fmt(math.sqrt(1 + 1.5 * pl.STREAM["depths"][-1]), 2)


# ------------------------------------------------------------------ training (the committed lab)


def final(variant: str, lr: str, w: str) -> dict:
    return _summ()[(variant, _lr(lr), _w(w))]


def _final_text(e: dict, lang: str) -> str:
    if not math.isfinite(e["final"]):
        return "发散" if lang == "zh" else "diverged"
    return fmt(e["final"], 2)


for _v in pl.VARIANTS:
    for _lrk in ("lo", "hi"):
        for _wk in ("none", "warmup"):
            _name = f"{key(_v)}.{_lrk}.{_wk}"
            value(f"placement.final.{_name}")(lambda lang, v=_v, a=_lrk, b=_wk: _final_text(final(v, a, b), lang))
            value(f"placement.diverged.{_name}")(lambda lang, v=_v, a=_lrk, b=_wk: str(final(v, a, b)["diverged"]))
            value(f"placement.stalled.{_name}")(lambda lang, v=_v, a=_lrk, b=_wk: str(final(v, a, b)["stalled"]))


def max_logit(variant: str, w: str = "none") -> float:
    """The largest attention logit at the end of training at the high learning rate (max over layers, mean over seeds)."""
    m = final(variant, "hi", w)["max_logit"]
    return float("nan") if m is None else float(max(m))


for _v in pl.QK_PAIRS:
    for _wk in ("none", "warmup"):
        value(f"placement.max_logit.{key(_v)}.{_wk}")(lambda lang, v=_v, w=_wk: f"{max_logit(v, w):.0f}"
                                                       if max_logit(v, w) >= 100 else fmt(max_logit(v, w), 1))


@value("placement.qk_bound")
def _qk_bound(lang):
    """√d_h at the LM's head size: the largest logit QK-norm allows while the q and k gains are 1."""
    s = _rep()["setting"]
    return fmt(math.sqrt(s["d_model"] // s["n_head"]), 1)


def _count(field: str) -> int:
    return sum(e[field] for e in _summ().values())


@value("placement.diverged_total")
def _div_total(lang):
    return str(_count("diverged"))


@value("placement.stalled_total")
def _stalled_total(lang):
    return str(_count("stalled"))


@value("placement.table")
def _table(lang):
    """One row per variant: gradient ratio, stream growth at the deeper stack, final held-out loss at each learning
    rate with and without warmup, and how many seeds diverged / stalled in all."""
    zh = lang == "zh"
    lo, hi = f"{_lr('lo'):g}", f"{_lr('hi'):g}"
    n_seeds = len(_rep()["setting"]["seeds"])
    runs_per_variant = 4 * n_seeds
    deep = pl.STREAM["depths"][-1]
    if zh:
        head = (f"| 接法 | 梯度比（第 1 层 ÷ 末层） | {deep} 层时残差流增长 | 学习率 {lo}，不预热 | 学习率 {lo}，预热 | "
                f"学习率 {hi}，不预热 | 学习率 {hi}，预热 | 发散 / 停滞（共 {runs_per_variant} 次） |")
    else:
        head = (f"| layout | gradient ratio (layer 1 ÷ last) | stream growth at {deep} layers | lr {lo}, no warmup | "
                f"lr {lo}, warmup | lr {hi}, no warmup | lr {hi}, warmup | diverged / stalled (of {runs_per_variant} runs) |")
    lines = [head, "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for v in pl.VARIANTS:
        cells = [pl.variant_name(v, lang), fmt(grad_ratio(v), 2), fmt(stream_growth(v, deep), 2) + "×"]
        div = stalled = 0
        for a in ("lo", "hi"):
            for b in ("none", "warmup"):
                e = final(v, a, b)
                cells.append(_final_text(e, lang))
                div, stalled = div + e["diverged"], stalled + e["stalled"]
        cells.append(f"{div} / {stalled}")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)
