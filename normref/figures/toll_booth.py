"""Figures of the toll-booth page: the two topologies and the measured evidence."""

from __future__ import annotations

from dataclasses import asdict

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

from . import figure, labels
from ._style import PALETTES, colors

# The cached experiments this module reads (normref.experiments.declared): a build runs each once, first.
EXPERIMENTS = (
    'normref.experiments.toll_booth:grad_per_layer()',
    'normref.experiments.toll_booth:stream_norms()',
    'normref.experiments.toll_booth:warmup_runs()',
)


t = labels(__name__)  # the labels: English here, Chinese in figures.yml (labels:)

# The experiments import torch: this module imports them inside the functions that draw or caption
# a figure, so listing the figures does not load torch.


# The captions (figures.yml) state the settings; they are read from the experiment module, not retyped.
def _seed_fields(setting: dict) -> dict:
    return {**setting, "n_seeds": len(setting["seeds"]), "seeds": f"{setting['seeds'][0]}–{setting['seeds'][-1]}"}


def _grad_fields() -> dict:
    from ..experiments import toll_booth as tb

    return _seed_fields(tb.GRAD)


def _stream_fields() -> dict:
    from ..experiments import toll_booth as tb

    return _seed_fields(tb.STREAM)


def _warmup_fields() -> dict:
    from ..experiments import toll_booth as tb

    from ..values.committed import caption_fields

    s = tb.TrainSetting()
    return {**asdict(s), "lr": f"{s.lr:g}", **caption_fields("warmup_runs")}


# ------------------------------------------------------------------ the diagram


def _box(ax, xy, w, h, text, fc, ec, fg, lw=1.6, fontsize=10):
    x, y = xy
    ax.add_patch(FancyBboxPatch((x - w / 2, y - h / 2), w, h, boxstyle="round,pad=0.02,rounding_size=0.08",
                                fc=fc, ec=ec, lw=lw, zorder=3))
    ax.text(x, y, text, ha="center", va="center", color=fg, zorder=4, fontsize=fontsize)


def _arrow(ax, a, b, color, lw=1.6, style="-|>", rad=0.0, z=2):
    ax.add_patch(FancyArrowPatch(a, b, arrowstyle=style, mutation_scale=12, color=color, lw=lw,
                                 connectionstyle=f"arc3,rad={rad}", zorder=z, shrinkA=0, shrinkB=0))


def _plus(ax, xy, color, fg):
    ax.add_patch(plt.Circle(xy, 0.17, fc="none", ec=color, lw=1.8, zorder=3))
    ax.text(*xy, "+", ha="center", va="center", color=fg, fontsize=12, zorder=4)


MAIN_X, BRANCH_X = 1.3, 3.0  # where the residual main line and the branch run in a layout diagram


def draw_layout(ax, theme: str, *, in_norm: bool = False, out_norm: bool = False, path_norm: bool = False,
                alpha: str | None = None, norm: str = "LN", f: str = "f") -> dict:
    """One sub-layer wired one way, bottom to top: x_l, the residual main line (thick, left), the branch
    through f (right), their sum, and x_{l+1}.

    ``in_norm`` / ``out_norm`` put a norm on the branch before / after f (Pre-LN; Peri-LN has both; OLMo 2
    only the second); ``path_norm`` puts one on the main line after the sum (Post-LN, DeepNorm); ``alpha``
    labels a scale on the main line before the sum (DeepNorm's α). Every placement page draws its
    diagrams with this, so the pictures share one visual language. Returns the height of each part, for
    annotations.
    """
    p, c = PALETTES[theme], colors(theme)
    fg = p["fg"]
    main, booth, branch = c[1], c[0], c[2]
    # Text on the filled norm box: white on the light theme's deep pink, near-black on the dark theme's pale pink.
    on_booth = "white" if theme == "light" else PALETTES["light"]["fg"]
    ax.set_xlim(0, 4)
    ax.set_ylim(-0.2, 6.3)
    ax.set_aspect("equal")
    ax.axis("off")
    X, BX = MAIN_X, BRANCH_X
    kinds = (["in_norm"] if in_norm else []) + ["f"] + (["out_norm"] if out_norm else [])
    if path_norm:
        ys, plus = [2.1], 3.2
    elif len(kinds) == 3:
        ys, plus = [1.65, 2.75, 3.85], 4.75
    elif len(kinds) == 2:
        ys, plus = [1.9, 3.2], 4.5
    else:
        ys, plus = [2.1], 3.2
    at = {"plus": plus}
    ax.text(X, 0.1, "$x_l$", ha="center", va="center", color=fg, fontsize=12)
    # the main line up to the sum, through α when there is one
    if alpha:
        _arrow(ax, (X, 0.35), (X, 1.85), main, lw=4, style="-")
        _box(ax, (X, 2.1), 0.75, 0.5, alpha, "none", main, fg)
        _arrow(ax, (X, 2.35), (X, plus - 0.17), main, lw=4, style="-")
        at["alpha"] = 2.1
    else:
        _arrow(ax, (X, 0.35), (X, plus - 0.17), main, lw=4, style="-")
    _plus(ax, (X, plus), main, fg)
    if path_norm:
        _arrow(ax, (X, plus + 0.17), (X, 4.15), main, lw=4)
        _box(ax, (X, 4.5), 1.3, 0.65, norm, booth, booth, on_booth, lw=2)
        _arrow(ax, (X, 4.83), (X, 5.75), main, lw=4)
        at["path_norm"] = 4.5
    else:
        _arrow(ax, (X, plus + 0.17), (X, 5.75), main, lw=4)
    ax.text(X, 6.0, "$x_{l+1}$", ha="center", va="center", color=fg, fontsize=12)
    # the branch: split, its boxes, back into the sum
    _arrow(ax, (X, 1.0), (BX, 1.0), branch, style="-")
    below = 1.0
    for kind, y in zip(kinds, ys):
        _arrow(ax, (BX, below), (BX, y - 0.3 - 0.05), branch)
        if kind == "f":
            _box(ax, (BX, y), 1.0, 0.6, f, "none", branch, fg)
        else:
            _box(ax, (BX, y), 1.0, 0.6, norm, booth, booth, on_booth, lw=2)
        at[kind] = y
        below = y + 0.3
    _arrow(ax, (BX, below), (BX, plus), branch, style="-")
    _arrow(ax, (BX, plus), (X + 0.18, plus), branch)
    return at


