"""Real-model values for either page prompt, so each language's page quotes its own prompt's numbers.

The real-model page's table is measured on the page's own prompt (Chinese
page: Chinese prompt). The values here give the prose the same choice:
``real_models.zh.*`` on the Chinese prompt, ``real_models.en.*`` on the
English one. Read from the cached measurement; nothing is typed in.
"""

from __future__ import annotations

from . import fmt, value

SMOL = "smollm2-135m"


def _run(pl):
    from ..experiments.models import run

    return run(SMOL, pl)


def _rows(pl):
    from ..models.measurement import layer_rows

    return layer_rows(_run(pl))


def _summary(pl):
    from ..experiments.models import summary

    return summary(SMOL, pl)


def _big(x: float) -> str:
    return f"{round(x):,}".replace(",", "\u2009")


for _pl in ("zh", "en"):
    value(f"real_models.{_pl}.post_gain_range")(  # what attention and the MLP read, over every block
        lambda lang, pl=_pl: "{}–{}".format(
            fmt(min(_summary(pl)["post1_min"], _summary(pl)["post2_min"]), 1),
            fmt(max(_summary(pl)["post1_max"], _summary(pl)["post2_max"]), 1)))
    value(f"real_models.{_pl}.attn_post_gain_range")(
        lambda lang, pl=_pl: f"{fmt(_summary(pl)['post1_min'], 1)}–{fmt(_summary(pl)['post1_max'], 1)}")
    value(f"real_models.{_pl}.l0_mid")(lambda lang, pl=_pl: fmt(_rows(pl)[0]["n2_in"], 1))
    value(f"real_models.{_pl}.l1_in")(lambda lang, pl=_pl: fmt(_rows(pl)[1]["stream"], 1))
    value(f"real_models.{_pl}.final_post")(
        lambda lang, pl=_pl: fmt(_run(pl)["final"]["norms"][0]["post_gain"]["l2_excl0"], 0))
    value(f"real_models.{_pl}.stream_all_at_massive")(
        lambda lang, pl=_pl: _big(_run(pl)["layers"][_summary(pl)["massive_from"]]["stream_in"]["l2_all"]))
    value(f"real_models.{_pl}.stream_excl0_at_massive")(
        lambda lang, pl=_pl: fmt(_run(pl)["layers"][_summary(pl)["massive_from"]]["stream_in"]["l2_excl0"], 0))
