"""Figure of the toll-booth page's control experiment: Pre-LN with and without detached branch inputs."""

from __future__ import annotations

import matplotlib.pyplot as plt

from . import figure
from ._style import colors, t
from ..experiments import toll_booth as tb

_DEPS = ("normref.experiments.pre_ln_gradient", "normref.experiments.toll_booth", "normref.blocks", "normref.nn")
G = tb.GRAD
_seeds = f"{G['seeds'][0]}–{G['seeds'][-1]}"


def _band(ax, x, rows, color, label, ls="-"):
    m, lo, hi = rows.mean(0), rows.min(0), rows.max(0)
    ax.fill_between(x, lo, hi, color=color, alpha=0.2, lw=0)
    ax.plot(x, m, color=color, lw=2.2, ls=ls, marker="o", ms=4, label=label)


@figure(
    "grad_detached",
    alt={
        "zh": "两幅并排的折线图，横轴都是层号。左图：Pre-LN 各层 FFN 权重的梯度范数。照常计算时随层号下降；"
              "把各分支的输入断开梯度（detach）之后，曲线不再下降，而是随层号缓慢上升。"
              "右图：残差流上的梯度范数 ‖∂损失/∂x_l‖。照常计算时越靠近输入越大；断开之后每一层都相同，是一条水平线。",
        "en": "Two side-by-side line charts, layer index on both x axes. Left: the gradient norm of each Pre-LN layer's "
              "FFN weights. As is, it falls with the layer index; with every branch input detached it no longer falls "
              "but rises slowly. Right: the gradient norm of the residual stream, ‖∂loss/∂x_l‖. As is, it is largest "
              "near the input; detached, it is the same at every layer, a flat line.",
    },
    caption={
        "zh": f"实测（合成数据）：与上图完全相同的设置（{G['n_layer']} 层 Pre-LN 解码器，d = {G['d_model']}，"
              f"{len(G['seeds'])} 个随机种子 {_seeds}，同样的随机词元批次），只多了一个对照：在每个注意力和 MLP 分支入口的 LN 之前"
              "把输入 detach，前向结果不变，反向时梯度只能沿恒等路径回到残差流。线为种子均值，阴影为最小–最大值。构建时用 torch（CPU）计算。",
        "en": f"Measured (synthetic data): exactly the setting of the figure above ({G['n_layer']}-layer Pre-LN decoder, "
              f"d = {G['d_model']}, {len(G['seeds'])} seeds {_seeds}, the same random token batches), plus one control: "
              "the input of every attention and MLP branch is detached before its entrance LN. The forward pass is "
              "unchanged; backward, the gradient can return to the residual stream only along the identity path. "
              "Lines are seed means, bands span min to max. Computed with torch (CPU) at build time.",
    },
    deps=_DEPS,
)
def grad_detached(lang: str, theme: str):
    from ..experiments.pre_ln_gradient import pre_ln_gradient_paths

    r = pre_ln_gradient_paths()
    c = colors(theme)
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(7.6, 3.6))
    _band(a1, r["layers"], r["ffn"], c[1], t(lang, "Pre-LN，照常", "Pre-LN, as is"))
    _band(a1, r["layers"], r["ffn_detached"], c[3], t(lang, "分支输入 detach", "branch inputs detached"), ls="--")
    a1.set_xticks(r["layers"][::2])
    a1.set_ylim(bottom=0)
    a1.set_xlabel(t(lang, "层号 l", "layer l"))
    a1.set_ylabel(t(lang, "‖∂损失/∂W_FFN‖", "‖∂loss/∂W_FFN‖"))
    a1.set_title(t(lang, "各层 FFN 权重的梯度", "FFN weight gradient per layer"), fontsize=10)
    a1.legend(loc="lower left", fontsize=8)
    ls = list(range(r["stream"].shape[1]))
    _band(a2, ls, r["stream"], c[1], t(lang, "Pre-LN，照常", "Pre-LN, as is"))
    _band(a2, ls, r["stream_detached"], c[3], t(lang, "分支输入 detach", "branch inputs detached"), ls="--")
    a2.set_xticks(ls[::2])
    a2.set_ylim(bottom=0)
    a2.set_xlabel(t(lang, "残差流 x_l（0 = 嵌入）", "stream x_l (0 = embeddings)"))
    a2.set_ylabel(t(lang, "‖∂损失/∂x_l‖", "‖∂loss/∂x_l‖"))
    a2.set_title(t(lang, "残差流上的梯度", "gradient on the residual stream"), fontsize=10)
    fig.tight_layout()
    return fig
