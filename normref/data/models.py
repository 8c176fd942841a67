"""Widget data of the real-model page: every layer of both models on both prompts.

``layer_explorer`` is what a layer-explorer widget needs to redraw the
"L2 per token across layers" chart and the per-layer detail for any model,
prompt and layer without running a model in the browser. It is the
measurement of :func:`normref.models.measure` (schema in
:mod:`normref.models.cli`), slimmed for the page: per-token values only for the
residual stream (L2 and the largest dimension's share of norm²), means for the
norms' input, pre-gain and post-gain outputs, gain summaries instead of the full
gain vectors, and 4 significant digits.
"""

from __future__ import annotations

from . import dataset
from ..experiments.models import MODEL_IDS, PROMPTS, run


# The cached experiments this module reads (normref.experiments.declared): a build runs each once, first.
EXPERIMENTS = (
    "normref.experiments.models:run('smollm2-135m', 'en')",
    "normref.experiments.models:run('smollm2-135m', 'zh')",
    "normref.experiments.models:run('minilm-l6', 'en')",
    "normref.experiments.models:run('minilm-l6', 'zh')",
)


def _round(obj):
    if isinstance(obj, float):
        return float(f"{obj:.4g}")
    if isinstance(obj, dict):
        return {k: _round(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_round(v) for v in obj]
    return obj


def _means(a: dict) -> dict:
    return {"l2_excl0": a["l2_excl0"], "l2_all": a["l2_all"]}


def _stream(a: dict) -> dict:
    # Per token only for the stream: enough to show position 0 against the rest.
    return {**_means(a), "l2_tokens": a["l2_tokens"], "top_share": a["top_share"], "pos0_top_dim": a["top_dim"][0]}


def _norm(n: dict) -> dict:
    return {"name": n["name"], "input": _means(n["input"]), "pre_gain": _means(n["pre_gain"]),
            "post_gain": _means(n["post_gain"]), "gain": n["gain"], "bias": n["bias"]}


def _run(model: str, prompt_lang: str) -> dict:
    doc = run(model, prompt_lang)
    return _round({
        "prompt": doc["prompt"], "tokens": doc["tokens"], "n_tokens": doc["n_tokens"], "n_unk": doc["n_unk"],
        "next_token": doc["next_token"],
        "embedding": {"norms": [_norm(n) for n in doc["embedding"]["norms"]]},
        "layers": [{"layer": L["layer"], "stream_in": _stream(L["stream_in"]), "norms": [_norm(n) for n in L["norms"]]}
                   for L in doc["layers"]],
        "final": {"stream_in": _stream(doc["final"]["stream_in"]), "norms": [_norm(n) for n in doc["final"]["norms"]]},
    })


@dataset("layer_explorer")
def layer_explorer(lang):
    """{"schema", "prompts", "models": {id: {"model": {...}, "sqrt_d", "runs": {prompt_lang: run}}}}.

    ``lang`` only picks the order of the prompts (the page's own language
    first); the numbers are the same for both pages.
    """
    order = (lang, *(p for p in PROMPTS if p != lang))
    models = {}
    for m in MODEL_IDS:
        doc = run(m, "en")
        info = {k: v for k, v in doc["model"].items() if k != "sha256"}
        models[m] = {
            "model": info,
            "sqrt_d": doc["sqrt_d"],
            "runs": {pl: _run(m, pl) for pl in order},
        }
    return {"schema": "normref.layer_explorer/1", "stat": "mean L2 per token; l2_excl0 leaves out position 0",
            "prompt_order": list(order), "prompts": dict(PROMPTS), "models": models}
