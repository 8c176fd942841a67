"""Values of drop-norm's "Inside a trained model" (issue W): SmolLM2-135M's norms frozen, replaced by a fitted
DyT, and its blocks dropped, over the texts of normref/experiments/normfree.yml. All from the committed report
(normref/results/normfree-cpu.json, :mod:`normref.results.normfree`), never from a run at build time.

A cost is the cross-entropy added on a text, in nats; "mean [lo, hi]" is the mean over the texts with a 95%
percentile-bootstrap interval over the texts. Blocks are numbered from 1, as the drop-norm page numbers them.
"""

from __future__ import annotations

import numpy as np

from . import count, fmt, register
from ..labels import labels

t = labels(__name__)  # the Chinese is in normref/labels.yml

KINDS = ("freeze", "freeze_keep0", "dyt", "dyt_keep0")


def _rep():
    from ..results.normfree import normfree_cpu

    return normfree_cpu()


def _s():
    from ..results.normfree import summary

    return summary()


def _ci(e: dict, digits: int = 2) -> str:
    """mean [lo–hi], or the overflow said plainly."""
    return f"{fmt(e['mean'], digits)} [{fmt(e['lo'], digits)}, {fmt(e['hi'], digits)}]"


def _two_figures(v: float) -> str:
    """v to two significant figures (663.03 -> 660)."""
    digits = 1 - int(np.floor(np.log10(abs(v)))) if v else 0
    return fmt(round(v, digits), max(digits, 0))


def _all(kind: str, lang: str) -> str:
    """Every norm swapped at once: the mean cost over the texts to two figures only. The network no longer works,
    and such a network magnifies rounding: one text's all-DyT cost moves by up to several percent between torch's
    CPU kernel sets (tests/test_normfree.py), which the interval over the texts does not measure, so none is given."""
    e = _s()[f"{kind}_all"]
    n = _s()["n_texts"]
    if "mean" not in e:
        return t(lang, "the stream overflows on all {{n}} texts", n=n)
    text = _two_figures(e["mean"])
    if e["overflowed"]:
        text += t(lang, " (on the texts where the stream stays finite; it overflows on {{k}} of {{n}})",
                  k=e["overflowed"], n=n)
    return text


def _one(kind: str) -> np.ndarray:
    return np.asarray(_s()[f"{kind}_one"]["mean"])


def _site_text(j: int, lang: str) -> str:
    """Norm j (0..60) as the page names it: block b's norm before attention / before the MLP, or the final norm."""
    sites = _rep()["sites"]
    if sites[j] == "final_norm":
        return t(lang, "the final norm")
    b = j // 2 + 1
    return t(lang, "block {{b}}'s norm before attention", b=b) if j % 2 == 0 else \
        t(lang, "block {{b}}'s norm before the MLP", b=b)


def _inner(kind: str) -> np.ndarray:
    """One-at-a-time costs of the norms inside the blocks (the final norm aside)."""
    return _one(kind)[:-1]


def _machine(lang: str) -> str:
    m = _rep()["machine"]
    return t(lang, "{{cpu}} ({{cores}} cores), Python {{python}}, torch {{torch}}, {{date}}", cpu=m["cpu_model"],
             cores=m["cpu_cores"], python=m["python"], torch=m["torch"], date=m["date"][:10])


def _calib(k: str) -> list:
    return [c[k] for c in _rep()["calibration"]]


def _pos0_ratio() -> np.ndarray:
    """Per norm inside the blocks: position 0's RMS over the median token's, on the calibration text."""
    return 1.0 / np.asarray(_calib("pos0_over_median")[:-1])


def _halves(k: str) -> str:
    h = _s()["halves"]
    if k in ("first_median", "second_median", "second_minus_first"):
        return _ci(h[k], 2)
    if k.startswith("angular"):
        return _ci(h[k], 3)
    if k == "cheapest_deep":
        e = h[k]
        return f"{fmt(e['mean'], 1)} [{fmt(e['lo'], 1)}, {fmt(e['hi'], 1)}]"
    return str(h[k])


