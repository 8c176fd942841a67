"""Widget data of the placement page: the numbers the placement-compare widget draws for any two variants.

Everything here is what the static figures draw (normref.figures.placement),
from the same functions: the initialization curves computed at build time and
the committed lab's training curves (``normref.experiments.placement.smoothed``:
the same points the training figure draws), so the widget and the figures
cannot disagree. A browser test compares what the widget shows with this.
"""

from __future__ import annotations

import math

import numpy as np

from . import dataset

# The lab (normref.experiments.placement) imports torch: it is imported inside the dataset function, so
# listing the datasets does not load torch.


# The cached experiments this module reads (normref.experiments.declared): a build runs each once, first.
EXPERIMENTS = (
    'normref.experiments.placement:grad_per_layer()',
    'normref.experiments.placement:stream_lengths(12)',
    'normref.experiments.placement:stream_lengths(48)',
)


def _r(x, digits=4):
    return [None if not math.isfinite(float(v)) else round(float(v), digits) for v in x]


def loss_key(lr: float, warmup: int) -> str:
    return f"{lr:g}/{warmup}"


@dataset("placement_lab")
def placement_lab(lang):
    from ..experiments import placement as pl
    from ..results.placement import placement_cpu, summary

    rep, summ = placement_cpu(), summary()
    s = rep["setting"]
    g = pl.grad_per_layer()
    streams = {str(n): pl.stream_lengths(n) for n in pl.STREAM["depths"]}
    settings = [(lr, w) for lr in s["lrs"] for w in (0, s["warmup"])]
    out = {
        "variants": list(pl.VARIANTS),
        "names": {v: pl.variant_name(v, lang) for v in pl.VARIANTS},
        "qk": {v: pl.parse_variant(v)[1] for v in pl.VARIANTS},
        "grad": {"layers": g["layers"].tolist(), "mean": {v: _r(g[v].mean(0)) for v in pl.VARIANTS},
                 "ratio": {v: round(pl.grad_ratio(g, v), 4) for v in pl.VARIANTS}},
        "stream": {n: {"layers": r["layers"].tolist(),
                       "length": {v: _r(np.sqrt(r[v].mean(0) / r[v].mean(0)[0])) for v in pl.VARIANTS},
                       "growth": {v: round(pl.stream_growth(r, v), 4) for v in pl.VARIANTS}}
                   for n, r in streams.items()},
        "loss": {"settings": [{"key": loss_key(lr, w), "lr": lr, "warmup": w} for lr, w in settings],
                 "steps": s["steps"], "unigram": round(rep["corpus"]["unigram_loss"], 4),
                 "uniform": round(rep["uniform_loss"], 4), "curves": {}, "final": {}},
    }
    for v in pl.VARIANTS:
        out["loss"]["curves"][v], out["loss"]["final"][v] = {}, {}
        for lr, w in settings:
            e = summ[(v, lr, w)]
            k = loss_key(lr, w)
            if e["curve"] is not None:
                steps, y = pl.smoothed(e["curve"])
                out["loss"]["curves"][v][k] = {"steps": steps, "loss": _r(y)}
            else:
                out["loss"]["curves"][v][k] = None
            out["loss"]["final"][v][k] = {"final": _r([e["final"]])[0], "diverged": e["diverged"],
                                          "stalled": e["stalled"], "seeds": e["seeds"]}
    return out
