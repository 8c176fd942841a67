"""Position 0's massive activation in SmolLM2, per prompt (each page quotes its own prompt).

Read from the real-model measurement (:mod:`normref.experiments.models`).
The "plateau" is the run of layers where position 0's stream vector stays
within :data:`PLATEAU` of its peak; outside it (the last layer, the final
norm's input) the vector is much shorter, so a page must say which layers a
number holds for.
"""

from __future__ import annotations

from . import value

PLATEAU = 0.05  # within 5% of the peak


def _rows(pl: str):
    from ..experiments.models import run
    from ..models.measurement import layer_rows

    return layer_rows(run("smollm2-135m", pl))


def _summary(pl: str) -> dict:
    from ..experiments.models import summary

    return summary("smollm2-135m", pl)


def _big(x: float) -> str:
    return f"{round(x):,}".replace(",", "\u2009")


def plateau(pl: str) -> tuple[int, int, float]:
    """(first layer, last layer, peak L2) of the run of layers around the peak within PLATEAU of it."""
    rows = _rows(pl)
    k = max(range(len(rows)), key=lambda i: rows[i]["pos0"])
    peak = rows[k]["pos0"]
    lo = hi = k
    while lo > 0 and rows[lo - 1]["pos0"] >= (1 - PLATEAU) * peak:
        lo -= 1
    while hi + 1 < len(rows) and rows[hi + 1]["pos0"] >= (1 - PLATEAU) * peak:
        hi += 1
    return rows[lo]["layer"], rows[hi]["layer"], peak


for _pl in ("zh", "en"):
    value(f"position0.{_pl}.first_layer")(lambda lang, pl=_pl: str(plateau(pl)[0]))
    value(f"position0.{_pl}.last_layer")(lambda lang, pl=_pl: str(plateau(pl)[1]))
    value(f"position0.{_pl}.peak")(lambda lang, pl=_pl: _big(plateau(pl)[2]))
    value(f"position0.{_pl}.after_plateau")(lambda lang, pl=_pl: _big(_rows(pl)[plateau(pl)[1] + 1]["pos0"]))
    value(f"position0.{_pl}.ratio")(  # at the plateau's first layer
        lambda lang, pl=_pl: _big(_rows(pl)[plateau(pl)[0]]["pos0"] / _rows(pl)[plateau(pl)[0]]["stream"]))
    value(f"position0.{_pl}.vs_typical")(lambda lang, pl=_pl: _big(_summary(pl)["pos0_vs_typical"]))
    value(f"position0.{_pl}.share")(
        lambda lang, pl=_pl: f"{100 * _rows(pl)[plateau(pl)[0]]['pos0_share']:.1f}%")
    value(f"position0.{_pl}.dim")(lambda lang, pl=_pl: str(_rows(pl)[plateau(pl)[0]]["pos0_dim"]))


def _final(pl: str) -> float:
    from ..experiments.models import run

    return run("smollm2-135m", pl)["final"]["stream_in"]["l2_tokens"][0]


for _pl in ("zh", "en"):
    value(f"position0.{_pl}.final_input")(lambda lang, pl=_pl: _big(_final(pl)))