@figure("topologies")
def topologies(lang: str, theme: str):
    c = colors(theme)
    booth, main = c[0], c[1]
    fig, axes = plt.subplots(1, 2, figsize=(7.2, 4.4))

    ax = axes[0]
    ax.set_title(t(lang, "Post-LN (2017): x_{l+1} = LN(x_l + f(x_l))")
                 .replace("x_{l+1}", "$x_{l+1}$").replace("x_l", "$x_l$"), fontsize=10)
    at = draw_layout(ax, theme, path_norm=True)
    ax.annotate(t(lang, "toll booth on the main line:\nevery layer passes it"),
                (MAIN_X + 0.66, at["path_norm"]), xytext=(2.1, 5.35), color=booth, fontsize=9, ha="left",
                arrowprops=dict(arrowstyle="-", color=booth, lw=1))

    ax = axes[1]
    ax.set_title(t(lang, "Pre-LN: x_{l+1} = x_l + f(LN(x_l))")
                 .replace("x_{l+1}", "$x_{l+1}$").replace("x_l", "$x_l$"), fontsize=10)
    at = draw_layout(ax, theme, in_norm=True)
    ax.text(0.2, 2.6, t(lang, "identity path:\nadditions only"), color=main, fontsize=9,
            ha="left", va="center", rotation=90)
    ax.annotate(t(lang, "check on the exit ramp"), (BRANCH_X + 0.5, at["in_norm"]), xytext=(2.3, 0.35),
                color=booth, fontsize=9, ha="left", arrowprops=dict(arrowstyle="-", color=booth, lw=1))
    fig.tight_layout()
    return fig


# ------------------------------------------------------------------ evidence 1: gradients


def _band(ax, x, rows, color, label):
    m, lo, hi = rows.mean(0), rows.min(0), rows.max(0)
    ax.fill_between(x, lo, hi, color=color, alpha=0.22, lw=0)
    ax.plot(x, m, color=color, lw=2.2, marker="o", ms=4, label=label)


@figure("grad_per_layer", fields=_grad_fields)
def grad_per_layer(lang: str, theme: str):
    from ..experiments import toll_booth as tb

    r = tb.grad_per_layer()
    c = colors(theme)
    fig, ax = plt.subplots(figsize=(6.4, 3.7))
    _band(ax, r["layers"], r["post"], c[0], "Post-LN")
    _band(ax, r["layers"], r["pre"], c[1], "Pre-LN")
    ax.set_xticks(r["layers"])
    ax.set_ylim(bottom=0)
    ax.set_xlabel(t(lang, "layer l (1 = nearest the input)"))
    ax.set_ylabel(t(lang, "‖∂loss/∂W_FFN‖ at initialization"))
    ax.set_title(t(lang, "Gradient norm of each layer's FFN weights at initialization"))
    ax.legend(loc="upper left")
    fig.tight_layout()
    return fig


