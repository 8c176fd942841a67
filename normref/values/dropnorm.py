"""Values and the lab table of the page "Can we drop the norm?" (drop-norm.md).

Three sources, as the page says: the lab's training numbers come from the
committed runs (normref/results/dropnorm-cpu.json, and placement-cpu.json for
the Pre-LN baseline), never from a run at build time; the layer-drop and
S-curve numbers are measured on SmolLM2's weights at build time and cached;
the equivalence is computed on a random model at build time (float64, cheap).
Arm names use "_" for ".": ``dropnorm.final.dyt0_5.lo.none``.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from . import Column, Table, count, fmt, register, register_tables
from ..labels import labels

# The cached experiments this module reads (normref.experiments.declared): a build runs each once, first.
EXPERIMENTS = (
    'normref.experiments.layer_drop:layer_drop()',
    'normref.experiments.s_curve:s_curve()',
)


t = labels(__name__)  # the Chinese is in normref/labels.yml


def key(arm: str) -> str:
    return arm.replace(".", "_")


def _rep():
    from ..results.dropnorm import dropnorm_cpu

    return dropnorm_cpu()


def _summ():
    from ..results.dropnorm import summary

    return summary()


def _lab():
    from ..experiments import dropnorm

    return dropnorm


def _lr(which: str) -> float:
    lrs = sorted(_rep()["setting"]["lrs"])
    return {"lo": lrs[0], "hi": lrs[-1]}[which]


def _w(which: str) -> int:
    return {"none": 0, "warmup": _rep()["setting"]["warmup"]}[which]


def machine_text(lang: str) -> str:
    m = _rep()["machine"]
    return t(lang, "{{cpu}} ({{cores}} cores), Python {{python}}, torch {{torch}}, {{date}}", cpu=m["cpu_model"],
             cores=m["cpu_cores"], python=m["python"], torch=m["torch"], date=m["date"][:10])


def final(arm: str, lr: str, w: str) -> dict:
    return _summ()[(arm, _lr(lr), _w(w))]


def _final_text(e: dict, lang: str) -> str:
    if not math.isfinite(e["final"]):
        return t(lang, "diverged")
    return fmt(e["final"], 2)


def best(arm: str) -> float:
    """The arm's best setting: the lowest mean held-out loss over the four (learning rate, warmup) settings."""
    return min(final(arm, a, b)["final"] for a in ("lo", "hi") for b in ("none", "warmup"))


def totals(arm: str) -> tuple[int, int]:
    """(diverged, stalled) runs of the arm over all its settings and seeds."""
    es = [final(arm, a, b) for a in ("lo", "hi") for b in ("none", "warmup")]
    return sum(e["diverged"] for e in es), sum(e["stalled"] for e in es)


def init(arm: str) -> dict:
    return _lab().init_profile(_rep(), arm)


def _deep() -> int:
    return max(int(k) for k in _rep()["at_init"]["stream_setting"]["depths"])


# ------------------------------------------------------------------ equivalence, layer drop, S-curve


def equivalence_diff() -> float:
    """The largest |logit difference| between a random Pre-LN TinyTransformer (the lab's size, float64) and
    its Pre-RMSNorm conversion (normref.equivalence)."""
    import torch

    from .. import equivalence as eq
    from ..blocks import TinyConfig, TinyTransformer

    s = _rep()["setting"]
    torch.manual_seed(0)
    m = TinyTransformer(TinyConfig(placement="pre", n_layer=s["n_layer"], d_model=s["d_model"], n_head=s["n_head"],
                                   vocab_size=_rep()["corpus"]["vocab"], block_size=s["block_size"]))
    with torch.no_grad():  # random gains and biases, so the fold has something to fold
        for n, p in m.named_parameters():
            if "ln" in n:
                p.add_(0.3 * torch.randn_like(p))
    sd = eq.from_torch(m)
    idx = np.random.default_rng(0).integers(0, _rep()["corpus"]["vocab"], (4, s["block_size"]))
    return float(np.abs(eq.forward(sd, idx) - eq.forward(eq.to_pre_rmsnorm(sd), idx, norm="rmsnorm")).max())


def _layer_drop():
    from ..experiments.layer_drop import layer_drop, summary

    d = layer_drop()
    return d, summary(d)


def _ld(k: str) -> str:
    return _ld_table()[k]


