"""Figures of the interview page's BatchNorm section: which entries share statistics, and what that costs."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.patches import Rectangle

from . import figure, labels
from ._style import PALETTES, colors

# The cached experiments this module reads (normref.experiments.declared): a build runs each once, first.
EXPERIMENTS = (
    'normref.experiments.smollm2_batch:smollm2_batch()',
)


t = labels(__name__)  # the labels: English here, Chinese in figures.yml (labels:)

# The diagram's batch: three sentences of different lengths, padded to the longest.
_LENGTHS = (4, 2, 3)
_FEATURES = 6


def _grid(ax, lang, theme, mode):
    p, c = PALETTES[theme], colors(theme)
    fg, muted = p["fg"], p["muted"]
    hi = c[1] if mode == "batch" else c[0]
    T = max(_LENGTHS)
    rows = []  # (sentence, position, is_pad) from top to bottom
    for s, n in enumerate(_LENGTHS):
        rows += [(s, i, i >= n) for i in range(T)]
    n_rows = len(rows)
    pick_feature, pick_row = 2, 5  # the highlighted column / row
    for r, (s, i, pad) in enumerate(rows):
        y = n_rows - 1 - r - 0.35 * s  # a small gap between sentences
        for f in range(_FEATURES):
            lit = (f == pick_feature and not pad) if mode == "batch" else (r == pick_row)
            ax.add_patch(Rectangle((f, y), 0.92, 0.92, fc=hi if lit else "none", alpha=0.55 if lit else 1,
                                   ec=muted, lw=0.8, hatch="///" if pad else None))
        if i == 0:
            ax.text(-0.3, y - (T - 1) / 2 + 0.45, t(lang, "sentence {{n}}", n=s + 1), ha="right",
                    va="center", color=fg, fontsize=10)
    bottom = -0.35 * (len(_LENGTHS) - 1)  # the lowest row's lower edge
    ax.set_xlim(-2.6, _FEATURES + 0.3)
    ax.set_ylim(bottom - 2.6, n_rows + 1.0)
    ax.set_aspect("equal")
    ax.axis("off")
    ax.text(_FEATURES / 2, bottom - 0.15, t(lang, "features →"), ha="center", va="top", color=muted,
            fontsize=8.5)
    ax.text(-0.3, n_rows + 0.3, t(lang, "tokens ↓"), ha="right", va="center", color=muted, fontsize=8.5)
    if mode == "batch":
        ax.set_title(t(lang, "BatchNorm: statistics per feature,\nover every token of the batch"), fontsize=11, color=fg)
        note = t(lang, "change with the batch-mates; hatched cells\nare padding; inference uses running averages")
    else:
        ax.set_title(t(lang, "LayerNorm / RMSNorm: statistics per token,\nover its own features"), fontsize=11, color=fg)
        note = t(lang, "independent of batch-mates, padding and batch\nsize; the same formula in training and inference")
    ax.text(_FEATURES / 2, bottom - 0.85, note, ha="center", va="top", color=fg, fontsize=9.5)


@figure("batchnorm_axes")
def batchnorm_axes(lang: str, theme: str):
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(7.6, 4.6))
    _grid(a1, lang, theme, "batch")
    _grid(a2, lang, theme, "token")
    fig.tight_layout()
    return fig


def _measured_fields() -> dict:
    """The measurement's setting, for the caption in figures.yml (read from the experiment, not retyped)."""
    from ..experiments import smollm2_batch as sb
    from ..values.committed import caption_fields

    return {
        **caption_fields("smollm2_batch"),
        "n_texts": len(sb.TEXTS),
        "n_batches": sb.N_BATCHES,
        "layers_zh": t("zh", ", ").join(str(v) for v in sb.LAYERS),
        "layers_en": ", ".join(str(v) for v in sb.LAYERS[:-1]) + f" and {sb.LAYERS[-1]}",
        "main_layer": sb.LAYERS[len(sb.LAYERS) // 2],
    }


@figure("batchnorm_fluctuation", fields=_measured_fields)
def batchnorm_fluctuation(lang: str, theme: str):
    from ..experiments.smollm2_batch import BATCH_SIZES, LAYERS, smollm2_batch

    r = smollm2_batch()
    c, muted = colors(theme), PALETTES[theme]["muted"]
    main = LAYERS[len(LAYERS) // 2]
    series = [
        ("var_cv", c[1], "-", t(lang, "variation of the batch variance (median feature)")),
        ("out_change", c[0], "--", t(lang, "change of a token's output with new batch-mates")),
        ("train_vs_inference", c[2], ":", t(lang, "training (batch stats) vs inference (all tokens)")),
    ]
    fig, ax = plt.subplots(figsize=(6.6, 3.9))
    bs = np.array(BATCH_SIZES)
    for key, col, ls, label in series:
        per_layer = np.array([[100 * r["layers"][L]["batchnorm"]["by_batch"][b][key] for b in bs] for L in LAYERS])
        ax.fill_between(bs, per_layer.min(0), per_layer.max(0), color=col, alpha=0.15, lw=0)
        ax.plot(bs, per_layer[LAYERS.index(main)], color=col, ls=ls, lw=2.2, marker="o", ms=4, label=label)
    ax.axhline(0, color=muted, lw=2.4)
    ax.annotate(t(lang, "LayerNorm / RMSNorm: 0"), (bs[-1], 0), xytext=(-4, 5),
                textcoords="offset points", ha="right", color=muted, fontsize=8.5)
    ax.set_xscale("log", base=2)
    ax.set_xticks(bs)
    ax.set_xticklabels([str(b) for b in bs])
    ax.set_ylim(bottom=-1.5)
    ax.set_xlabel(t(lang, "batch size (sentences)"))
    ax.set_ylabel("%")
    ax.set_title(t(lang, "BatchNorm's statistics move with the batch (SmolLM2, layer {{main}})", main=main), fontsize=10)
    ax.legend(loc="upper right", fontsize=8)
    fig.tight_layout()
    return fig
