"""Figure of the softmax-saturation section: one score pattern, its size swept."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from . import figure, labels
from ._style import PALETTES, colors
from ..experiments.softmax import LABELS, SHOWN_SCALES, saturation

t = labels(__name__)  # the labels: English here, Chinese in figures.yml (labels:)


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
    ax.set_xlabel(t(lang, "candidate token"))
    ax.set_ylabel(t(lang, "softmax probability"))
    ax.set_title(t(lang, "One pattern, four magnitudes"), fontsize=10)
    ax.legend(fontsize=8)

    ax2.semilogx(r["scales"], r["top"], color=c[0], lw=2.2, label=t(lang, "top probability"))
    ax2.semilogx(r["scales"], r["jacobian_norm"] / r["jacobian_norm"].max(), color=c[1], lw=2, ls="--",
                 label=t(lang, "Jacobian norm (relative to its peak)"))
    ax2.axhline(1 / len(LABELS), color=muted, lw=0.8, ls=":")
    ax2.set_ylim(0, 1.05)
    ax2.set_xlabel(t(lang, "magnitude factor c (scores = c · s)"))
    ax2.set_title(t(lang, "The larger c, the closer to one-hot"), fontsize=10)
    ax2.legend(fontsize=8, loc="center left")
    fig.tight_layout()
    return fig