@functools.lru_cache(maxsize=1)
def _ld_table() -> dict[str, str]:
    # Every layer_drop.* value reads this table: once per process, since the split share alone draws 20,000
    # random splits (a pass expands the 32 values in both languages; each used to redraw them).
    d, s = _layer_drop()
    delta = np.asarray(d["delta"])
    L = d["n_layer"]
    half = delta[L // 2:]
    stream = np.asarray(d["stream_l2"])
    out = {
        "n_layer": str(L),
        "n_tokens": str(d["n_tokens"]),
        "base": fmt(s["base"], 2),
        "max_delta": fmt(s["max_delta"], 2),
        "max_layer": str(s["max_layer"]),
        "second_layer": str(s["top3"][1]),
        "second_delta": fmt(float(delta[s["top3"][1] - 1]), 2),
        "third_layer": str(s["top3"][2]),
        "third_delta": fmt(float(delta[s["top3"][2] - 1]), 2),
        "n_small": str(s["n_small"]),
        "small_second_half": str(s["small_in_second_half"]),
        "last_delta": fmt(float(delta[-1]), 2),
        "second_last_delta": fmt(float(delta[-2]), 2),
        "first_half_median": fmt(float(np.median(delta[:L // 2])), 2),
        "second_half_median": fmt(float(np.median(half)), 2),
        "small_first_half": str(int((delta[:L // 2] < 0.1 * delta.max()).sum())),
        "stream_growth": fmt(float(stream[-1] / stream[1]), 0),
        # No single threshold decides where the cheap blocks sit (issue T): the count below several fixed
        # cut-offs per half, the K cheapest blocks, and the mean cost without the two blocks at each end.
        **{f"cut.{c}": fmt(v, 2) for c, v in CUTS.items()},
        **{f"below.{c}.{h}": str(int((part < v).sum())) for c, v in CUTS.items()
           for h, part in (("first", delta[:L // 2]), ("second", half))},
        "cheapest_k": str(CHEAPEST),
        "cheapest_k_second_half": str(int((np.argsort(delta)[:CHEAPEST] >= L // 2).sum())),
        "split_share": f"{_split_share(delta):.0%}",
        "n_splits": f"{SPLITS:,}".replace(",", "\u2009"),
        "mean_mid.first": fmt(float(delta[2:L // 2].mean()), 2),
        "mean_mid.second": fmt(float(delta[L // 2:L - 2].mean()), 2),
    }
    return out


def _split_share(delta: np.ndarray) -> float:
    """How often a random split of the blocks into two halves gives a gap between the halves' median costs at
    least as large as the first half's over the second's: how far one model's two halves differ by chance."""
    L = len(delta)
    gap = np.median(delta[:L // 2]) - np.median(delta[L // 2:])
    rng = np.random.default_rng(0)
    perm = np.argsort(rng.random((SPLITS, L)), axis=1)
    shuffled = delta[perm]
    gaps = np.median(shuffled[:, :L // 2], axis=1) - np.median(shuffled[:, L // 2:], axis=1)
    return float(np.mean(gaps >= gap))


SPLITS = 20_000  # random splits of the blocks into two halves, for _split_share
# The fixed cut-offs (nats of cross-entropy added by dropping one block) and the K of "the K cheapest blocks".
CUTS = {"030": 0.30, "020": 0.20, "015": 0.15}
CHEAPEST = 10


def _s_curve(k: str, layer: int) -> str:
    from ..experiments.s_curve import s_curve

    L = next(x for x in s_curve()["layers"] if x["layer"] == layer)
    if k == "pos0":
        return fmt(L["pos0_rms_over_median"], 0)
    raise KeyError(k)


def sci(v: float) -> str:
    """A small positive number as one significant digit times a power of ten: 2×10⁻¹⁵."""
    m, e = f"{v:.0e}".split("e")
    sup = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")
    return f"{m}×10{str(int(e)).translate(sup)}"


# ------------------------------------------------------------------ the data regime (issue T, fidelity W4)

# arXiv 2604.23434 (abstract): DyT improves validation loss for a 64M-parameter GPT-2 on 1M tokens and worsens
# it on 118M tokens. Its yardstick is tokens seen per parameter (T/P); the page puts the lab on the same scale.
PREPRINT = {"params": 64e6, "tokens_scarce": 1e6, "tokens_rich": 118e6}
CHARS_PER_TOKEN = 4  # the page's what-if: a BPE token of several characters (an assumption, said as one)


def lab_params() -> int:
    """Parameters of the lab's Pre-LN model at the committed setting (every arm has the same count up to
    the few scalars DyT and Derf add)."""
    import torch  # noqa: F401 (TinyTransformer needs it)

    from ..blocks import TinyConfig, TinyTransformer

    s = _rep()["setting"]
    m = TinyTransformer(TinyConfig(placement="pre", n_layer=s["n_layer"], d_model=s["d_model"], n_head=s["n_head"],
                                   vocab_size=_rep()["corpus"]["vocab"], block_size=s["block_size"]))
    return sum(p.numel() for p in m.parameters())


def chars_seen() -> int:
    """Characters the lab's model reads in training: steps × batch × block size."""
    s = _rep()["setting"]
    return int(s["steps"]) * int(s["batch"]) * int(s["block_size"])


def regime() -> dict:
    """Data per parameter: the lab's (characters seen, and distinct training characters) and the preprint's two cells."""
    n = lab_params()
    scarce = PREPRINT["tokens_scarce"] / PREPRINT["params"]
    seen = chars_seen() / n
    return {"params": n, "seen": seen, "unique": _rep()["corpus"]["train_chars"] / n, "scarce": scarce,
            "rich": PREPRINT["tokens_rich"] / PREPRINT["params"], "over_scarce_per_token": seen / CHARS_PER_TOKEN / scarce}


# What the page quotes one by one (the table has every arm and setting): (arm, learning rate, warmup).
_FINALS = (("pre", "lo", "none"), ("pre", "hi", "none"), ("pre", "hi", "warmup"), ("dyt0.5", "lo", "none"),
           ("dyt0.5", "hi", "warmup"), ("derf", "lo", "none"), ("lns", "lo", "none"), ("lns", "hi", "warmup"))

register({
    "dropnorm.machine": machine_text,
    "dropnorm.minutes": lambda: f"{_rep()['seconds'] / 60:.0f}",
    "dropnorm.runs": lambda: str(len(_rep()["runs"])),
    "dropnorm.arms": lambda: str(len(_rep()["arms"])),
    "dropnorm.equiv_diff": lambda: sci(equivalence_diff()),
    **{f"dropnorm.best.{key(a)}": (lambda a=a: fmt(best(a), 2)) for a in ("pre", "dyt0.5", "derf")},
    **{f"dropnorm.final.{key(a)}.{x}.{y}": (lambda lang, a=a, x=x, y=y: _final_text(final(a, x, y), lang))
       for a, x, y in _FINALS},
    **{f"dropnorm.grad_ratio.{key(a)}": (lambda a=a: fmt(init(a)["first_over_last"], 2)) for a in ("pre", "lns")},
    **{f"dropnorm.growth.{key(a)}": (lambda a=a: fmt(init(a)["growth"][_deep()], 2)) for a in ("pre", "lns")},
    "dropnorm.deep": lambda: str(_deep()),
    # the untrained stacks the init measurements use (not the trained lab's 8 × 32): layers and width
    "dropnorm.init.grad_layers": lambda: str(_rep()["at_init"]["grad_setting"]["n_layer"]),
    "dropnorm.init.width": lambda: str(_rep()["at_init"]["grad_setting"]["d_model"]),
    **{f"layer_drop.{k}": (lambda k=k: _ld(k)) for k in (
        "n_layer", "n_tokens", "base", "max_delta", "max_layer", "second_layer", "second_delta", "third_layer", "third_delta",
        "n_small", "small_second_half", "small_first_half", "last_delta", "second_last_delta",
        "first_half_median", "second_half_median", "stream_growth", "cheapest_k", "cheapest_k_second_half",
        "mean_mid.first", "mean_mid.second", "split_share", "n_splits", *(f"cut.{c}" for c in CUTS),
        *(f"below.{c}.{h}" for c in CUTS for h in ("first", "second")))},
    **{f"s_curve.pos0.{n}": (lambda n=n: _s_curve("pos0", n)) for n in (15, 30)},
    # the data regime, on arXiv 2604.23434's yardstick (data seen per parameter)
    "dropnorm.regime.params": lambda: count(lab_params()),
    "dropnorm.regime.chars_seen": lambda: count(chars_seen()),
    **{f"dropnorm.regime.{k}": (lambda k=k: str(_rep()["setting"][k])) for k in ("steps", "batch", "block_size")},
    "dropnorm.regime.ratio_seen": lambda: fmt(regime()["seen"], 1),
    "dropnorm.regime.ratio_unique": lambda: fmt(regime()["unique"], 2),
    "dropnorm.regime.ratio_scarce": lambda: fmt(regime()["scarce"], 3),
    "dropnorm.regime.ratio_rich": lambda: fmt(regime()["rich"], 2),
    "dropnorm.regime.chars_per_token": lambda: str(CHARS_PER_TOKEN),
    "dropnorm.regime.over_scarce_per4": lambda: f"{regime()['over_scarce_per_token']:.0f}",
})


def _by_arm(lang: str) -> Table:
    """One row per arm: at init, the FFN gradient's layer 1 ÷ last and the stream's growth at the deeper
    stack; the final held-out loss at each learning rate with and without warmup; diverged / stalled runs."""
    lab = _lab()
    lo, hi = f"{_lr('lo'):g}", f"{_lr('hi'):g}"
    n = 4 * len(_rep()["setting"]["seeds"])
    deep = _deep()
    heads = (t(lang, "layout"), t(lang, "gradient ratio at init (layer 1 ÷ last)"),
             t(lang, "stream growth at init, {{deep}} layers", deep=deep),
             t(lang, "lr {{lr}}, no warmup", lr=lo), t(lang, "lr {{lr}}, warmup", lr=lo),
             t(lang, "lr {{lr}}, no warmup", lr=hi), t(lang, "lr {{lr}}, warmup", lr=hi),
             t(lang, "diverged / stalled (of {{n}} runs)", n=n))
    rows = []
    for a in lab.ARMS:
        p = init(a)
        cells = [lab.arm_name(a, lang), fmt(p["first_over_last"], 2), fmt(p["growth"][deep], 2) + "×"]
        cells += [_final_text(final(a, x, y), lang) for x in ("lo", "hi") for y in ("none", "warmup")]
        dv, st = totals(a)
        cells.append(f"{dv} / {st}")
        rows.append(tuple(cells))
    return Table((Column(heads[0], "left"),) + tuple(Column(x) for x in heads[1:]), tuple(rows))


register_tables({"dropnorm.by_arm": _by_arm})
