"""Widget data of the home page: the scale-invariance playground."""

from __future__ import annotations

import numpy as np

from . import dataset
from ..experiments.scale import scale_sweep


@dataset("scale_playground")
def scale_playground(lang):
    """The fixed 256-d vector (seed 0) and its sweep, for the in-browser playground.

    The widget recomputes RMSNorm in JavaScript for any stretch factor; the
    sweep values let a test compare what the page shows with normref.
    """
    r = scale_sweep()
    x = np.random.default_rng(r["seed"]).standard_normal(r["d"])
    return {
        "d": r["d"], "seed": r["seed"], "eps": 1e-6, "x": np.round(x, 6),
        "scales": np.round(r["scales"], 6), "l2_in": np.round(r["l2_in"], 6),
        "l2_out": np.round(r["l2_out"], 6), "sqrt_d": r["sqrt_d"],
    }
