"""Real-model values for either page prompt, so each language's page quotes its own prompt's numbers.

The real-model page's table is measured on the page's own prompt (Chinese
page: Chinese prompt). The values here give the prose the same choice:
``real_models.zh.*`` on the Chinese prompt, ``real_models.en.*`` on the
English one. Read from the cached measurement; nothing is typed in.
"""

from __future__ import annotations

from . import fmt, register

# The cached experiments this module reads (normref.experiments.declared): a build runs each once, first.
EXPERIMENTS = (
    "normref.experiments.models:run('smollm2-135m', 'en')",
    "normref.experiments.models:run('smollm2-135m', 'zh')",
)

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


def _post_gain_range(pl: str, sites: tuple[str, ...]) -> str:
    """L2 range after the gain of the given norms ("post1": attention's, "post2": the MLP's) over every block."""
    s = _summary(pl)
    return f"{fmt(min(s[k + '_min'] for k in sites), 1)}–{fmt(max(s[k + '_max'] for k in sites), 1)}"


def _at_massive(pl: str, key: str) -> float:
    """The residual stream entering the first layer where position 0 carries a massive activation."""
    return _run(pl)["layers"][_summary(pl)["massive_from"]]["stream_in"][key]


def _prompt(pl: str) -> dict:
    p = f"real_models.{pl}"
    return {
        # what attention and the MLP read, over every block; what attention alone reads
        f"{p}.post_gain_range": lambda: _post_gain_range(pl, ("post1", "post2")),
        f"{p}.attn_post_gain_range": lambda: _post_gain_range(pl, ("post1",)),
        # layer 0's stream after the attention add (the input of its MLP norm), and layer 1's input
        f"{p}.l0_mid": lambda: fmt(_rows(pl)[0]["n2_in"], 1),
        f"{p}.l1_in": lambda: fmt(_rows(pl)[1]["stream"], 1),
        f"{p}.final_post": lambda: fmt(_run(pl)["final"]["norms"][0]["post_gain"]["l2_excl0"], 0),
        f"{p}.stream_all_at_massive": lambda: _big(_at_massive(pl, "l2_all")),
        f"{p}.stream_excl0_at_massive": lambda: fmt(_at_massive(pl, "l2_excl0"), 0),
    }


register({**_prompt("zh"), **_prompt("en")})
