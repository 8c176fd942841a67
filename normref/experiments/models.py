"""The real-model page's measurements: two models, an English and a Chinese prompt.

Everything here reads :func:`normref.models.measure` (cached on disk), so the
figures, the values in the prose, the detail tables and the layer-explorer
data of both languages share four forward passes, done once.
"""

from __future__ import annotations

import math

import numpy as np

from ..labels import label
from ..models.measurement import layer_rows, measure

__all__ = ["PROMPTS", "MODEL_IDS", "run", "summary"]

# One prompt per language of the site; both models read both prompts. The Chinese prompt is this English
# one's entry in normref/labels.yml (the measurement's cache key has the prompt itself).
_PROMPT = "Normalization keeps every token's hidden vector at a steady length, layer after layer."
PROMPTS = {"en": _PROMPT, "zh": label(__name__, "zh", _PROMPT, {})}
MODEL_IDS = ("smollm2-135m", "minilm-l6")
# What this experiment needs done first (normref.experiments.declared): SmolLM2's weights, converted once
# (MiniLM's are read as they are).
EXPERIMENTS = ("normref.models.checkpoint:convert('smollm2-135m')",)

# Position 0 counts as carrying a "massive" activation from the first layer
# where its L2 is at least this many times the mean L2 of the other tokens.
MASSIVE_RATIO = 50.0


def run(model: str, prompt_lang: str) -> dict:
    """The measurement document of ``model`` on the page prompt of ``prompt_lang``."""
    if prompt_lang not in PROMPTS:
        raise ValueError(f"prompt_lang must be one of {', '.join(PROMPTS)}, got {prompt_lang!r}")
    return measure(model, PROMPTS[prompt_lang])


def _pre_gain_dev(doc: dict) -> float:
    """Largest |L2 of x̂ − √d| over every norm, layer and token (position 0 included)."""
    devs = []
    for part in (doc["embedding"], *doc["layers"], doc["final"]):
        for n in part["norms"]:
            devs.extend(abs(v - doc["sqrt_d"]) for v in n["pre_gain"]["l2_tokens"])
    return max(devs)


def summary(model: str, prompt_lang: str) -> dict:
    """The handful of numbers the page states about one run."""
    doc = run(model, prompt_lang)
    rows = layer_rows(doc)
    first, last = rows[0]["stream"], doc["final"]["stream_in"]["l2_excl0"]
    out = {
        "n_tokens": doc["n_tokens"], "n_unk": doc["n_unk"],
        "stream_first": first, "stream_last": last, "growth": last / first,
        "stream_min": min(r["stream"] for r in rows[1:]) if len(rows) > 1 else first,
        "stream_max": max(max(r["stream"] for r in rows), last),
        "pre_gain_dev": _pre_gain_dev(doc),
        "post1_min": min(r["n1_post"] for r in rows), "post1_max": max(r["n1_post"] for r in rows),
        "post2_min": min(r["n2_post"] for r in rows), "post2_max": max(r["n2_post"] for r in rows),
        "gain_mean_min": min(min(n["gain"]["mean"] for n in L["norms"]) for L in doc["layers"]),
        "gain_mean_max": max(max(n["gain"]["mean"] for n in L["norms"]) for L in doc["layers"]),
    }
    # Position 0: from which layer its stream vector dwarfs the other tokens'.
    massive = [r for r in rows if r["pos0"] >= MASSIVE_RATIO * r["stream"]]
    out["massive_from"] = massive[0]["layer"] if massive else None
    if massive:
        peak = max(massive, key=lambda r: r["pos0"])
        out.update(pos0_peak=peak["pos0"], pos0_peak_layer=peak["layer"], pos0_dim=peak["pos0_dim"],
                   pos0_share=peak["pos0_share"], pos0_ratio=peak["pos0"] / peak["stream"])
        # Sun et al. compare one activation with the median magnitude of all others.
        L = doc["layers"][peak["layer"]]["stream_in"]
        top_val = math.sqrt(L["top_share"][0]) * L["l2_tokens"][0]
        out["pos0_vs_typical"] = top_val / _typical_abs(doc, peak["layer"])
    return out


def _typical_abs(doc: dict, layer: int) -> float:
    """Typical |activation| of the tokens 1.. in the stream entering ``layer``: their RMS (L2/√d), median over tokens."""
    l2s = doc["layers"][layer]["stream_in"]["l2_tokens"][1:]
    return float(np.median(l2s)) / doc["sqrt_d"]
