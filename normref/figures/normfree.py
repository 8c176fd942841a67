"""Inside a trained model (issue W): SmolLM2's norms frozen or replaced by a fitted DyT one at a time, and
each block dropped, over several texts. Drawn from the committed report, normref/results/normfree-cpu.json."""

from __future__ import annotations

import re

import matplotlib.pyplot as plt
import numpy as np

from . import figure, labels
from ._style import PALETTES, colors
from ..results.normfree import normfree_cpu, summary

t = labels(__name__)  # the labels: English here, Chinese in figures.yml (labels:)

__all__ = ["normfree_norms_figure", "normfree_depth_figure", "normfree_fields"]


def normfree_fields() -> dict:
    r = normfree_cpu()
    # "Q4_1 weights (embeddings Q8_0), dequantized to float32": the types, for a caption in either language
    m = re.match(r"(\S+) weights \(embeddings (\S+)\)", r["weights"])
    if m is None:
        raise ValueError(f"normfree-cpu.json: weights {r['weights']!r} does not name its types as expected")
    return {"n_texts": len(r["texts"]), "n_tokens": r["n_tokens"], "n_norms": len(r["sites"]),
            "n_layer": len(r["texts"][0]["drop"]), "matrix": m.group(1), "embedding": m.group(2),
            "cpu": r["machine"]["cpu_model"],
            "torch": r["machine"]["torch"], "date": r["machine"]["date"][:10]}


def _whiskers(ax, x, e, color, label, marker, offset=0.0):
    mean, lo, hi = (np.asarray(e[k]) for k in ("mean", "lo", "hi"))
    ax.errorbar(x + offset, mean, yerr=[mean - lo, hi - mean], fmt=marker, color=color, ms=3.5, lw=0.9,
                capsize=0, label=label)


def _norm_axis(ax, n_norms: int, fg, lang: str):
    # two norms per block (attention, then MLP), then the final norm: tick each fifth block's attention norm
    blocks = np.arange(0, (n_norms - 1) // 2, 5)  # the page numbers blocks from 1
    ax.set_xticks(list(2 * blocks) + [n_norms - 1], [str(b + 1) for b in blocks] + [t(lang, "final")])
    ax.set_xlim(-1, n_norms)
    ax.set_yscale("symlog", linthresh=0.01)
    ax.axhline(0, color=fg, lw=0.6)
    ax.tick_params(axis="x", colors=fg)


@figure("normfree_norms", fields=normfree_fields)
def normfree_norms_figure(lang: str, theme: str):
    s, r = summary(), normfree_cpu()
    p, c = PALETTES[theme], colors(theme)
    n = len(r["sites"])
    x = np.arange(n)
    fig, axes = plt.subplots(2, 1, figsize=(6.4, 7.0), layout="constrained", sharex=True)
    for ax, kind, title in ((axes[0], "freeze", "Each norm's 1/RMS frozen to a constant, one at a time"),
                            (axes[1], "dyt", "Each norm replaced by a fitted DyT, one at a time")):
        _whiskers(ax, x, s[f"{kind}_one"], c[1], t(lang, "every token"), "o", -0.15)
        _whiskers(ax, x, s[f"{kind}_keep0_one"], c[0], t(lang, "position 0 kept per-token"), "s", 0.15)
        _norm_axis(ax, n, p["fg"], lang)
        ax.set_ylabel(t(lang, "increase in cross-entropy (nats)"))
        ax.set_title(t(lang, title), fontsize=10)
        # a text's cost can dip just below zero; far below it there is nothing to show
        ax.set_ylim(-0.05, None)
    # one legend for both panels, above them, where no point can sit under it
    fig.legend(*axes[0].get_legend_handles_labels(), loc="outside upper center", ncol=2, fontsize=8,
               frameon=False, labelcolor=p["fg"])
    axes[1].set_xlabel(t(lang, "norm (block from 1: before attention, before the MLP; then the final norm)"))
    return fig


@figure("normfree_depth", fields=normfree_fields)
def normfree_depth_figure(lang: str, theme: str):
    s, r = summary(), normfree_cpu()
    p, c = PALETTES[theme], colors(theme)
    L = len(r["texts"][0]["drop"])
    x = np.arange(1, L + 1)  # blocks from 1, as the page numbers them
    fig, (a, b) = plt.subplots(2, 1, figsize=(6.4, 7.0), layout="constrained", sharex=True)
    _whiskers(a, x, s["drop"], c[1], t(lang, "mean over the texts (bars: lowest to highest text)"), "o")
    a.set_yscale("log")
    # the bars of the cheapest blocks reach texts where a drop costs almost nothing (or a hair below zero, off a
    # log axis): the axis starts at a fifth of the cheapest mean, so the means and most bars stay in view
    a.set_ylim(min(s["drop"]["mean"]) / 5, None)
    h, half = s["halves"], L // 2
    for lo, hi, e in ((0.5, half + 0.5, h["first_median"]), (half + 0.5, L + 0.5, h["second_median"])):
        a.hlines(e["mean"], lo, hi, colors=p["fg"], linestyles="--", lw=1.2,
                 label=t(lang, "median of each half (mean over the texts)") if lo == 0.5 else None)
    a.set_ylabel(t(lang, "increase in cross-entropy (nats, log scale)"))
    a.set_title(t(lang, "One block dropped at a time"), fontsize=10)
    a.legend(loc="upper right", fontsize=8, frameon=False, labelcolor=p["fg"])
    ang = s["angular"]
    b.fill_between(x, ang["lo"], ang["hi"], color=c[0], alpha=0.25, lw=0)
    b.plot(x, ang["mean"], color=c[0], lw=2, marker="o", ms=3)
    b.set_ylabel(t(lang, "angular distance, input to output (÷ π)"))
    b.set_title(t(lang, "How far each block turns the stream (band: lowest to highest text)"), fontsize=10)
    b.set_xlabel(t(lang, "block (from 1)"))
    for ax in (a, b):
        ax.set_xlim(0.3, L + 0.7)
        ax.tick_params(axis="x", colors=p["fg"])
    return fig
