"""The layer-drop figure: SmolLM2's loss with each block dropped, beside the stream's growth (issue R, item 3)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from . import figure
from ._style import PALETTES, colors, t
from ..experiments.layer_drop import layer_drop

__all__ = ["layer_drop_figure", "layer_drop_fields"]


def layer_drop_fields() -> dict:
    d = layer_drop()
    return {"model": d["model"], "weights": d["weights"], "n_tokens": d["n_tokens"], "n_layer": d["n_layer"],
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
    a.set_xlabel(t(lang, "去掉的块（从 1 数起）", "block dropped (from 1)"))
    a.set_ylabel(t(lang, "交叉熵的增加（nat，对数刻度）", "increase in cross-entropy (nats, log scale)"))
    a.set_title(t(lang, f"逐块去掉：完整模型为 {d['base']:.2f} nat", f"One block dropped at a time; whole model: {d['base']:.2f} nats"),
                fontsize=10)
    b.plot(layers, d["stream_l2"], color=c[0], lw=2, marker="o", ms=3)
    b.set_xlabel(t(lang, "块（进入该块的残差流）", "block (stream entering it)"))
    b.set_ylabel(t(lang, "每词元 L2 的平均（位置 0 除外）", "mean L2 per token (position 0 aside)"))
    b.set_title(t(lang, "残差流的长度", "Length of the residual stream"), fontsize=10)
    for ax in (a, b):
        ax.set_xlim(0.3, d["n_layer"] + 0.7)
        ax.tick_params(axis="x", colors=p["fg"])
    return fig
