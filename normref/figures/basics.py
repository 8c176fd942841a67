"""Figures of the home page: what RMSNorm does to the length of a vector."""

from __future__ import annotations

import matplotlib.pyplot as plt

from . import figure
from ._style import PALETTES, colors, t
from ..experiments.scale import scale_sweep


@figure(
    "scale_invariance",
    alt={
        "zh": "对数坐标图：把一个 256 维向量从 0.1 倍拉伸到 10 倍，输入的 L2 长度随倍数成比例增长，"
              "而 RMSNorm 输出的 L2 长度始终停在 √256 = 16。",
        "en": "Log-log plot: as a 256-dimensional vector is stretched from 0.1x to 10x, its input L2 length "
              "grows in proportion, while the L2 length of the RMSNorm output stays at √256 = 16.",
    },
    caption={
        "zh": "合成示意：固定种子（seed 0）的 256 维高斯向量，无增益（g = 1），ε = 1e-6；由 normref 在构建时计算。",
        "en": "Synthetic illustration: a 256-dimensional Gaussian vector with a fixed seed (seed 0), no gain (g = 1), "
              "ε = 1e-6; computed by normref at build time.",
    },
    deps=("normref.experiments.scale", "normref.norms", "normref.stats"),
)
def scale_invariance(lang: str, theme: str):
    r = scale_sweep()
    c = colors(theme)
    fig, ax = plt.subplots(figsize=(6.4, 3.6))
    ax.loglog(r["scales"], r["l2_in"], color=c[1], lw=2, label=t(lang, "输入 x 的 L2 长度", "L2 length of the input x"))
    ax.loglog(r["scales"], r["l2_out"], color=c[0], lw=2.5,
              label=t(lang, "RMSNorm(x) 的 L2 长度", "L2 length of RMSNorm(x)"))
    ax.axhline(r["sqrt_d"], color=PALETTES[theme]["muted"], lw=1, ls="--")
    ax.annotate(f"√{r['d']} = {r['sqrt_d']:g}", (r["scales"][0], r["sqrt_d"]), xytext=(4, 6),
                textcoords="offset points", color=c[0])
    ax.set_xlabel(t(lang, "拉伸倍数 c（输入为 c·x）", "stretch factor c (input is c·x)"))
    ax.set_ylabel(t(lang, "L2 长度", "L2 length"))
    ax.set_title(t(lang, "输入怎么拉伸，RMSNorm 的输出长度都不变", "However the input is stretched, RMSNorm's output length stays put"))
    ax.legend(loc="upper left")
    fig.tight_layout()
    return fig