register({
    "normfree.machine": _machine,
    "normfree.minutes": lambda: f"{_rep()['seconds'] / 60:.0f}",
    "normfree.n_texts": lambda: str(_s()["n_texts"]),
    "normfree.n_tokens": lambda: str(_rep()["n_tokens"]),
    "normfree.n_norms": lambda: str(len(_rep()["sites"])),
    "normfree.base": lambda: _ci(_s()["base"]),
    # all norms at once: the cost (or the overflow said plainly), and on how many texts the stream overflowed
    **{f"normfree.all.{k}": (lambda lang, k=k: _all(k, lang)) for k in ("freeze", "dyt", "dyt_keep0")},
    **{f"normfree.all.{k}.overflowed": (lambda k=k: str(_s()[f"{k}_all"]["overflowed"]))
       for k in ("freeze", "freeze_keep0")},
    # one norm at a time, over the norms inside the blocks
    **{f"normfree.one.{k}.median": (lambda k=k: fmt(float(np.median(_inner(k))), 2)) for k in KINDS},
    **{f"normfree.one.{k}.max": (lambda k=k: fmt(float(_one(k).max()), 2)) for k in KINDS[:3]},
    **{f"normfree.one.{k}.max_site": (lambda lang, k=k: _site_text(int(_one(k).argmax()), lang)) for k in KINDS[:3]},
    **{f"normfree.one.{k}.final": (lambda k=k: fmt(float(_one(k)[-1]), 2)) for k in KINDS[:3]},
    "normfree.one.freeze.under_001": lambda: str(int((_inner("freeze") < 0.01).sum())),
    "normfree.n_inner": lambda: str(len(_rep()["sites"]) - 1),
    # the calibration: position 0's RMS against the median token's, and the DyT fits
    "normfree.pos0.median_ratio": lambda: fmt(float(np.median(_pos0_ratio()[2:])), 0),
    "normfree.pos0.max_ratio": lambda: count(int(round(float(_pos0_ratio().max())))),
    "normfree.dyt.n_linear": lambda: str(int(sum(_calib("linear")))),
    "normfree.dyt.r2_median": lambda: fmt(float(np.median(_calib("r2"))), 3),
    "normfree.dyt.r2_min": lambda: fmt(float(np.min(_calib("r2"))), 3),
    # the curse of depth over the texts
    **{f"normfree.halves.{k}": (lambda k=k: _halves(k)) for k in (
        "first_median", "second_median", "second_minus_first", "angular_first_median", "angular_second_median",
        "angular_second_minus_first", "cheapest_k", "cheapest_deep", "texts_deep_cheaper")},
    # how much of one norm's freeze (or DyT) cost keeping position 0 per-token removes, summed over the inner norms
    **{f"normfree.one.{k}.pos0_share": (lambda k=k: fmt(100 * (1 - _inner(f"{k}_keep0").sum() / _inner(k).sum()), 0) + "%")
       for k in ("freeze", "dyt")},
    "normfree.pos0.max_site": lambda lang: _site_text(int(_pos0_ratio().argmax()), lang),
    # the means alone, for answers said out loud (an interval is not read aloud)
    **{f"normfree.halves.{k}.mean": (lambda k=k: fmt(_s()["halves"][k]["mean"], 2)) for k in ("first_median", "second_median")},
    "normfree.drop.max": lambda: fmt(float(np.max(_s()["drop"]["mean"])), 2),
    "normfree.drop.max_block": lambda: str(int(np.argmax(_s()["drop"]["mean"])) + 1),
    "normfree.drop.last": lambda: fmt(float(_s()["drop"]["mean"][-1]), 2),
    "normfree.drop.second_last": lambda: fmt(float(_s()["drop"]["mean"][-2]), 2),
})
