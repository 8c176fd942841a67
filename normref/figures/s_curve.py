"""The S-curve figure: SmolLM2's RMSNorm, element by element, with tanh fits (issue R, item 2)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.colors import LogNorm

from . import figure, labels
from ._style import PALETTES, colors
from ..experiments.s_curve import s_curve

# The cached experiments this module reads (normref.experiments.declared): a build runs each once, first.
EXPERIMENTS = (
    'normref.experiments.s_curve:s_curve()',
)


t = labels(__name__)  # the labels: English here, Chinese in figures.yml (labels:)

__all__ = ["s_curve_figure", "s_curve_fields"]


def s_curve_fields() -> dict:
    """The caption's placeholders: what was measured, read from the measurement itself."""
    d = s_curve()
    return {"model": d["model"], "weights": d["weights"], "n_tokens": d["n_tokens"], "d": d["d"],
            "layers": ", ".join(str(L["layer"]) for L in d["layers"]),
            "layers_zh": t("zh", ", ").join(str(L["layer"]) for L in d["layers"])}  # a Chinese list takes 、


def _panel(ax, x, y, rms, fit, norm, p, c, lang, cmap, title):
    rel = rms / np.median(rms)  # a token's RMS against the layer's typical one: comparable across layers
    order = np.argsort(rel, kind="stable")  # draw flat (large-RMS) tokens last, on top
    rgba = cmap(norm(rel[order]))  # one color per token, from the colormap's own table (as scatter looks it up)
    big = rel[order] > 5  # the few far-out, flat tokens (position 0) must stay visible: larger dots
    # Each run of tokens with one color and one dot size is one marker line, not one scatter point per element:
    # Agg stamps a marker it has drawn once (draw_markers) where a scatter draws every point's path
    # (draw_path_collection), about 3x the time for these 8 x 39,168 points. Same colors, sizes and order.
    start = 0
    for end in range(1, len(order) + 1):
        if end < len(order) and big[end] == big[start] and np.array_equal(rgba[end], rgba[start]):
            continue
        rows = order[start:end]
        ax.plot(x[rows].ravel(), y[rows].ravel(), ls="none", marker="o", ms=3.0 if big[start] else 1.5 ** 0.5,
                mew=0, color=rgba[start], rasterized=True)
        start = end
    grid = np.linspace(x.min(), x.max(), 400)
    ax.plot(grid, fit["a"] * np.tanh(fit["b"] * grid), color=c[0], lw=1.6, ls="--",
            label=t(lang, "tanh fit, R² = {{r2_tanh:.3f}}", r2_tanh=fit['r2_tanh']))
    ax.plot(grid, fit["c"] * grid, color=p["muted"], lw=1.0, ls=":",
            label=t(lang, "line fit, R² = {{r2_linear:.3f}}", r2_linear=fit['r2_linear']))
    ax.set_ylim(np.abs(y).max() * -1.1, np.abs(y).max() * 1.1)
    # The panel's title and its fits' R² above the plot, outside the data: no placement inside the
    # axes is clear of the points and curves in every panel (the plateaus and the far-out tokens).
    ax.legend(title=title, title_fontsize=9, fontsize=8, loc="lower center", bbox_to_anchor=(0.5, 1.0),
              borderaxespad=0.2, borderpad=0.2, labelspacing=0.3, handlelength=2.4)


@figure("s_curve", fields=s_curve_fields)
def s_curve_figure(lang: str, theme: str):
    d = s_curve()
    p, c = PALETTES[theme], colors(theme)
    cmap = plt.get_cmap("viridis" if theme == "light" else "plasma")
    Ls = d["layers"]
    # One row per layer, every token on the left and position 0 left out on the right: narrow enough
    # that the smallest text stays legible at the page's column width.
    fig, axes = plt.subplots(len(Ls), 2, figsize=(6.4, 3.4 * len(Ls) + 1.2), squeeze=False, layout="constrained")
    rel = np.concatenate([np.asarray(L["rms"]) / np.median(L["rms"]) for L in Ls])
    norm = LogNorm(rel.min(), rel.max())
    for k, L in enumerate(Ls):
        x = np.asarray(L["x"], dtype=np.float64)
        rms = np.asarray(L["rms"])
        y = x / rms[:, None]
        left, right = axes[k][0], axes[k][1]
        _panel(left, x, y, rms, L["fit_all"], norm, p, c, lang, cmap,
               t(lang, "layer {{layer}}, every token", layer=L['layer']))
        _panel(right, x[1:], y[1:], rms[1:], L["fit_rest"], norm, p, c, lang, cmap,
               t(lang, "layer {{layer}}, position 0 left out", layer=L['layer']))
        left.set_ylabel(t(lang, "output before the gain, x_i / RMS(x)"))
    for ax in axes[-1]:
        ax.set_xlabel(t(lang, "norm input x_i"))
    sm = plt.cm.ScalarMappable(norm=norm, cmap=cmap)
    bar = fig.colorbar(sm, ax=axes, orientation="horizontal", shrink=0.8, aspect=40)
    bar.set_label(t(lang, "the token's RMS(x) ÷ the layer's median RMS (log scale)"))
    return fig
