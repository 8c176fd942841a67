"""Figures of the K3 §2.3.1 page: the normalized LatentMoE block, the spread of ‖u‖, a toy training run."""

from __future__ import annotations

import matplotlib.pyplot as plt
import matplotlib.ticker as mticker
import numpy as np
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

from . import figure, labels
from ._style import PALETTES, colors

# The cached experiments this module reads (normref.experiments.declared): a build runs each once, first.
EXPERIMENTS = (
    'normref.experiments.moe:u_spread()',
    'normref.experiments.moe:toy_training()',
)


t = labels(__name__)  # the labels: English here, Chinese in figures.yml (labels:)


# ----------------------------------------------------------------------------- the block


def _box(ax, x, y, w, h, text, fc, ec, fg, lw=1.2, size=9):
    ax.add_patch(FancyBboxPatch((x - w / 2, y - h / 2), w, h, boxstyle="round,pad=0.02,rounding_size=0.12",
                                fc=fc, ec=ec, lw=lw))
    ax.text(x, y, text, ha="center", va="center", color=fg, fontsize=size)


def _arrow(ax, a, b, color, ls="-", rad=0.0):
    ax.add_patch(FancyArrowPatch(a, b, arrowstyle="-|>", mutation_scale=10, color=color, lw=1.2, ls=ls,
                                 connectionstyle=f"arc3,rad={rad}", shrinkA=0, shrinkB=0))


@figure("moe_block")
def moe_block(lang: str, theme: str):
    p, c = PALETTES[theme], colors(theme)
    fg, muted = p["fg"], p["muted"]
    on_fill = "white" if theme == "light" else PALETTES["light"]["fg"]  # text on a filled box: keep contrast
    fig, ax = plt.subplots(figsize=(7.6, 3.9))
    ax.set_xlim(0, 10.4)
    ax.set_ylim(-0.35, 5.6)
    ax.axis("off")
    # lanes: full width d above, latent width ℓ below
    ax.add_patch(FancyBboxPatch((1.5, 3.55), 6.9, 1.45, boxstyle="round,pad=0,rounding_size=0.2", fc=c[1], alpha=0.08, ec="none"))
    ax.add_patch(FancyBboxPatch((2.35, 0.95), 6.05, 2.45, boxstyle="round,pad=0,rounding_size=0.2", fc=c[2], alpha=0.08, ec="none"))
    ax.text(1.6, 4.88, t(lang, "full width d: shared branch"), color=c[1], fontsize=8.5, va="top")
    ax.text(2.45, 3.33, t(lang, "latent dimension ℓ: routed branch (the ramp)"), color=c[2],
            fontsize=8.5, va="top")
    bg = "none"
    _box(ax, 0.55, 2.6, 0.8, 0.6, "x", bg, fg, fg, size=11)
    _box(ax, 5.0, 4.2, 3.6, 0.65, t(lang, "shared experts ×2 (GLU, width d)"), bg, c[1], fg)
    _box(ax, 2.9, 2.1, 0.9, 0.6, "W↓\nd→ℓ", bg, c[2], fg, size=8.5)
    # experts: a column, the chosen ones colored
    chosen = {1: "p₁", 3: "p₂"}
    for i, y in enumerate(np.linspace(2.83, 1.3, 5)):
        on = i in chosen
        _box(ax, 4.25, y, 0.9, 0.3, f"$E_{{{i + 1}}}$" if i < 4 else "$E_N$", c[2] if on else bg,
             c[2] if on else muted, on_fill if on else fg, lw=1.0, size=10.5)
        if on:
            ax.text(4.82, y, chosen[i], color=c[2], fontsize=9.5, va="center")
            _arrow(ax, (3.35, 2.1), (3.8, y), c[2])
    _box(ax, 5.55, 2.1, 0.7, 0.55, "Σ", bg, c[2], fg, size=12)
    _arrow(ax, (4.95, 2.4), (5.2, 2.2), c[2])
    _arrow(ax, (4.95, 1.8), (5.2, 2.0), c[2])
    ax.text(6.13, 2.28, "u", color=fg, fontsize=11, style="italic")
    _box(ax, 6.95, 2.1, 1.05, 0.62, "RMSNorm", c[0], c[0], on_fill, lw=2, size=9)
    ax.text(6.95, 2.62, t(lang, "added in K3"), color=c[0], fontsize=8, ha="center")
    _box(ax, 8.05, 2.1, 0.75, 0.6, "W↑\nℓ→d", bg, c[2], fg, size=8.5)
    _box(ax, 9.1, 2.6, 0.5, 0.5, "+", bg, fg, fg, size=12)
    _box(ax, 9.9, 2.6, 0.55, 0.5, "y", bg, fg, fg, size=11)
    # router on the full-width x
    _box(ax, 3.9, 0.25, 4.6, 0.5, t(lang, "router: scores full-width x → top-k → softmax → pᵢ"), bg, muted, fg, size=8)
    # wires
    _arrow(ax, (0.95, 2.75), (3.2, 4.2), c[1], rad=-0.25)
    _arrow(ax, (6.8, 4.2), (9.05, 2.85), c[1], rad=-0.25)
    _arrow(ax, (0.95, 2.45), (2.45, 2.1), c[2])
    _arrow(ax, (0.95, 2.4), (1.92, 0.35), muted, rad=0.2)
    _arrow(ax, (4.25, 0.5), (4.25, 1.13), muted, ls="--")
    _arrow(ax, (5.9, 2.1), (6.42, 2.1), c[2])
    _arrow(ax, (7.48, 2.1), (7.67, 2.1), c[2])
    _arrow(ax, (8.43, 2.2), (8.85, 2.5), c[2])
    _arrow(ax, (9.35, 2.6), (9.62, 2.6), fg)
    ax.text(6.95, 1.55, t(lang, "original LatentMoE: no norm,\nW↑ multiplies u directly"),
            color=muted, fontsize=7.5, ha="center", va="top")
    fig.tight_layout(pad=0.2)
    return fig


