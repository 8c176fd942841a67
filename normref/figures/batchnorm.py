"""Figures of the interview page's BatchNorm section: which entries share statistics, and what that costs."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.patches import Rectangle

from . import figure
from ._style import PALETTES, colors, t

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
            ax.text(-0.3, y - (T - 1) / 2 + 0.45, t(lang, f"句 {s + 1}", f"sentence {s + 1}"), ha="right",
                    va="center", color=fg, fontsize=10)
    bottom = -0.35 * (len(_LENGTHS) - 1)  # the lowest row's lower edge
    ax.set_xlim(-2.6, _FEATURES + 0.3)
    ax.set_ylim(bottom - 2.6, n_rows + 1.0)
    ax.set_aspect("equal")
    ax.axis("off")
    ax.text(_FEATURES / 2, bottom - 0.15, t(lang, "特征维度 →", "features →"), ha="center", va="top", color=muted,
            fontsize=8.5)
    ax.text(-0.3, n_rows + 0.3, t(lang, "词元 ↓", "tokens ↓"), ha="right", va="center", color=muted, fontsize=8.5)
    if mode == "batch":
        ax.set_title(t(lang, "BatchNorm：每个特征一组统计量，\n取自整批的所有词元",
                       "BatchNorm: statistics per feature,\nover every token of the batch"), fontsize=11, color=fg)
        note = t(lang, "随同批的句子而变；斜线格是填充，\n推理时改用训练中累积的滑动平均",
                 "change with the batch-mates; hatched cells\nare padding; inference uses running averages")
    else:
        ax.set_title(t(lang, "LayerNorm / RMSNorm：每个词元一组统计量，\n取自它自己的全部特征",
                       "LayerNorm / RMSNorm: statistics per token,\nover its own features"), fontsize=11, color=fg)
        note = t(lang, "与同批的其他句子、填充和批大小无关；\n训练与推理算的是同一个式子",
                 "independent of batch-mates, padding and batch\nsize; the same formula in training and inference")
    ax.text(_FEATURES / 2, bottom - 0.85, note, ha="center", va="top", color=fg, fontsize=9.5)


@figure(
    "batchnorm_axes",
    alt={
        "zh": "两幅并排的网格示意图。每幅图的行是一个批里的词元：三个长度不同的句子，较短的句子用斜线格填充到同一长度；列是特征维度。"
              "左图 BatchNorm：高亮的是一整列，即一个特征在整批所有真实词元上的取值，统计量由它们求出。"
              "右图 LayerNorm 与 RMSNorm：高亮的是一整行，即一个词元自己的全部特征。",
        "en": "Two side-by-side grid diagrams. In each, the rows are the tokens of a batch: three sentences of different "
              "lengths, the shorter ones padded with hatched cells to the same length; the columns are features. Left, "
              "BatchNorm: one whole column is highlighted, one feature over every real token of the batch, from which "
              "its statistics are computed. Right, LayerNorm and RMSNorm: one whole row is highlighted, one token's own "
              "features.",
    },
    caption={
        "zh": "示意图（构建时由 matplotlib 绘制）：同一个批，两种归一化各从哪些数算均值和方差。高亮的格子共用一组统计量。",
        "en": "Diagram (drawn by matplotlib at build time): one batch, and the entries each kind of norm computes its "
              "statistics from. Highlighted cells share one set of statistics.",
    },
)
def batchnorm_axes(lang: str, theme: str):
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(7.6, 4.6))
    _grid(a1, lang, theme, "batch")
    _grid(a2, lang, theme, "token")
    fig.tight_layout()
    return fig


def _caption_measured() -> dict:
    from ..experiments import smollm2_batch as sb

    n = len(sb.TEXTS)
    layers = "、".join(str(v) for v in sb.LAYERS)
    layers_en = ", ".join(str(v) for v in sb.LAYERS[:-1]) + f" and {sb.LAYERS[-1]}"
    return {
        "zh": f"实测（真实权重）：SmolLM2-135M-Instruct，Q4_1 量化权重（嵌入矩阵 Q8_0），由 gguf 反量化为 float32；在 {n} 个中英文句子上做一次前向，"
              f"取进入第 {layers} 层的残差流（即该层注意力前 RMSNorm 的输入）。每个批大小随机抽 {sb.N_BATCHES} 个批，"
              "BatchNorm 的统计量只取真实词元（不算填充）。实线为第 "
              f"{sb.LAYERS[len(sb.LAYERS) // 2]} 层，阴影为三层的范围。LayerNorm 与 RMSNorm 的统计量只取决于词元本身，三项都恰为 0。"
              "构建时用 torch 与 numpy（CPU）计算。",
        "en": f"Measured (real weights): SmolLM2-135M-Instruct, Q4_1 weights (embeddings Q8_0), dequantized to float32 by gguf; one forward pass over "
              f"{n} English and Chinese sentences; the residual stream entering layers {layers_en} (the input of each "
              f"layer's attention RMSNorm). {sb.N_BATCHES} random batches per batch size; BatchNorm's statistics use "
              f"real tokens only (padding excluded). Solid lines are layer {sb.LAYERS[len(sb.LAYERS) // 2]}, bands span "
              "the three layers. LayerNorm's and RMSNorm's statistics depend on the token alone, so all three are "
              "exactly 0 for them. Computed with torch and numpy (CPU) at build time.",
    }


@figure(
    "batchnorm_fluctuation",
    alt={
        "zh": "折线图：横轴是批大小（句子数，对数刻度），纵轴是百分比。三条曲线都随批变大而下降：BatchNorm 批方差的变异系数，"
              "同一个词元换一批同伴后输出的相对变化，以及训练时（批统计量）与推理时（全体统计量）输出的相对差距。"
              "LayerNorm 和 RMSNorm 的对应值是贴着横轴的 0。",
        "en": "Line chart: batch size in sentences on a log x axis, percent on the y axis. Three curves all fall as "
              "batches grow: the coefficient of variation of BatchNorm's batch variance, the relative change of one "
              "token's output when its batch-mates change, and the relative gap between its output in training (batch "
              "statistics) and at inference (statistics of all tokens). LayerNorm and RMSNorm sit at 0 on the x axis.",
    },
    caption=_caption_measured(),
    deps=("normref.experiments.smollm2_batch", "normref.models", "normref.models.llama"),
)
def batchnorm_fluctuation(lang: str, theme: str):
    from ..experiments.smollm2_batch import BATCH_SIZES, LAYERS, smollm2_batch

    r = smollm2_batch()
    c, muted = colors(theme), PALETTES[theme]["muted"]
    main = LAYERS[len(LAYERS) // 2]
    series = [
        ("var_cv", c[1], "-", t(lang, "批方差的变异系数（特征中位数）", "variation of the batch variance (median feature)")),
        ("out_change", c[0], "--", t(lang, "换一批同伴，同一词元输出的变化", "change of a token's output with new batch-mates")),
        ("train_vs_inference", c[2], ":", t(lang, "训练（批统计量）与推理（全体统计量）之差", "training (batch stats) vs inference (all tokens)")),
    ]
    fig, ax = plt.subplots(figsize=(6.6, 3.9))
    bs = np.array(BATCH_SIZES)
    for key, col, ls, label in series:
        per_layer = np.array([[100 * r["layers"][L]["batchnorm"]["by_batch"][b][key] for b in bs] for L in LAYERS])
        ax.fill_between(bs, per_layer.min(0), per_layer.max(0), color=col, alpha=0.15, lw=0)
        ax.plot(bs, per_layer[LAYERS.index(main)], color=col, ls=ls, lw=2.2, marker="o", ms=4, label=label)
    ax.axhline(0, color=muted, lw=2.4)
    ax.annotate(t(lang, "LayerNorm / RMSNorm：0", "LayerNorm / RMSNorm: 0"), (bs[-1], 0), xytext=(-4, 5),
                textcoords="offset points", ha="right", color=muted, fontsize=8.5)
    ax.set_xscale("log", base=2)
    ax.set_xticks(bs)
    ax.set_xticklabels([str(b) for b in bs])
    ax.set_ylim(bottom=-1.5)
    ax.set_xlabel(t(lang, "批大小（句子数）", "batch size (sentences)"))
    ax.set_ylabel("%")
    ax.set_title(t(lang, f"SmolLM2 第 {main} 层的残差流上，BatchNorm 的统计量随批而晃",
                   f"BatchNorm's statistics move with the batch (SmolLM2, layer {main})"), fontsize=10)
    ax.legend(loc="upper right", fontsize=8)
    fig.tight_layout()
    return fig
