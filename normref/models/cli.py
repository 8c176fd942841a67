"""``python -m normref activations``: per-layer norm statistics of a real model.

Example::

    python -m normref activations --model smollm2-135m \\
        --prompt "The capital of France is" --json smollm2.json

prints one row per layer and writes the whole measurement as JSON. The result
is cached on disk (``python -m normref cache --info`` says where), keyed by the
weights file's SHA-256, the prompt and the code, so a second run does no model
work.

JSON schema (``"schema": "normref.activations/1"``)
---------------------------------------------------

Every *activation* ``A`` is summarised per token over the hidden dimension::

    A = {"l2_excl0": float,     # mean L2 norm per token, positions 1.. (position 0 excluded)
         "l2_all": float,       # mean L2 norm per token, all positions
         "l2_tokens": [float],  # L2 norm of each token
         "top_dim": [int],      # per token: the dimension with the largest |value|
         "top_share": [float]}  # per token: that dimension's share of the squared norm

Every *norm* ``N`` records what goes in, the normalised vector before the
learned gain (RMSNorm: x/RMS(x); LayerNorm: (x−μ)/σ) and the output after it::

    N = {"name": "attn_norm" | "ffn_norm" | "final_norm" | "emb_norm",
         "site": "blk.3.attn_norm",            # key into "gains"
         "input": A, "pre_gain": A, "post_gain": A,
         "gain": {"min", "median", "max", "mean", "mean_abs"},
         "bias": {...same...} | null}          # LayerNorm's β; null for RMSNorm

The document::

    {"schema": "normref.activations/1",
     "model": {"id", "name", "weights", "file", "sha256", "family", "norm", "placement",
               "n_layer", "d", "d_ff", "n_head", "eps", "vocab_size", "context", "head_dim", ...},
     "prompt": str, "tokens": [str], "token_ids": [int], "n_tokens": int,
     "n_unk": int,                  # tokens the vocabulary does not know ([UNK]; MiniLM only)
     "sqrt_d": float,               # √d, the L2 of every pre-gain output
     "embedding": {"norms": [N]},   # MiniLM: the embedding LayerNorm; SmolLM2: none
     "layers": [{"layer": int,
                 "stream_in": A,    # the residual stream entering the layer
                 "norms": [N, N]}], # in forward order: attn_norm, ffn_norm
     "final": {"stream_in": A,      # the stream after the last layer
               "norms": [N]},       # SmolLM2: final_norm; MiniLM: none
     "next_token": str | null,      # SmolLM2's greedy next token
     "gains": {site: {"weight": [float] * d, "bias": [float] * d | null}},
     "versions": str}

A prompt must give at least 2 tokens (the means leave position 0 out) and at
most the model's context (8192 tokens for SmolLM2, 512 for MiniLM, [CLS] and
[SEP] included); anything else, an empty prompt or an unknown model exits with
status 2 and a one-line error.

In SmolLM2 (pre-norm) the attn_norm input *is* the stream entering the layer and
the ffn_norm input is the stream after the attention add. In MiniLM (Post-LN)
each norm's input is the sum x + sublayer(x), and its output is the stream.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from ..usage import UsageError
from . import MODELS

__all__ = ["add_arguments", "run", "format_table"]


def add_arguments(parser) -> None:
    parser.add_argument("--model", required=True, choices=sorted(MODELS), help="which model to run")
    parser.add_argument("--prompt", required=True, help="text to feed the model")
    parser.add_argument("--json", metavar="PATH", help="write the full measurement (schema in the module docstring) here")


def format_table(doc: dict) -> str:
    """A plain-text table: one row per layer, L2 per token averaged over positions 1.."""
    from .measurement import layer_rows

    m = doc["model"]
    head = (f"{m['name']} ({m['weights']}), {m['placement']} {m['norm']}, "
            f"{m['n_layer']} layers, d = {m['d']}, √d = {doc['sqrt_d']:.3f}\n"
            f"prompt: {doc['prompt']!r} ({doc['n_tokens']} tokens)\n"
            "mean L2 per token, position 0 excluded\n")
    cols = ("layer", "stream in", "norm1 in", "norm1 x̂", "norm1 out", "norm2 in", "norm2 x̂", "norm2 out",
            "g1 med", "g2 med", "pos0 L2")
    lines = ["  ".join(f"{c:>9}" for c in cols)]
    for r in layer_rows(doc):
        vals = (r["layer"], r["stream"], r["n1_in"], r["n1_pre"], r["n1_post"], r["n2_in"], r["n2_pre"],
                r["n2_post"], r["g1"], r["g2"], r["pos0"])
        lines.append("  ".join(f"{v:>9d}" if isinstance(v, int) else f"{v:>9.3f}" for v in vals))
    fin = doc["final"]
    tail = f"final stream: {fin['stream_in']['l2_excl0']:.3f}"
    for n in fin["norms"]:
        tail += f"; {n['name']}: x̂ {n['pre_gain']['l2_excl0']:.3f}, out {n['post_gain']['l2_excl0']:.3f}"
    if doc.get("next_token") is not None:
        tail += f"; greedy next token: {doc['next_token']!r}"
    return head + "\n".join(lines) + "\n" + tail


def run(args) -> int:
    from .measurement import measure

    t0 = time.perf_counter()
    try:
        doc = measure(args.model, args.prompt)
    except ValueError as e:  # an empty prompt, one token: said as every command says a mistake
        raise UsageError(str(e)) from None
    print(format_table(doc))
    print(f"({time.perf_counter() - t0:.1f} s)", file=sys.stderr)
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(doc, f, ensure_ascii=False, indent=1, allow_nan=False)
        print(f"wrote {args.json}", file=sys.stderr)
    return 0
