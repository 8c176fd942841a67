"""Figures of the placement page ("Where the norm goes"): the map of layouts and the lab's measurements."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from . import figure, labels
from ._style import PALETTES, colors
from .toll_booth import BRANCH_X, MAIN_X, _arrow, _box, _plus, draw_layout

# The cached experiments this module reads (normref.experiments.declared): a build runs each once, first.
EXPERIMENTS = (
    'normref.experiments.placement:grad_per_layer()',
    'normref.experiments.placement:stream_lengths(12)',
    'normref.experiments.placement:stream_lengths(48)',
)


t = labels(__name__)  # the labels: English here, Chinese in figures.yml (labels:)

# The lab (normref.experiments.placement) imports torch: it is imported inside the functions that draw or
# caption a figure, so listing the figures does not load torch.


def _lab():
    from ..experiments import placement as pl

    return pl


# Post-LN and Pre-LN keep the toll-booth page's colors (the palette's first two).
ORDER = ("post", "pre", "peri", "output", "deepnorm", "mixln")


def style(variant: str, theme: str) -> dict:
    """One look per variant in every figure: a color per placement, dashed with QK-norm."""
    placement, qk = _lab().parse_variant(variant)
    return {"color": colors(theme)[ORDER.index(placement)], "ls": "--" if qk else "-"}


# ------------------------------------------------------------------ the map


def _title(ax, text):
    ax.set_title(text, fontsize=9.5, loc="left")


def _mixln(ax, lang, theme):
    """A Mix-LN stack: its first quarter of layers Post-LN, the rest Pre-LN, a final norm on top."""
    p, c = PALETTES[theme], colors(theme)
    fg, booth, main = p["fg"], c[0], c[1]
    on_booth = "white" if theme == "light" else PALETTES["light"]["fg"]
    ax.set_xlim(0, 4)
    ax.set_ylim(-0.2, 6.3)
    ax.set_aspect("equal")
    ax.axis("off")
    L = 8
    n_post = 2  # what mixln_post_layers(8) gives; the figure says "a quarter"
    ax.text(MAIN_X + 0.1, 0.1, "$x_0$", ha="center", va="center", color=fg, fontsize=12)
    ys = np.linspace(0.75, 4.55, L)
    for i, y in enumerate(ys):
        post = i < n_post
        _box(ax, (MAIN_X + 0.1, y), 1.7, 0.4, "Post-LN" if post else "Pre-LN", booth if post else "none",
             booth if post else main, on_booth if post else fg, lw=1.4)
    _box(ax, (MAIN_X + 0.1, 5.2), 1.0, 0.45, "LN", booth, booth, on_booth, lw=1.4)
    _arrow(ax, (MAIN_X + 0.1, 5.45), (MAIN_X + 0.1, 5.8), main, lw=2)
    ax.text(MAIN_X + 0.1, 6.05, t(lang, "head"), ha="center", va="center", color=fg, fontsize=9)
    ax.text(2.4, (ys[0] + ys[n_post - 1]) / 2, t(lang, "first ¼"), color=booth, fontsize=8.5, va="center")
    ax.text(2.4, (ys[n_post] + ys[-1]) / 2, t(lang, "other ¾"), color=main, fontsize=8.5, va="center")
    ax.text(2.4, 5.2, t(lang, "final norm"), color=booth, fontsize=8.5, va="center")


def _qk(ax, lang, theme):
    """Inside attention: a norm on each head's q and k before their dot product."""
    p, c = PALETTES[theme], colors(theme)
    fg, booth, branch = p["fg"], c[0], c[2]
    on_booth = "white" if theme == "light" else PALETTES["light"]["fg"]
    ax.set_xlim(0, 4)
    ax.set_ylim(-0.2, 6.3)
    ax.set_aspect("equal")
    ax.axis("off")
    xs = {"q": 0.75, "k": 2.0, "v": 3.25}
    ax.text(2.0, 0.1, "$x$", ha="center", va="center", color=fg, fontsize=12)
    for name, x in xs.items():
        _arrow(ax, (2.0, 0.35), (x, 0.95), branch, rad=0.0)
        _box(ax, (x, 1.25), 0.9, 0.5, f"$W_{name.upper()}$", "none", branch, fg)
    for name in ("q", "k"):
        x = xs[name]
        _arrow(ax, (x, 1.5), (x, 1.95), branch)
        _box(ax, (x, 2.25), 0.9, 0.5, "Norm", booth, booth, on_booth, lw=1.6)
        _arrow(ax, (x, 2.5), (1.375, 3.05) if name == "q" else (1.375, 3.05), branch)
    # 11 pt: the subscript h stays >= 9 px at the width the page shows (tests/test_figures_browser.py)
    _box(ax, (1.375, 3.4), 2.1, 0.6, "$\\hat q\\cdot\\hat k\\,/\\sqrt{d_h}$", "none", branch, fg, fontsize=11)
    _arrow(ax, (1.375, 3.7), (1.375, 4.15), branch)
    _box(ax, (1.375, 4.45), 1.5, 0.5, "softmax", "none", branch, fg)
    _arrow(ax, (xs["v"], 1.5), (xs["v"], 5.0), branch, style="-")
    _arrow(ax, (1.375, 4.7), (2.0, 5.25), branch)
    _arrow(ax, (xs["v"], 5.0), (2.2, 5.35), branch)
    _box(ax, (2.1, 5.55), 1.2, 0.5, "× V", "none", branch, fg)
    ax.text(0.05, 5.95, t(lang, "|logit| ≤ √dₕ · gains"), color=booth, fontsize=8.5)


