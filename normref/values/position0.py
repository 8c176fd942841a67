"""Position 0's massive activation in SmolLM2, per prompt (each page quotes its own prompt).

Read from the real-model measurement (:mod:`normref.experiments.models`).
The "plateau" is the run of layers where position 0's stream vector stays
within :data:`PLATEAU` of its peak; outside it (the last layer, the final
norm's input) the vector is much shorter, so a page must say which layers a
number holds for.
"""

from __future__ import annotations

from . import register

# The cached experiments this module reads (normref.experiments.declared): a build runs each once, first.
EXPERIMENTS = (
    "normref.experiments.models:run('smollm2-135m', 'en')",
    "normref.experiments.models:run('smollm2-135m', 'zh')",
)


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


def _final(pl: str) -> float:
    """L2 of position 0 entering the final norm."""
    from ..experiments.models import run

    return run("smollm2-135m", pl)["final"]["stream_in"]["l2_tokens"][0]


def _at_first(pl: str, key: str):
    """A row field of the plateau's first layer."""
    return _rows(pl)[plateau(pl)[0]][key]


def _prompt(pl: str) -> dict:
    """The values of one prompt (``position0.zh.*`` on the Chinese prompt, ``position0.en.*`` on the English one)."""
    p = f"position0.{pl}"
    return {
        f"{p}.first_layer": lambda: str(plateau(pl)[0]),
        f"{p}.last_layer": lambda: str(plateau(pl)[1]),
        f"{p}.peak": lambda: _big(plateau(pl)[2]),
        f"{p}.after_plateau": lambda: _big(_rows(pl)[plateau(pl)[1] + 1]["pos0"]),
        # at the plateau's first layer: position 0 over the other tokens' mean, its largest dimension
        f"{p}.ratio": lambda: _big(_at_first(pl, "pos0") / _at_first(pl, "stream")),
        f"{p}.vs_typical": lambda: _big(_summary(pl)["pos0_vs_typical"]),
        f"{p}.share": lambda: f"{100 * _at_first(pl, 'pos0_share'):.1f}%",
        f"{p}.dim": lambda: str(_at_first(pl, "pos0_dim")),
        f"{p}.final_input": lambda: _big(_final(pl)),
    }


register({**_prompt("zh"), **_prompt("en")})
