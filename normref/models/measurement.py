"""The measurement: one forward pass with recording, summarised per layer, cached on disk.

The result is keyed by the SHA-256 of the weights file (hashed once per file
version, see :func:`normref.models.files.file_sha256`), the prompt, the source
of every module that computes it (the import closure of this module, found by
:mod:`normref.cache` from the code, function-level imports of the model code
included) and the versions of the libraries involved, so the zh and en builds
(two processes) share one result and a warm build loads no model at all. The
document it returns is what ``python -m normref activations --json`` writes
(schema in :mod:`normref.models.cli`).
"""

from __future__ import annotations

import math
from dataclasses import asdict

from .. import cache
from .checkpoint import check_prompt, load, spec
from .files import file_sha256

__all__ = ["SCHEMA", "measure", "layer_rows"]

SCHEMA = "normref.activations/1"

_LIBS = ("torch", "numpy", "gguf", "safetensors", "tokenizers")


def _lib_versions() -> str:
    return cache.versions_hash(_LIBS)


def measure(model: str, prompt: str) -> dict:
    """Per-layer statistics of ``model`` on ``prompt``, from the disk cache when possible.

    Raises ValueError for an unknown model, an empty prompt or a prompt longer
    than the model's context (the last one on a cache miss, which is the only
    time the prompt is tokenised; an over-long prompt is never cached).
    """
    s = spec(model)
    check_prompt(prompt)
    return _measure(s.id, prompt, file_sha256(s.weights_path), _lib_versions())


def _norm_entry(stats: dict, site: str, name: str, weight, bias) -> dict:
    from .record import gain_summary

    st = stats[site]
    return {
        "name": name, "site": site,
        "input": st["input"], "pre_gain": st["pre_gain"], "post_gain": st["post_gain"],
        "gain": gain_summary(weight), "bias": None if bias is None else gain_summary(bias),
    }


@cache.memo
def _measure(model: str, prompt: str, weights_sha256: str, libs: str) -> dict:
    m = load(model)
    ids = m.encode(prompt)
    if len(ids) < 2:
        raise ValueError(f"prompt must give at least 2 tokens (statistics exclude position 0); got {len(ids)}")
    out, stats = m.forward(ids, record=True)
    net, cfg = m.net, m.cfg

    gains = {}

    def norm(module, name):
        gains[module.site] = {"weight": module.weight.detach().tolist(),
                              "bias": None if module.bias is None else module.bias.detach().tolist()}
        return _norm_entry(stats, module.site, name, module.weight, module.bias)

    layers = []
    for i, blk in enumerate(net.blocks):
        layers.append({
            "layer": i,
            "stream_in": stats[blk.name]["stream_in"],
            "norms": [norm(blk.attn_norm, "attn_norm"), norm(blk.ffn_norm, "ffn_norm")],
        })
    if m.spec.family == "llama":
        embedding = {"norms": []}
        final = {"stream_in": stats["final_norm"]["stream_in"], "norms": [norm(net.final_norm, "final_norm")]}
        next_token = m.tokenizer.decode([int(out[-1].argmax())])
    else:
        embedding = {"norms": [norm(net.emb_norm, "emb_norm")]}
        final = {"stream_in": stats["final"]["stream_in"], "norms": []}
        next_token = None

    model_info = {
        "id": m.spec.id, "name": m.label, "weights": m.weights_label, "file": m.spec.weights.split("/")[-1],
        "sha256": weights_sha256, "family": m.spec.family, "norm": m.spec.norm, "placement": m.spec.placement,
        **asdict(cfg), "head_dim": cfg.head_dim, **{k: v for k, v in m.info.items() if k != "name"},
    }
    unk = m.tokenizer.token_to_id("[UNK]") if m.spec.family == "bert" else None
    return {
        "schema": SCHEMA,
        "model": model_info,
        "prompt": prompt,
        "tokens": m.tokens(ids),
        "token_ids": list(ids),
        "n_tokens": len(ids),
        "n_unk": sum(1 for i in ids if i == unk) if unk is not None else 0,
        "sqrt_d": math.sqrt(cfg.d),
        "embedding": embedding,
        "layers": layers,
        "final": final,
        "next_token": next_token,
        "gains": gains,
        "versions": libs,
    }


def layer_rows(doc: dict) -> list[dict]:
    """One flat row per layer: the numbers the tables and the figures use (the final stream is in ``doc["final"]``).

    Means exclude position 0. ``stream`` is the residual stream entering the
    layer; ``n1_*`` and ``n2_*`` are the two norms of the layer (input, before
    and after the gain); ``g1``/``g2`` the median gains; ``pos0`` the L2 of
    position 0 in the stream and ``pos0_share`` the share of its squared norm
    held by its largest dimension ``pos0_dim``.
    """
    rows = []
    for L in doc["layers"]:
        n1, n2 = L["norms"]
        s = L["stream_in"]
        rows.append({
            "layer": L["layer"], "stream": s["l2_excl0"], "stream_all": s["l2_all"],
            "n1_in": n1["input"]["l2_excl0"], "n1_pre": n1["pre_gain"]["l2_excl0"], "n1_post": n1["post_gain"]["l2_excl0"],
            "n2_in": n2["input"]["l2_excl0"], "n2_pre": n2["pre_gain"]["l2_excl0"], "n2_post": n2["post_gain"]["l2_excl0"],
            "g1": n1["gain"]["median"], "g2": n2["gain"]["median"],
            "pos0": s["l2_tokens"][0], "pos0_dim": s["top_dim"][0], "pos0_share": s["top_share"][0],
        })
    return rows