def _k3(ax, lang, theme):
    """K3's LatentMoE (report eq. 11): the norm sits on the routed branch's output, before W↑."""
    p, c = PALETTES[theme], colors(theme)
    fg, booth, main, branch = p["fg"], c[0], c[1], c[2]
    on_booth = "white" if theme == "light" else PALETTES["light"]["fg"]
    ax.set_xlim(0, 4)
    ax.set_ylim(-0.2, 6.3)
    ax.set_aspect("equal")
    ax.axis("off")
    X, BX = MAIN_X - 0.3, BRANCH_X
    ax.text(X, 0.1, "$x$", ha="center", va="center", color=fg, fontsize=12)
    _arrow(ax, (X, 0.35), (X, 1.6), main, lw=2.5)
    _box(ax, (X, 2.2), 1.3, 1.1, t(lang, "shared\nexperts\n(width d)"), "none", main, fg)
    _arrow(ax, (X, 2.75), (X, 4.93), main, lw=2.5, style="-")
    _plus(ax, (X, 5.1), main, fg)
    _arrow(ax, (X, 5.27), (X, 5.8), main, lw=2.5)
    ax.text(X, 6.05, "$y$", ha="center", va="center", color=fg, fontsize=12)
    _arrow(ax, (X, 0.9), (BX, 0.9), branch, style="-")
    ys = {"down": 1.35, "experts": 2.25, "norm": 3.3, "up": 4.25}
    _arrow(ax, (BX, 0.9), (BX, ys["down"] - 0.25), branch)
    _box(ax, (BX, ys["down"]), 1.0, 0.45, "W↓", "none", branch, fg)
    _arrow(ax, (BX, ys["down"] + 0.22), (BX, ys["experts"] - 0.35), branch)
    _box(ax, (BX, ys["experts"]), 1.6, 0.75, t(lang, "routed\nΣ pᵢEᵢ = u"), "none", branch, fg)
    _arrow(ax, (BX, ys["experts"] + 0.35), (BX, ys["norm"] - 0.3), branch)
    _box(ax, (BX, ys["norm"]), 1.6, 0.55, "RMSNorm", booth, booth, on_booth, lw=1.8)
    _arrow(ax, (BX, ys["norm"] + 0.28), (BX, ys["up"] - 0.25), branch)
    _box(ax, (BX, ys["up"]), 1.0, 0.45, "W↑", "none", branch, fg)
    _arrow(ax, (BX, ys["up"] + 0.22), (BX, 5.1), branch, style="-")
    _arrow(ax, (BX, 5.1), (X + 0.18, 5.1), branch)


_PANELS = [  # (layout, title in English; the Chinese title is in figures.yml)
    ("post", "(a) Post-LN"),
    ("pre", "(b) Pre-LN"),
    ("peri", "(c) Peri-LN / sandwich"),
    ("output", "(d) output norm (OLMo 2)"),
    ("deepnorm", "(e) DeepNorm"),
    ("mixln", "(f) Mix-LN"),
    ("qk", "(g) QK-norm (inside attention)"),
    ("k3", "(h) K3's LatentMoE"),
]


