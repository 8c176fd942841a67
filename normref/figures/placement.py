"""Figures of the placement page ("Where the norm goes"): the map of layouts and the lab's measurements."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from . import figure
from ._style import PALETTES, colors, t
from .toll_booth import BRANCH_X, MAIN_X, _arrow, _box, _plus, draw_layout
from ..experiments import placement as pl
from ..experiments.toll_booth import lemma2_bounds

_INIT_DEPS = ("normref.experiments.placement", "normref.experiments.toll_booth", "normref.blocks", "normref.nn")
_LAB_DEPS = ("normref.experiments.placement", "normref.results.placement")
G, S, LM = pl.GRAD, pl.STREAM, pl.FULL
_gseeds = f"{G['seeds'][0]}–{G['seeds'][-1]}"
_sseeds = f"{S['seeds'][0]}–{S['seeds'][-1]}"


# Post-LN and Pre-LN keep the toll-booth page's colours (the palette's first two).
ORDER = ("post", "pre", "peri", "output", "deepnorm", "mixln")


def style(variant: str, theme: str) -> dict:
    """One look per variant in every figure: a colour per placement, dashed with QK-norm."""
    placement, qk = pl.parse_variant(variant)
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
    ax.text(MAIN_X + 0.1, 6.05, t(lang, "输出头", "head"), ha="center", va="center", color=fg, fontsize=9)
    ax.text(2.4, (ys[0] + ys[n_post - 1]) / 2, t(lang, "前 ¼ 层", "first ¼"), color=booth, fontsize=8.5, va="center")
    ax.text(2.4, (ys[n_post] + ys[-1]) / 2, t(lang, "其余 ¾ 层", "other ¾"), color=main, fontsize=8.5, va="center")
    ax.text(2.4, 5.2, t(lang, "最终归一化", "final norm"), color=booth, fontsize=8.5, va="center")


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
    _box(ax, (1.375, 3.4), 2.1, 0.6, "$\\hat q\\cdot\\hat k\\,/\\sqrt{d_h}$", "none", branch, fg)
    _arrow(ax, (1.375, 3.7), (1.375, 4.15), branch)
    _box(ax, (1.375, 4.45), 1.5, 0.5, "softmax", "none", branch, fg)
    _arrow(ax, (xs["v"], 1.5), (xs["v"], 5.0), branch, style="-")
    _arrow(ax, (1.375, 4.7), (2.0, 5.25), branch)
    _arrow(ax, (xs["v"], 5.0), (2.2, 5.35), branch)
    _box(ax, (2.1, 5.55), 1.2, 0.5, "× V", "none", branch, fg)
    ax.text(0.05, 5.95, t(lang, "|logit| ≤ √dₕ · 增益", "|logit| ≤ √dₕ · gains"), color=booth, fontsize=8.5)


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
    _box(ax, (X, 2.2), 1.3, 1.1, t(lang, "共享\n专家\n（宽 d）", "shared\nexperts\n(width d)"), "none", main, fg)
    _arrow(ax, (X, 2.75), (X, 4.93), main, lw=2.5, style="-")
    _plus(ax, (X, 5.1), main, fg)
    _arrow(ax, (X, 5.27), (X, 5.8), main, lw=2.5)
    ax.text(X, 6.05, "$y$", ha="center", va="center", color=fg, fontsize=12)
    _arrow(ax, (X, 0.9), (BX, 0.9), branch, style="-")
    ys = {"down": 1.35, "experts": 2.25, "norm": 3.3, "up": 4.25}
    _arrow(ax, (BX, 0.9), (BX, ys["down"] - 0.25), branch)
    _box(ax, (BX, ys["down"]), 1.0, 0.45, "W↓", "none", branch, fg)
    _arrow(ax, (BX, ys["down"] + 0.22), (BX, ys["experts"] - 0.35), branch)
    _box(ax, (BX, ys["experts"]), 1.6, 0.75, t(lang, "路由专家\nΣ pᵢEᵢ = u", "routed\nΣ pᵢEᵢ = u"), "none", branch, fg)
    _arrow(ax, (BX, ys["experts"] + 0.35), (BX, ys["norm"] - 0.3), branch)
    _box(ax, (BX, ys["norm"]), 1.6, 0.55, "RMSNorm", booth, booth, on_booth, lw=1.8)
    _arrow(ax, (BX, ys["norm"] + 0.28), (BX, ys["up"] - 0.25), branch)
    _box(ax, (BX, ys["up"]), 1.0, 0.45, "W↑", "none", branch, fg)
    _arrow(ax, (BX, ys["up"] + 0.22), (BX, 5.1), branch, style="-")
    _arrow(ax, (BX, 5.1), (X + 0.18, 5.1), branch)


_PANELS = [
    ("post", "(a) Post-LN", "(a) Post-LN"),
    ("pre", "(b) Pre-LN", "(b) Pre-LN"),
    ("peri", "(c) Peri-LN / 三明治", "(c) Peri-LN / sandwich"),
    ("output", "(d) 输出端归一化（OLMo 2）", "(d) output norm (OLMo 2)"),
    ("deepnorm", "(e) DeepNorm", "(e) DeepNorm"),
    ("mixln", "(f) Mix-LN", "(f) Mix-LN"),
    ("qk", "(g) QK-norm（注意力内部）", "(g) QK-norm (inside attention)"),
    ("k3", "(h) K3 的 LatentMoE", "(h) K3's LatentMoE"),
]


@figure(
    "placement_map",
    alt={
        "zh": "八幅小示意图，两行各四幅，每幅自下而上画一个子层：左侧粗线是残差主线，右侧分支经过子层 f，二者在加号处相加。"
              "(a) Post-LN：LN 在主线上、加号之后。(b) Pre-LN：LN 在分支上、f 之前。(c) Peri-LN：分支上 f 前后各有一个 LN。"
              "(d) 输出端归一化（OLMo 2）：分支上只有 f 之后的 LN，f 之前没有。(e) DeepNorm：与 Post-LN 相同，但主线在加号前乘以 α。"
              "(f) Mix-LN：一叠层，最下面四分之一是 Post-LN，其余是 Pre-LN，顶上有最终归一化。"
              "(g) QK-norm：注意力内部，q 与 k 各经过一个归一化再做点积与 softmax。"
              "(h) K3 的 LatentMoE：共享专家在全宽度主路上，路由分支经 W↓、专家加权求和得 u，u 经 RMSNorm 后由 W↑ 升维，再与主路相加。",
        "en": "Eight small diagrams in two rows of four; each draws one sub-layer from bottom to top: the thick line on the left is "
              "the residual main line, the branch on the right passes through the sub-layer f, and the two meet at a plus sign. "
              "(a) Post-LN: LN on the main line, after the sum. (b) Pre-LN: LN on the branch, before f. (c) Peri-LN: an LN on "
              "the branch before f and another after it. (d) Output norm (OLMo 2): only the LN after f on the branch, none before "
              "it. (e) DeepNorm: like Post-LN, but the main line is multiplied by α before the sum. (f) Mix-LN: a stack of "
              "layers, the bottom quarter Post-LN and the rest Pre-LN, with a final norm on top. (g) QK-norm: inside attention, "
              "q and k each pass through a norm before their dot product and the softmax. (h) K3's LatentMoE: the shared "
              "experts on the full-width path; the routed branch goes through W↓ and a weighted sum of experts to u, then an "
              "RMSNorm, then W↑, and joins the path at the sum.",
    },
    caption={
        "zh": "示意图（构建时由 matplotlib 绘制，与收费站页的两幅图同一画法）：粗线是残差主线，f 代表注意力或 MLP，"
              "实心方块是归一化。(a)–(f) 是层的接法；(g) QK-norm 在注意力内部，可与其中任何一种组合；"
              "(h) 是 Kimi K3 式 (11) 的归一化 LatentMoE：一个位于分支内部、作用在分支输出端的归一化。",
        "en": "Diagram (drawn by matplotlib at build time, in the same style as the toll-booth page's two): the thick line is "
              "the residual main line, f stands for attention or the MLP, and filled boxes are norms. (a)–(f) are ways to "
              "wire a layer; (g) QK-norm sits inside attention and combines with any of them; (h) is the normalized "
              "LatentMoE of Kimi K3's Eq. (11): a norm inside one branch, on that branch's output.",
    },
    deps=("normref.figures.toll_booth",),
)
def placement_map(lang: str, theme: str):
    fig, axes = plt.subplots(2, 4, figsize=(10.4, 7.0))
    for ax, (key, zh, en) in zip(axes.flat, _PANELS):
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
        _title(ax, t(lang, zh, en))
    fig.tight_layout(w_pad=0.4, h_pad=1.0)
    return fig


# ------------------------------------------------------------------ at initialisation


def _label(lang, v):
    return pl.variant_name(v, lang)


@figure(
    "placement_init",
    alt={
        "zh": "三幅折线图。左：初始化时 12 层各层 FFN 权重的梯度范数（对数纵轴），每种接法一条线，虚线表示加了 QK-norm。"
              "Post-LN 随层号上升，Pre-LN、Peri-LN、Mix-LN 的后段随层号下降，输出端归一化在第 1 层最大、下降最陡，"
              "加上 QK-norm 后接近 Peri-LN；DeepNorm 各层几乎相等且整体最低。"
              "中、右：12 层与 48 层堆叠中残差流长度与输入长度之比随层号的变化。Post-LN 与 DeepNorm 始终为 1；"
              "Pre-LN 与 Mix-LN 的后段落在 Lemma 2 给出的阴影带内缓慢上升；Peri-LN 与输出端归一化上升得更快。",
        "en": "Three line charts. Left: the gradient norm of each of 12 layers' FFN weights at initialisation (log y axis), "
              "one line per layout, dashed with QK-norm. Post-LN rises with the layer index; Pre-LN, Peri-LN and the Pre-LN "
              "part of Mix-LN fall; the output norm is largest at layer 1 and falls most steeply, and with QK-norm it comes "
              "close to Peri-LN; DeepNorm is nearly equal across layers and lowest overall. Middle and right: the length of "
              "the residual stream over the input's length against the layer, in 12- and 48-layer stacks. Post-LN and "
              "DeepNorm stay at 1; Pre-LN and the tail of Mix-LN rise slowly inside the shaded band of Lemma 2; Peri-LN "
              "and the output norm rise faster.",
    },
    caption={
        "zh": f"实测（合成数据，构建时用 torch（CPU）计算并缓存）：normref 的 decoder，LayerNorm，权重 N(0, 1/fan_in)（DeepNorm 再乘 β）。"
              f"左：{G['n_layer']} 层，d = {G['d_model']}，{G['batch']} 条长 {G['block_size']} 的随机 token 序列上的下一词交叉熵，"
              f"{len(G['seeds'])} 个随机种子（{_gseeds}）的均值，与收费站页证据 1 同一设置。"
              f"中、右：d = {S['d_model']}，输入各分量独立 N(0, 1)，{S['batch']} 条序列 × {S['tokens']} 个位置 × "
              f"{len(S['seeds'])} 个种子（{_sseeds}）的均值；纵轴为 √(E‖x_l‖² / E‖x₀‖²)，阴影为 Pre-LN 的 Lemma 2 区间。",
        "en": f"Measured (synthetic data, computed with torch (CPU) at build time and cached): normref's decoder, LayerNorm, "
              f"weights N(0, 1/fan_in) (times β for DeepNorm). Left: {G['n_layer']} layers, d = {G['d_model']}, next-token "
              f"cross-entropy on {G['batch']} random token sequences of length {G['block_size']}, means over "
              f"{len(G['seeds'])} seeds ({_gseeds}): the setting of the toll-booth page's evidence 1. Middle and right: "
              f"d = {S['d_model']}, input entries i.i.d. N(0, 1), means over {S['batch']} sequences × {S['tokens']} "
              f"positions × {len(S['seeds'])} seeds ({_sseeds}); the y axis is √(E‖x_l‖² / E‖x₀‖²), and the band is "
              "Lemma 2's range for Pre-LN.",
    },
    deps=_INIT_DEPS,
)
def placement_init(lang: str, theme: str):
    g = pl.grad_per_layer()
    fig, axes = plt.subplots(1, 3, figsize=(11.0, 3.9), gridspec_kw=dict(width_ratios=[1, 0.8, 1.2]))
    ax = axes[0]
    for v in pl.VARIANTS:
        ax.plot(g["layers"], g[v].mean(0), lw=1.8, marker="o", ms=2.5, label=_label(lang, v), **style(v, theme))
    ax.set_yscale("log")
    ax.set_xticks(g["layers"][::2])
    ax.set_xlabel(t(lang, "层号 l", "layer l"))
    ax.set_ylabel(t(lang, "‖∂损失/∂W_FFN‖（初始化时）", "‖∂loss/∂W_FFN‖ at initialisation"))
    ax.set_title(t(lang, f"梯度（{G['n_layer']} 层）", f"Gradients ({G['n_layer']} layers)"), fontsize=10)
    c = colors(theme)
    for ax, L in zip(axes[1:], S["depths"]):
        r = pl.stream_lengths(L)
        d, ls = r["d"], r["layers"]
        b = lemma2_bounds(d, ls)
        ax.fill_between(ls, np.sqrt(b["pre_lo"] / d), np.sqrt(b["pre_hi"] / d), color=c[1], alpha=0.10, lw=0,
                        label=t(lang, "Lemma 2（Pre-LN）", "Lemma 2 (Pre-LN)"))
        for v in pl.VARIANTS:
            m = r[v].mean(0)
            ax.plot(ls, np.sqrt(m / m[0]), lw=1.8, **style(v, theme))
        ax.set_ylim(bottom=0)
        ax.set_xlabel(t(lang, "层号 l（0 = 输入）", "layer l (0 = the input)"))
        ax.set_title(t(lang, f"残差流长度（{L} 层）", f"Stream length ({L} layers)"), fontsize=10)
    axes[1].set_ylabel(t(lang, "√(E‖x_l‖² / E‖x₀‖²)", "√(E‖x_l‖² / E‖x₀‖²)"))
    axes[2].legend(loc="upper left", fontsize=7.5)
    h, lab = axes[0].get_legend_handles_labels()
    fig.legend(h, lab, loc="lower center", ncol=5, fontsize=8, bbox_to_anchor=(0.5, -0.01))
    fig.tight_layout(rect=(0, 0.13, 1, 1))
    return fig


# ------------------------------------------------------------------ training (the committed lab)


def _lab_caption(lang: str) -> str:
    """What the committed lab trained, on which machine and when: read from the results file, not retyped."""
    from ..results.placement import placement_cpu
    from ..values.placement import machine_text

    rep = placement_cpu()
    s, c = rep["setting"], rep["corpus"]
    every = pl.corpus_of(rep).every
    lrs = " / ".join(f"{lr:g}" for lr in s["lrs"])
    seeds = f"{s['seeds'][0]}–{s['seeds'][-1]}"
    zh = (f"实测（python -m normref placement，结果已提交到仓库；{machine_text('zh')}，单进程单线程）：normref 的 "
          f"{s['n_layer']} 层字符级语言模型（d = {s['d_model']}、{s['n_head']} 头、LayerNorm），在本站 {len(c['files'])} 个英文页面的 "
          f"Markdown 源文本（{c['chars']:,} 个字符，每 {every} 块留出 1 块）上训练 {s['steps']} 步；批大小 {s['batch']}，"
          f"上下文 {s['block_size']} 个字符，Adam（β = {s['betas'][0]}, {s['betas'][1]}），峰值学习率 {lrs}，"
          f"预热为前 {s['warmup']} 步线性升温；每种设置 {len(s['seeds'])} 个随机种子（{seeds}）。")
    en = (f"Measured (python -m normref placement, results committed to the repository; {machine_text('en')}, one "
          f"process, one thread): normref's {s['n_layer']}-layer character-level language model (d = {s['d_model']}, "
          f"{s['n_head']} heads, LayerNorm), trained for {s['steps']} steps on the Markdown source of this site's "
          f"{len(c['files'])} English pages ({c['chars']:,} characters; one chunk in {every} held out); batch {s['batch']}, "
          f"{s['block_size']} characters of context, Adam (β = {s['betas'][0]}, {s['betas'][1]}), peak learning rate "
          f"{lrs}, warmup a linear ramp over the first {s['warmup']} steps; {len(s['seeds'])} seeds ({seeds}) per "
          "setting.")
    return t(lang, zh, en)


_LAB = {lang: _lab_caption(lang) for lang in ("zh", "en")}


@figure(
    "placement_training",
    alt={
        "zh": "四幅训练损失曲线，两行两列：行是两个学习率，列是不预热与预热。每种接法一条线（各随机种子的均值），"
              "虚线表示加了 QK-norm，点线是只学字母频率（unigram）能达到的损失。在较小的学习率下，大多数接法稳步下降，"
              "不预热的 Post-LN 停在点线附近；在较大的学习率下，Post-LN、DeepNorm 与不预热的 Mix-LN 停在点线上，"
              "最低的几条曲线带有 QK-norm。",
        "en": "Four panels of training-loss curves, two rows by two columns: rows are the two learning rates, columns are "
              "without and with warmup. One line per layout (the mean over seeds), dashed with QK-norm; the dotted "
              "line is the loss of knowing only the letter frequencies (unigram). At the smaller learning rate most "
              "layouts fall steadily and Post-LN without warmup stays near the dotted line; at the larger one Post-LN, "
              "DeepNorm and Mix-LN without warmup stay on the dotted line, and the lowest curves have QK-norm.",
    },
    caption={
        "zh": _LAB["zh"] + f"曲线为各种子训练损失的均值，做了 {pl.SMOOTH} 步滑动平均（每 {pl.EVERY} 步画一点）；发散（损失变为非有限值）的种子不计入均值。"
              "点线：只按训练文本的字符频率预测时在留出文本上的损失。",
        "en": _LAB["en"] + f" Curves are the mean training loss over seeds, as a {pl.SMOOTH}-step moving average (a point every {pl.EVERY} steps); a seed "
              "that diverged (non-finite loss) is left out of the mean. Dotted: the held-out loss of predicting only "
              "the training text's character frequencies.",
    },
    deps=_LAB_DEPS,
)
def placement_training(lang: str, theme: str):
    from ..results.placement import placement_cpu, summary

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
            ax.set_title(t(lang, f"学习率 {lr:g}，{'预热 ' + str(w) + ' 步' if w else '不预热'}",
                           f"learning rate {lr:g}, {'warmup (' + str(w) + ' steps)' if w else 'no warmup'}"), fontsize=10)
            if i == 1:
                ax.set_xlabel(t(lang, "训练步数", "training step"))
            if j == 0:
                ax.set_ylabel(t(lang, "训练损失（nats/字符）", "training loss (nats/char)"))
    axes[0, 0].annotate(t(lang, "只学字符频率", "letter frequencies only"), (k, rep["corpus"]["unigram_loss"]),
                        xytext=(4, 4), textcoords="offset points", color=muted, fontsize=8.5)
    axes[0, 0].set_ylim(1.9, rep["uniform_loss"] + 0.05)
    h, lab = axes[0, 0].get_legend_handles_labels()
    fig.legend(h, lab, loc="lower center", ncol=5, fontsize=8.5, bbox_to_anchor=(0.5, -0.005))
    fig.tight_layout(rect=(0, 0.08, 1, 1))
    return fig


@figure(
    "placement_logits",
    alt={
        "zh": "两幅折线图，对数纵轴：训练结束时每层注意力的最大 logit，左图不预热、右图预热，都是较大的学习率。"
              "没有 QK-norm 的 Pre-LN、Peri-LN 与输出端归一化（实线）的最大 logit 达到数十到数千，输出端归一化最高；"
              "加了 QK-norm（虚线）的三条线都低得多，在十左右。",
        "en": "Two line charts with a log y axis: the largest attention logit of each layer at the end of training, without "
              "warmup on the left and with it on the right, both at the larger learning rate. Without QK-norm (solid), "
              "Pre-LN, Peri-LN and the output norm reach tens to thousands, the output norm highest; with QK-norm "
              "(dashed) all three stay far lower, around ten.",
    },
    caption={
        "zh": _LAB["zh"] + "每个种子在训练结束时，对同一批留出序列计算每层、每个头、每对可见位置的 q·k/√d_h，取最大值；"
              "线为种子均值。没有 QK-norm 时 logit 没有上限；有 QK-norm 时它不超过 √d_h 乘以 q、k 两个增益乘积的最大值。",
        "en": _LAB["en"] + " For each seed at the end of training, q·k/√d_h over every layer, head and visible "
              "pair of positions of the same held-out sequences, and its maximum; lines are means over seeds. Without "
              "QK-norm nothing bounds the logit; with it, it cannot exceed √d_h times the largest product of the q and k "
              "gains.",
    },
    deps=_LAB_DEPS,
)
def placement_logits(lang: str, theme: str):
    from ..results.placement import placement_cpu, summary

    rep, summ = placement_cpu(), summary()
    s = rep["setting"]
    lr = max(s["lrs"])
    fig, axes = plt.subplots(1, 2, figsize=(9.0, 3.8), sharey=True)
    layers = np.arange(1, s["n_layer"] + 1)
    for ax, w in zip(axes, (0, s["warmup"])):
        for v in pl.QK_PAIRS:
            m = summ[(v, lr, w)]["max_logit"]
            if m is not None:
                ax.plot(layers, m, lw=1.8, marker="o", ms=3, label=_label(lang, v), **style(v, theme))
        ax.set_yscale("log")
        ax.set_xticks(layers)
        ax.set_xlabel(t(lang, "层号 l", "layer l"))
        ax.set_title(t(lang, f"学习率 {lr:g}，{'预热' if w else '不预热'}",
                       f"learning rate {lr:g}, {'with warmup' if w else 'no warmup'}"), fontsize=10)
    axes[0].set_ylabel(t(lang, "最大注意力 logit", "largest attention logit"))
    axes[1].legend(loc="upper left", fontsize=8, bbox_to_anchor=(1.0, 1.0))
    fig.tight_layout()
    return fig
