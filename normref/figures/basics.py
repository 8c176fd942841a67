"""Figures of the home page: what RMSNorm does to the length of a vector."""

from __future__ import annotations

import matplotlib.pyplot as plt

from . import figure, labels
from ._style import PALETTES, colors
from ..experiments.scale import scale_sweep

t = labels(__name__)  # the labels: English here, Chinese in figures.yml (labels:)


@figure("scale_invariance")
def scale_invariance(lang: str, theme: str):
    r = scale_sweep()
    c = colors(theme)
    fig, ax = plt.subplots(figsize=(6.4, 3.6))
    ax.loglog(r["scales"], r["l2_in"], color=c[1], lw=2, label=t(lang, "L2 length of the input x"))
    ax.loglog(r["scales"], r["l2_out"], color=c[0], lw=2.5,
              label=t(lang, "L2 length of RMSNorm(x)"))
    ax.axhline(r["sqrt_d"], color=PALETTES[theme]["muted"], lw=1, ls="--")
    ax.annotate(f"√{r['d']} = {r['sqrt_d']:g}", (r["scales"][0], r["sqrt_d"]), xytext=(4, 6),
                textcoords="offset points", color=c[0])
    ax.set_xlabel(t(lang, "stretch factor c (input is c·x)"))
    ax.set_ylabel(t(lang, "L2 length"))
    ax.set_title(t(lang, "However the input is stretched, RMSNorm's output length stays put"))
    ax.legend(loc="upper left")
    fig.tight_layout()
    return fig