@figure("placement_map")
def placement_map(lang: str, theme: str):
    # Four rows of two, not two rows of four: at the page's width the labels stay >= 9 px (tests/test_figures_browser.py).
    fig, axes = plt.subplots(4, 2, figsize=(6.4, 13.0))
    for ax, (key, title) in zip(axes.flat, _PANELS):
        if key == "post":
            draw_layout(ax, theme, path_norm=True)
        elif key == "pre":
            draw_layout(ax, theme, in_norm=True)
        elif key == "peri":
            draw_layout(ax, theme, in_norm=True, out_norm=True)
        elif key == "output":
            draw_layout(ax, theme, out_norm=True)
        elif key == "deepnorm":
            draw_layout(ax, theme, path_norm=True, alpha="×α")
        elif key == "mixln":
            _mixln(ax, lang, theme)
        elif key == "qk":
            _qk(ax, lang, theme)
        else:
            _k3(ax, lang, theme)
        _title(ax, t(lang, title))
    fig.tight_layout(w_pad=0.4, h_pad=1.0)
    return fig


# ------------------------------------------------------------------ at initialization


def _label(lang, v):
    return _lab().variant_name(v, lang)


def _seeds(seeds) -> str:
    return f"{seeds[0]}–{seeds[-1]}"


def _init_fields() -> dict:
    """The two initialization experiments' settings, for the caption (figures.yml): grad_* and stream_*."""
    pl = _lab()
    g, s = pl.GRAD, pl.STREAM
    return {**{f"grad_{k}": g[k] for k in ("n_layer", "d_model", "batch", "block_size")},
            "grad_n_seeds": len(g["seeds"]), "grad_seeds": _seeds(g["seeds"]),
            **{f"stream_{k}": s[k] for k in ("d_model", "batch", "tokens")},
            "stream_n_seeds": len(s["seeds"]), "stream_seeds": _seeds(s["seeds"]),
            "stream_depth_lo": s["depths"][0], "stream_depth_hi": s["depths"][-1]}


@figure("placement_init", fields=_init_fields)
def placement_init(lang: str, theme: str):
    from ..experiments.toll_booth import lemma2_bounds

    pl = _lab()
    G, S = pl.GRAD, pl.STREAM
    g = pl.grad_per_layer()
    # The gradients across the top, the two streams below: at the page's width the labels stay >= 9 px
    # (tests/test_figures_browser.py), which three panels in one row did not.
    fig = plt.figure(figsize=(7.2, 7.6))
    grid = fig.add_gridspec(2, 2, height_ratios=[1, 1])
    axes = [fig.add_subplot(grid[0, :]), fig.add_subplot(grid[1, 0]), fig.add_subplot(grid[1, 1])]
    ax = axes[0]
    for v in pl.VARIANTS:
        ax.plot(g["layers"], g[v].mean(0), lw=1.8, marker="o", ms=2.5, label=_label(lang, v), **style(v, theme))
    ax.set_yscale("log")
    ax.set_xticks(g["layers"][::2])
    ax.set_xlabel(t(lang, "layer l"))
    ax.set_ylabel(t(lang, "‖∂loss/∂W_FFN‖ at initialization"))
    ax.set_title(t(lang, "Gradients ({{n_layer}} layers)", n_layer=G['n_layer']), fontsize=10)
    c = colors(theme)
    for ax, L in zip(axes[1:], S["depths"]):
        r = pl.stream_lengths(L)
        d, ls = r["d"], r["layers"]
        b = lemma2_bounds(d, ls)
        ax.fill_between(ls, np.sqrt(b["pre_lo"] / d), np.sqrt(b["pre_hi"] / d), color=c[1], alpha=0.10, lw=0,
                        label=t(lang, "Lemma 2 (Pre-LN)"))
        for v in pl.VARIANTS:
            m = r[v].mean(0)
            ax.plot(ls, np.sqrt(m / m[0]), lw=1.8, **style(v, theme))
        ax.set_ylim(bottom=0)
        ax.set_xlabel(t(lang, "layer l (0 = the input)"))
        ax.set_title(t(lang, "Stream length ({{L}} layers)", L=L), fontsize=10)
    axes[1].set_ylabel(t(lang, "√(E‖x_l‖² / E‖x₀‖²)"))
    axes[2].legend(loc="upper left", fontsize=7.5)
    h, lab = axes[0].get_legend_handles_labels()
    fig.legend(h, lab, loc="lower center", ncol=4, fontsize=8, bbox_to_anchor=(0.5, -0.01))
    fig.tight_layout(rect=(0, 0.1, 1, 1))
    return fig


# ------------------------------------------------------------------ training (the committed lab)


