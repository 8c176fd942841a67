"""Widget data of the softmax-saturation section: the fixed scores and their sweep."""

from __future__ import annotations

import numpy as np

from . import dataset
from ..experiments.softmax import LABELS, SCORES, saturation


@dataset("softmax_saturation")
def softmax_saturation(lang):
    """Scores, labels and normref's softmax per magnitude, so a slider can show (and a test can check) them."""
    r = saturation()
    return {"labels": list(LABELS), "scores": SCORES, "scales": np.round(r["scales"], 6),
            "p": np.round(r["p"], 6), "top": np.round(r["top"], 6)}