# ------------------------------------------------------------------ evidence 2: residual stream


@figure("stream_norms", fields=_stream_fields)
def stream_norms(lang: str, theme: str):
    from ..experiments import toll_booth as tb

    r = tb.stream_norms()
    d, ls = r["d"], r["layers"]
    b = tb.lemma2_bounds(d, ls)
    c, muted = colors(theme), PALETTES[theme]["muted"]
    fig, ax = plt.subplots(figsize=(6.4, 3.9))
    ax.fill_between(ls, np.sqrt(b["pre_lo"]), np.sqrt(b["pre_hi"]), color=c[1], alpha=0.10, lw=0)
    ax.plot(ls, np.sqrt(b["pre_hi"]), color=c[1], ls="--", lw=1.2,
            label=t(lang, "Lemma 2 upper bound √((1+3l/2)d)"))
    ax.plot(ls, np.sqrt(b["pre_lo"]), color=c[1], ls=":", lw=1.4,
            label=t(lang, "Lemma 2 lower bound √((1+l/2)d)"))
    ax.plot(ls, np.sqrt(r["pre"].mean(0)), color=c[1], lw=2.4, marker="o", ms=4,
            label=t(lang, "Pre-LN: stream x_l (measured)"))
    ax.plot(ls[1:], np.sqrt(r["post_sum"].mean(0)), color=c[0], lw=1.8, marker="s", ms=3.5,
            label=t(lang, "Post-LN: x + FFN(x) before its norm (measured)"))
    ax.plot(ls, np.sqrt(r["post"].mean(0)), color=c[0], lw=2.4, marker="o", ms=4,
            label=t(lang, "Post-LN: layer output x_l (measured)"))
    ax.axhline(np.sqrt(1.5 * d), color=c[0], ls="--", lw=1.2)
    ax.annotate("√(3d/2)", (ls[-1], np.sqrt(1.5 * d)), xytext=(4, 2), textcoords="offset points", color=c[0],
                fontsize=9)
    ax.annotate(f"√d = {np.sqrt(d):.1f}", (ls[-1], np.sqrt(d)), xytext=(4, -10), textcoords="offset points",
                color=c[0], fontsize=9)
    ax.set_xticks(ls)
    ax.set_xlim(0, ls[-1] + 1.6)
    ax.set_ylim(bottom=0)
    ax.set_xlabel(t(lang, "layer l (0 = the input)"))
    ax.set_ylabel(t(lang, "stream length √E‖x_l‖²"))
    ax.set_title(t(lang, "Residual stream length at initialization (d = {{d}})", d=d))
    ax.legend(loc="upper left", fontsize=8)
    fig.tight_layout()
    return fig


# ------------------------------------------------------------------ evidence 3: warmup


@figure("warmup_curves", fields=_warmup_fields)
def warmup_curves(lang: str, theme: str):
    from ..experiments import toll_booth as tb

    r = tb.warmup_runs()
    c, muted = colors(theme), PALETTES[theme]["muted"]
    fig, ax = plt.subplots(figsize=(6.4, 3.8))
    k = 10
    styles = {"post/none": (c[0], "-"), "post/warmup": (c[0], "--"), "pre/none": (c[1], "-"), "pre/warmup": (c[1], "--")}
    names = {
        "post/none": t(lang, "Post-LN, no warmup"),
        "post/warmup": t(lang, "Post-LN, with warmup"),
        "pre/none": t(lang, "Pre-LN, no warmup"),
        "pre/warmup": t(lang, "Pre-LN, with warmup"),
    }
    for key, (col, ls) in styles.items():
        y = np.convolve(r[key], np.ones(k) / k, mode="valid")
        ax.plot(np.arange(k, len(r[key]) + 1), y, color=col, ls=ls, lw=2, label=names[key])
    ax.axhline(r["entropy"], color=muted, ls=":", lw=1.2)
    ax.annotate(t(lang, "lowest possible loss"), (k, r["entropy"]), xytext=(4, 4),
                textcoords="offset points", color=muted, fontsize=9)
    ax.axvline(r["setting"]["warmup"], color=muted, lw=0.8)
    ax.set_ylim(0, max(float(np.max(r[key][:k])) for key in styles) * 1.02)
    ax.set_xlabel(t(lang, "training step"))
    ax.set_ylabel(t(lang, "cross-entropy loss (nats)"))
    ax.set_title(t(lang, "Same data, same seed: Post-LN vs Pre-LN, with and without warmup"),
                 fontsize=10)
    ax.legend(loc="upper right", fontsize=8)
    fig.tight_layout()
    return fig
