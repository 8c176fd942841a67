"""Figure of the softmax-saturation section: one score pattern, its size swept."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from . import figure
from ._style import PALETTES, colors, t
from ..experiments.softmax import LABELS, SHOWN_SCALES, saturation


@figure("softmax_saturation")
def softmax_saturation(lang: str, theme: str):
    r = saturation()
    c, muted = colors(theme), PALETTES[theme]["muted"]
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(7.2, 3.5), gridspec_kw={"width_ratios": [1.15, 1]})
    x = np.arange(len(LABELS))
    w = 0.8 / len(SHOWN_SCALES)
    for k, s in enumerate(SHOWN_SCALES):
        i = int(np.flatnonzero(r["scales"] == s)[0])
        ax.bar(x + (k - (len(SHOWN_SCALES) - 1) / 2) * w, r["p"][i], w, color=c[(k + 1) % len(c)],
               label=f"c = {s:g}")
    ax.set_xticks(x, LABELS)
    ax.set_ylim(0, 1)
    ax.set_xlabel(t(lang, "候选词元", "candidate token"))
    ax.set_ylabel(t(lang, "softmax 概率", "softmax probability"))
    ax.set_title(t(lang, "同一模式，不同幅值", "One pattern, four magnitudes"), fontsize=10)
    ax.legend(fontsize=8)

    ax2.semilogx(r["scales"], r["top"], color=c[0], lw=2.2, label=t(lang, "最大概率", "top probability"))
    ax2.semilogx(r["scales"], r["jacobian_norm"] / r["jacobian_norm"].max(), color=c[1], lw=2, ls="--",
                 label=t(lang, "雅可比范数（相对峰值）", "Jacobian norm (relative to its peak)"))
    ax2.axhline(1 / len(LABELS), color=muted, lw=0.8, ls=":")
    ax2.set_ylim(0, 1.05)
    ax2.set_xlabel(t(lang, "幅值倍数 c（分数 = c · s）", "magnitude factor c (scores = c · s)"))
    ax2.set_title(t(lang, "幅值越大，越接近 one-hot", "The larger c, the closer to one-hot"), fontsize=10)
    ax2.legend(fontsize=8, loc="center left")
    fig.tight_layout()
    return fig
