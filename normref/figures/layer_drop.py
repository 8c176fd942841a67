"""The layer-drop figure: SmolLM2's loss with each block dropped, beside the stream's growth (issue R, item 3)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from . import figure, labels
from ._style import PALETTES, colors
from ..experiments.layer_drop import layer_drop

# The cached experiments this module reads (normref.experiments.declared): a build runs each once, first.
EXPERIMENTS = (
    'normref.experiments.layer_drop:layer_drop()',
)


t = labels(__name__)  # the labels: English here, Chinese in figures.yml (labels:)

__all__ = ["layer_drop_figure", "layer_drop_fields"]


def layer_drop_fields() -> dict:
    from ..values.committed import caption_fields

    d = layer_drop()
    return {**caption_fields("layer_drop"), "model": d["model"], "weights": d["weights"], "n_tokens": d["n_tokens"], "n_layer": d["n_layer"],
            "base": f"{d['base']:.2f}"}


@figure("layer_drop", fields=layer_drop_fields)
def layer_drop_figure(lang: str, theme: str):
    d = layer_drop()
    p, c = PALETTES[theme], colors(theme)
    layers = np.arange(1, d["n_layer"] + 1)
    fig, (a, b) = plt.subplots(2, 1, figsize=(6.4, 7.0), layout="constrained")  # stacked: legible at column width
    a.bar(layers, d["delta"], color=c[1], width=0.8)
    if min(d["delta"]) > 0:  # a block whose removal helps would have no place on a log axis
        a.set_yscale("log")
    half = d["n_layer"] // 2  # the median cost of each half, as a dashed line over its blocks (issue T: no verdict
    # rests on one threshold; the page reads the halves' medians and several cut-offs)
    delta = np.asarray(d["delta"])
    for lo, hi, part in ((0.5, half + 0.5, delta[:half]), (half + 0.5, d["n_layer"] + 0.5, delta[half:])):
        a.hlines(np.median(part), lo, hi, colors=p["fg"], linestyles="--", lw=1.2,
                 label=t(lang, "median of each half") if lo == 0.5 else None)
    a.legend(loc="upper right", fontsize=9, frameon=False, labelcolor=p["fg"])
    a.set_xlabel(t(lang, "block dropped (from 1)"))
    a.set_ylabel(t(lang, "increase in cross-entropy (nats, log scale)"))
    a.set_title(t(lang, "One block dropped at a time; whole model: {{base:.2f}} nats", base=d['base']),
                fontsize=10)
    b.plot(layers, d["stream_l2"], color=c[0], lw=2, marker="o", ms=3)
    b.set_xlabel(t(lang, "block (stream entering it)"))
    b.set_ylabel(t(lang, "mean L2 per token (position 0 aside)"))
    b.set_title(t(lang, "Length of the residual stream"), fontsize=10)
    for ax in (a, b):
        ax.set_xlim(0.3, d["n_layer"] + 0.7)
        ax.tick_params(axis="x", colors=p["fg"])
    return fig