# ----------------------------------------------------------------------------- ‖u‖ spread

_SWEEP_LABEL = {
    "top_k": "experts per token k",
    "temperature": "routing temperature τ",
    "n_experts": "routed experts N",
    "expert_spread": "spread of expert output sizes σ",
}


def _base_note(lang):
    from ..experiments.moe import BASE, BASE_SPREAD

    return t(lang, "others at the base: top-{{top_k}} of {{n_experts}}, τ = {{temperature:g}}, σ = {{spread:g}}",
             top_k=BASE["top_k"], n_experts=BASE["n_experts"], temperature=BASE["temperature"], spread=BASE_SPREAD)


@figure("moe_u_dist")
def moe_u_dist(lang: str, theme: str):
    from ..experiments.moe import u_spread

    r = u_spread()
    c, muted = colors(theme), PALETTES[theme]["muted"]
    fig, axes = plt.subplots(1, 4, figsize=(9.6, 3.3), sharey=True)
    for ax, (name, sw) in zip(axes, r["sweeps"].items()):
        data = [np.log10(run["u_norm"]) for run in sw["runs"]]
        parts = ax.violinplot(data, showmedians=True, widths=0.8)
        for b in parts["bodies"]:
            b.set_facecolor(c[1])
            b.set_alpha(0.45)
        for k in ("cbars", "cmins", "cmaxes", "cmedians"):
            parts[k].set_color(c[1])
        ax.set_xticks(range(1, len(sw["values"]) + 1), [f"{v:g}" for v in sw["values"]])
        ax.set_xlabel(t(lang, _SWEEP_LABEL[name]))
        base_val = r["base"][name]
        i = list(sw["values"]).index(base_val) + 1
        ax.get_xticklabels()[i - 1].set_color(c[0])
    axes[0].set_ylabel(t(lang, "‖u‖ (log₁₀)"))
    b = r["base_run"]["max_over_min_u"]
    fig.suptitle(t(lang, "Same layer, inputs of equal length: at the base, the 99th percentile of ‖u‖ is {{b:.0f}}× "
                         "the 1st (without the norm, W↑ takes it as is)", b=b), fontsize=10)
    fig.text(0.5, 0.005, _base_note(lang) + t(lang, " (colored tick)"), ha="center", va="bottom", color=muted, fontsize=9.2)
    fig.tight_layout(rect=(0, 0.04, 1, 1))
    return fig


