"""Figure of the toll-booth page's control experiment: Pre-LN with and without detached branch inputs."""

from __future__ import annotations

import matplotlib.pyplot as plt

from . import figure, labels
from ._style import colors

# The cached experiments this module reads (normref.experiments.declared): a build runs each once, first.
EXPERIMENTS = (
    'normref.experiments.pre_ln_gradient:pre_ln_gradient_paths()',
)


t = labels(__name__)  # the labels: English here, Chinese in figures.yml (labels:)

# The experiments import torch: they are imported inside the functions, so listing the figures does not
# load torch.


def _fields() -> dict:
    """The setting the control shares with the toll-booth gradient experiment, for the caption (figures.yml)."""
    from ..experiments.toll_booth import GRAD

    return {"n_layer": GRAD["n_layer"], "d_model": GRAD["d_model"], "n_seeds": len(GRAD["seeds"]),
            "seeds": f"{GRAD['seeds'][0]}–{GRAD['seeds'][-1]}"}


def _band(ax, x, rows, color, label, ls="-"):
    m, lo, hi = rows.mean(0), rows.min(0), rows.max(0)
    ax.fill_between(x, lo, hi, color=color, alpha=0.2, lw=0)
    ax.plot(x, m, color=color, lw=2.2, ls=ls, marker="o", ms=4, label=label)


@figure("grad_detached", fields=_fields)
def grad_detached(lang: str, theme: str):
    from ..experiments.pre_ln_gradient import pre_ln_gradient_paths

    r = pre_ln_gradient_paths()
    c = colors(theme)
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(7.6, 3.6))
    _band(a1, r["layers"], r["ffn"], c[1], t(lang, "Pre-LN, as is"))
    _band(a1, r["layers"], r["ffn_detached"], c[3], t(lang, "branch inputs detached"), ls="--")
    a1.set_xticks(r["layers"][::2])
    a1.set_ylim(bottom=0)
    a1.set_xlabel(t(lang, "layer l"))
    a1.set_ylabel(t(lang, "‖∂loss/∂W_FFN‖"))
    a1.set_title(t(lang, "FFN weight gradient per layer"), fontsize=10)
    a1.legend(loc="lower left", fontsize=8)
    ls = list(range(r["stream"].shape[1]))
    _band(a2, ls, r["stream"], c[1], t(lang, "Pre-LN, as is"))
    _band(a2, ls, r["stream_detached"], c[3], t(lang, "branch inputs detached"), ls="--")
    a2.set_xticks(ls[::2])
    a2.set_ylim(bottom=0)
    a2.set_xlabel(t(lang, "stream x_l (0 = embeddings)"))
    a2.set_ylabel(t(lang, "‖∂loss/∂x_l‖"))
    a2.set_title(t(lang, "gradient on the residual stream"), fontsize=10)
    fig.tight_layout()
    return fig
