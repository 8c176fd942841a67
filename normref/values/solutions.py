"""Values and tables of the worked solutions: what each page's exercises ask, computed (normref.experiments.exercises).

An exercise that asks the reader to change a parameter gets the result of that change here,
at build time: the formulas page's shifted vector, the toll-booth page's deeper stack, the
K3 page's top-1 routing and unrenormalized router. Names start with the page's topic and ``ex.``.
"""

from __future__ import annotations

import math

import numpy as np

from . import Column, Table, fmt, fmt_vec, register, register_tables
from ..labels import labels

# The cached experiments this module reads (normref.experiments.declared): a build runs each once, first.
EXPERIMENTS = (
    'normref.experiments.toll_booth:grad_per_layer()',
    'normref.experiments.toll_booth:grad_per_layer(n_layer=24)',
    'normref.experiments.toll_booth:grad_per_layer(n_layer=48)',
    'normref.experiments.exercises:stream_share()',
    'normref.experiments.exercises:moe_variants()',
)


t = labels(__name__)  # the Chinese is in normref/labels.yml

# The depths of the toll-booth exercise: the page's 12 layers, the exercise's 24, and one more doubling.
DEPTHS = (12, 24, 48)


def _exp():
    from ..experiments import exercises

    return exercises


# ---------------------------------------------------------------- formulas


def _by_hand() -> dict:
    return _exp().layer_norm_by_hand()


def _shift_table(lang: str) -> Table:
    r = _exp().shift_sweep()
    cols = (Column(t(lang, "Shift c")), Column("LayerNorm(x + c)"), Column("RMSNorm(x + c)"))
    rows = tuple((f"{c:g}", fmt_vec(ln, 2), fmt_vec(rn, 2))
                 for c, ln, rn in zip(r["shifts"], r["layer_norm"], r["rms_norm"]))
    return Table(cols, rows)


def _shift_ln_max_change() -> str:
    """Largest change of any LayerNorm output entry over the shifts (rounding error only)."""
    ln = _exp().shift_sweep()["layer_norm"]
    return f"{float(np.abs(ln - ln[0]).max()):.0e}".replace("e-", "e−").replace("0e+00", "0")


def _shift_largest() -> str:
    return f"{_exp().shift_sweep()['shifts'][-1]:g}"


# ---------------------------------------------------------------- toll booth: a deeper stack


def _grad(n_layer: int) -> dict:
    from ..experiments.toll_booth import grad_per_layer

    return grad_per_layer(n_layer=n_layer)


def _last(n_layer: int, placement: str) -> float:
    return float(_grad(n_layer)[placement].mean(0)[-1])


def _last_ratio(n_layer: int) -> float:
    return _last(n_layer, "post") / _last(n_layer, "pre")


def _depth_table(lang: str) -> Table:
    cols = (Column(t(lang, "Layers L")),
            Column(t(lang, "Post-LN, last layer")),
            Column(t(lang, "Pre-LN, last layer")),
            Column("Post ÷ Pre"))
    rows = tuple((str(n), fmt(_last(n, "post"), 2), fmt(_last(n, "pre"), 2), fmt(_last_ratio(n), 1)) for n in DEPTHS)
    return Table(cols, rows)


def _seed_range(n_layer: int) -> str:
    g = _grad(n_layer)
    r = g["post"][:, -1] / g["pre"][:, -1]
    return f"{fmt(float(r.min()), 1)}–{fmt(float(r.max()), 1)}"


# ---------------------------------------------------------------- placement


def _share(placement: str) -> dict:
    return _exp().stream_share()[placement]


def _layouts(with_final_norm: bool, lang: str) -> str:
    names = [f"`{p}`" for p, has in _exp().final_norms().items() if has == with_final_norm]
    return t(lang, ", ").join(names)


# ---------------------------------------------------------------- K3


def _moe(part: str, key: str) -> float:
    return _exp().moe_variants()[part][key]


register({
    "formulas.ex.d": lambda: str(_by_hand()["d"]),
    "formulas.ex.mean": lambda: fmt(_by_hand()["mean"], 0),
    "formulas.ex.centred": lambda: fmt_vec(_by_hand()["centred"], 0),
    "formulas.ex.var": lambda: fmt(_by_hand()["variance"], 0),
    "formulas.ex.std": lambda: fmt(_by_hand()["std"], 3),
    "formulas.ex.y": lambda: fmt_vec(_by_hand()["layer_norm"], 3),
    "formulas.ex.l2": lambda: fmt(_by_hand()["l2"], 2),
    "formulas.ex.shift_ln_change": _shift_ln_max_change,
    "formulas.ex.shift_largest": _shift_largest,
    "toll.ex.widen": lambda: fmt(_last_ratio(24) / _last_ratio(12), 2),
    "toll.ex.sqrt2": lambda: fmt(math.sqrt(2), 2),
    "toll.ex.inv_sqrt2": lambda: fmt(1 / math.sqrt(2), 2),
    "toll.ex.post_24_over_12": lambda: fmt(_last(24, "post") / _last(12, "post"), 2),
    "toll.ex.pre_24_over_12": lambda: fmt(_last(24, "pre") / _last(12, "pre"), 2),
    "toll.ex.seed_range_24": lambda: _seed_range(24),
    "placement.ex.layers": lambda: str(_exp().stream_share()["n_layer"]),
    "placement.ex.alpha": lambda: fmt(_share("deepnorm")["alpha"], 2),
    "placement.ex.share_post": lambda: fmt(_share("post")["ratio"], 1),
    "placement.ex.share_deepnorm": lambda: fmt(_share("deepnorm")["ratio"], 0),
    "placement.ex.final_norm_none": lambda lang: _layouts(False, lang),
    "placement.ex.final_norm_with": lambda lang: _layouts(True, lang),
    "moe.ex.top1_cv_u": lambda: fmt(_moe("top1_identical", "cv_u"), 2),
    "moe.ex.top1_cv_z": lambda: fmt(_moe("top1_identical", "cv_z"), 2),
    "moe.ex.top1_cv_u_over_z2": lambda: fmt(_moe("top1_identical", "cv_u_over_z2"), 2),
    "moe.ex.renorm_cv_u": lambda: fmt(_moe("no_renorm", "cv_u"), 2),
    "moe.ex.no_renorm_cv_u": lambda: fmt(_moe("no_renorm", "cv_u_kept"), 2),
    "moe.ex.no_renorm_cv_kept": lambda: fmt(_moe("no_renorm", "cv_kept"), 2),
    "moe.ex.no_renorm_kept_mean": lambda: fmt(_moe("no_renorm", "kept_mean"), 2),
    "moe.ex.no_renorm_cv_normed": lambda: fmt(_moe("no_renorm", "cv_u_kept_normed"), 3),
})

register_tables({"formulas.ex.shift": _shift_table, "toll.ex.depth": _depth_table})