def _lab_fields() -> dict:
    """What the committed lab trained, on which machine and when, for the captions (figures.yml, the phrase
    placement_lab): read from the results file, not retyped."""
    from ..results.placement import placement_cpu
    from ..values._format import count
    from ..values.placement import machine_text

    pl = _lab()
    rep = placement_cpu()
    s, c = rep["setting"], rep["corpus"]
    return {
        "machine_zh": machine_text("zh"), "machine_en": machine_text("en"),
        **{k: s[k] for k in ("n_layer", "d_model", "n_head", "steps", "batch", "block_size", "warmup")},
        "n_files": len(c["files"]), "chars": count(c["chars"]), "every": pl.corpus_of(rep).every,
        "beta1": s["betas"][0], "beta2": s["betas"][1], "lrs": " / ".join(f"{lr:g}" for lr in s["lrs"]),
        "n_seeds": len(s["seeds"]), "seeds": _seeds(s["seeds"]),
        "smooth": pl.SMOOTH, "point_every": pl.EVERY,
    }


@figure("placement_training", fields=_lab_fields)
def placement_training(lang: str, theme: str):
    from ..results.placement import placement_cpu, summary

    pl = _lab()
    rep, summ = placement_cpu(), summary()
    s = rep["setting"]
    muted = PALETTES[theme]["muted"]
    fig, axes = plt.subplots(2, 2, figsize=(10.0, 7.0), sharex=True, sharey=True)
    k = pl.SMOOTH
    for i, lr in enumerate(s["lrs"]):
        for j, w in enumerate((0, s["warmup"])):
            ax = axes[i, j]
            for v in s["variants"]:
                curve = summ[(v, lr, w)]["curve"]
                if curve is None:
                    continue
                x, y = pl.smoothed(curve)  # the points the widget draws too
                ax.plot(x, y, lw=1.6, label=_label(lang, v), **style(v, theme))
            ax.axhline(rep["corpus"]["unigram_loss"], color=muted, ls=":", lw=1.2)
            if w:
                ax.axvline(w, color=muted, lw=0.8)
            ax.set_title(t(lang, "learning rate {{lr:g}}, {{warmup}}", lr=lr,
                           warmup=t(lang, "warmup ({{w}} steps)", w=w) if w else t(lang, "no warmup")), fontsize=10)
            if i == 1:
                ax.set_xlabel(t(lang, "training step"))
            if j == 0:
                ax.set_ylabel(t(lang, "training loss (nats/char)"))
    axes[0, 0].annotate(t(lang, "letter frequencies only"), (k, rep["corpus"]["unigram_loss"]),
                        xytext=(4, 4), textcoords="offset points", color=muted, fontsize=9.5)
    axes[0, 0].set_ylim(1.9, rep["uniform_loss"] + 0.05)
    h, lab = axes[0, 0].get_legend_handles_labels()
    fig.legend(h, lab, loc="lower center", ncol=5, fontsize=9.5, bbox_to_anchor=(0.5, -0.005))
    fig.tight_layout(rect=(0, 0.08, 1, 1))
    return fig


@figure("placement_logits", fields=_lab_fields)
def placement_logits(lang: str, theme: str):
    from ..results.placement import placement_cpu, summary

    pl = _lab()
    rep, summ = placement_cpu(), summary()
    s = rep["setting"]
    lr = max(s["lrs"])
    fig, axes = plt.subplots(1, 2, figsize=(7.6, 4.8), sharey=True)
    layers = np.arange(1, s["n_layer"] + 1)
    for ax, w in zip(axes, (0, s["warmup"])):
        for v in pl.QK_PAIRS:
            m = summ[(v, lr, w)]["max_logit"]
            if m is not None:
                ax.plot(layers, m, lw=1.8, marker="o", ms=3, label=_label(lang, v), **style(v, theme))
        ax.set_yscale("log")
        ax.tick_params(labelsize=10.5)  # the log axis' exponents are 0.7 of this
        ax.set_xticks(layers)
        ax.set_xlabel(t(lang, "layer l"))
        ax.set_title(t(lang, "learning rate {{lr:g}}, {{warmup}}", lr=lr,
                       warmup=t(lang, "with warmup" if w else "no warmup")), fontsize=10)
    axes[0].set_ylabel(t(lang, "largest attention logit"))
    h, lab = axes[1].get_legend_handles_labels()
    fig.legend(h, lab, loc="lower center", ncol=2, fontsize=8.5)
    fig.tight_layout(rect=(0, 0.2, 1, 1))
    return fig