@figure("moe_u_cv")
def moe_u_cv(lang: str, theme: str):
    from ..experiments.moe import u_spread

    r = u_spread()
    c, muted = colors(theme), PALETTES[theme]["muted"]
    series = [
        ("cv_u", c[1], "--", t(lang, "‖u‖ (W↑'s input without the norm)")),
        ("cv_routed_raw", c[3], "-", t(lang, "routed branch ‖W↑u‖ (original LatentMoE)")),
        ("cv_routed_norm", c[0], "-", t(lang, "routed branch ‖W↑·RMSNorm(u)‖ (K3)")),
        ("cv_shared", c[2], ":", t(lang, "shared branch ‖ΣE_shared(x)‖")),
    ]
    fig, axes = plt.subplots(1, 4, figsize=(9.6, 3.6), sharey=True)
    for ax, (name, sw) in zip(axes, r["sweeps"].items()):
        xs = np.arange(len(sw["values"]))
        for key, col, ls, label in series:
            ax.plot(xs, [run[key] for run in sw["runs"]], color=col, ls=ls, marker="o", ms=3.5, lw=1.8, label=label)
        ax.set_xticks(xs, [f"{v:g}" for v in sw["values"]])
        ax.set_xlabel(t(lang, _SWEEP_LABEL[name]))
    top = max(run[k] for sw in r["sweeps"].values() for run in sw["runs"] for k, *_ in series)
    axes[0].set_ylim(0, top * 1.05)
    axes[0].set_ylabel(t(lang, "CV of per-token length"))
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="upper center", ncol=2, fontsize=9.2)
    fig.text(0.5, 0.005, _base_note(lang), ha="center", va="bottom", color=muted, fontsize=9.2)
    fig.tight_layout(rect=(0, 0.04, 1, 0.86))
    return fig


# ----------------------------------------------------------------------------- toy training


def _training_fields() -> dict:
    from ..values.committed import caption_fields

    return caption_fields("toy_training")


@figure("moe_training", fields=_training_fields)
def moe_training(lang: str, theme: str):
    from ..experiments.moe import toy_training

    r = toy_training()
    c = colors(theme)
    lrs = r["lrs"]
    fig, axes = plt.subplots(1, len(lrs), figsize=(8.4, 3.4), sharey=True)
    for ax, lr in zip(np.atleast_1d(axes), lrs):
        for normalize, col, label in ((False, c[3], t(lang, "original LatentMoE (W↑u)")),
                                      (True, c[0], t(lang, "K3: W↑·RMSNorm(u)"))):
            runs = [x for x in r["runs"] if x["lr"] == lr and x["normalize"] == normalize]
            steps = np.array(runs[0]["steps"])
            vals = np.array([x["val"] for x in runs])
            for v in vals:
                ax.plot(steps[1:], v[1:], color=col, lw=0.7, alpha=0.45)
            ax.plot(steps[1:], vals[:, 1:].mean(0), color=col, lw=2.2, label=label)
        ax.set_yscale("log")
        ax.yaxis.set_major_locator(mticker.LogLocator(base=10, subs=(1.0, 2.0, 3.0, 5.0)))
        ax.yaxis.set_major_formatter(mticker.FormatStrFormatter("%g"))
        ax.yaxis.set_minor_formatter(mticker.NullFormatter())
        ax.set_title(t(lang, "learning rate {{lr:g}}", lr=lr), fontsize=10)
        ax.set_xlabel(t(lang, "training step"))
    np.atleast_1d(axes)[0].set_ylabel(t(lang, "validation MSE"))
    handles, labels = np.atleast_1d(axes)[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="upper center", ncol=2, fontsize=9)
    fig.tight_layout(rect=(0, 0, 1, 0.9))
    return fig
