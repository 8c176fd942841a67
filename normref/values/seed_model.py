"""The Chinese lesson's model (Qwen3.5-0.8B) next to the model this site measures (SmolLM2-135M).

The Chinese lesson this site grew from works with Qwen3.5-0.8B. Its hidden size
and layer count are known only from third-party sites ([U] in REFERENCES.md),
so they are labelled unverified wherever they appear; the rest of Qwen3.5's
column is read from Hugging Face's ``modeling_qwen3_5.py`` ([V]). SmolLM2's
column is read from its GGUF file by :mod:`normref.models`.
"""

from __future__ import annotations

import math

from . import Column, Table, fmt, register, register_tables
from ..labels import labels

# The cached experiments this module reads (normref.experiments.declared): a build runs each once, first.
EXPERIMENTS = (
    "normref.experiments.models:run('smollm2-135m', 'en')",
)


t = labels(__name__)  # the Chinese is in normref/labels.yml

# [U]: third-party sources only (REFERENCES.md, "The seed's model").
QWEN35_08B = {"d": 1024, "n_layer": 24}


def _smol():
    from ..experiments.models import run

    return run("smollm2-135m", "en")["model"]


register({
    "seed_model.qwen_sqrt_d": lambda: fmt(math.sqrt(QWEN35_08B["d"]), 0),
    "seed_model.qwen_n_layer": lambda: str(QWEN35_08B["n_layer"]),
    # √d of SmolLM2 over √d of Qwen3.5-0.8B: how lengths before the gain compare
    "seed_model.length_ratio": lambda: fmt(math.sqrt(_smol()["d"] / QWEN35_08B["d"]), 2),
})


def _comparison(lang: str) -> Table:
    """The two models side by side, one configuration fact a row (Qwen3.5's hidden size and depth unverified)."""
    m = _smol()
    d, n_layer = QWEN35_08B["d"], QWEN35_08B["n_layer"]
    head = ("", t(lang, "Qwen3.5-0.8B (the Chinese lesson's model)"), t(lang, "SmolLM2-135M-Instruct (measured here)"))
    rows = [
        (t(lang, "hidden size $d$"), t(lang, "{{n}} (unverified)", n=d), t(lang, "{{n}} (GGUF metadata)", n=m["d"])),
        (t(lang, "RMSNorm output length before the gain, $\\sqrt{d}$"),
         t(lang, "{{n}} (from the unverified $d$)", n=fmt(math.sqrt(d), 0)), fmt(math.sqrt(m["d"]), 0)),
        (t(lang, "layers"), t(lang, "{{n}} (unverified)", n=n_layer), t(lang, "{{n}} (GGUF metadata)", n=m["n_layer"])),
        (t(lang, "norm placement"), t(lang, "Pre-RMSNorm (HF `modeling_qwen3_5.py`)"),
         t(lang, "Pre-RMSNorm (Llama architecture)")),
        (t(lang, "how the gain is applied"), t(lang, "zero-centered RMSNorm: $\\hat{x}\\cdot(1 + w)$"), "$\\hat{x}\\cdot g$"),
        ("QK-norm", t(lang, "per head, on the full-attention layers only"), t(lang, "none (no q/k norm tensor in the GGUF)")),
        (t(lang, "attention layers"), t(lang, "by default every 4th layer is full attention, the rest Gated DeltaNet"),
         t(lang, "all full attention ({{heads}} query heads, {{kv}} key/value heads)", heads=m["n_head"], kv=m["n_kv_head"])),
    ]
    return Table(tuple(Column(label, "left") for label in head), tuple(rows))


register_tables({"seed_model.comparison": _comparison})
