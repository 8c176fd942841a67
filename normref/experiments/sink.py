"""The attention sink, measured: how much of SmolLM2-135M-Instruct's attention goes to position 0.

Xiao et al. 2023 ("Efficient Streaming Language Models with Attention Sinks",
arXiv 2309.17453) write that "the emergence of attention sink is due to the
strong attention scores towards initial tokens as a "sink" even if they are not
semantically important". The real-models page measures the other half of the
story in this model: position 0's stream carries a massive activation. This
module measures the attention side, on the texts of ``normfree.yml`` (each cut
to :data:`normfree.N_TOKENS <normref.experiments.normfree.N_TOKENS>` tokens,
the same 8 texts as the drop-norm measurement).

In every block ℓ and head h it computes the attention probabilities exactly as
:class:`normref.models.llama.Attention` does (the block's own q, k, v matrices
applied to the attention norm's output, RoPE by
:func:`~normref.models.llama.apply_rope`, each K/V head repeated for its query
heads, a causal softmax of q·k/√head_dim), and records, averaged over the query
positions t = 1 … T−1 (position 0 can only attend to itself):

* ``sink[ℓ][h]``: the probability given to key position 0;
* ``self[ℓ][h]``: the probability given to the query's own position, t;
* ``first[ℓ][h][k]``: the probability given to key position k, for k < :data:`N_FIRST` (a query before k
  gives it 0), so that ``sum(first[ℓ][h])`` is the share of the first N_FIRST tokens (StreamingLLM's code
  keeps 4 initial tokens by default, ``start_size=4``);
* ``uniform``: the mean of 1/(t+1), what position 0 would get if every query
  spread its attention evenly over the keys it can see (``first_uniform``: what
  the first N_FIRST positions would get together).

The forward PyTorch runs uses F.scaled_dot_product_attention, which never shows
its probabilities; :func:`attention_output` rebuilds the module's output from
ours and v, and ``recon_max_abs`` records the largest difference over every
block of every text (a test holds it to float32 tolerance).

About 10 s of CPU on one thread for the 8 texts, after the model is loaded
(9.4-9.9 s measured on a 2-core AMD EPYC under a load average of 7-8, 19-23 s
of wall time there), about what the layer-drop measurement costs: it is
computed at build time and cached on disk (key: the weights' SHA-256, this
module's import closure and ``normfree.yml``, the library versions).
"""

from __future__ import annotations

import math

import numpy as np

from .. import cache

__all__ = ["MODEL", "FROM_LAYER", "N_FIRST", "attention_probs", "attention_output", "measure_ids", "sink", "summary"]

# The texts are read from normfree.yml (through normfree.texts()): its bytes are part of the cache key.
__cache_files__ = ("normfree.yml",)

MODEL = "smollm2-135m"
# What this experiment needs done first (normref.experiments.declared): SmolLM2's weights, converted once.
EXPERIMENTS = ("normref.models.checkpoint:convert('smollm2-135m')",)
# The headline numbers average the blocks from this one on (numbered from 0, as the real-models page numbers
# layers). Blocks 0 and 1 are reported apart (summary()["early"]): measured, they give position 0 no more than
# uniform attention would, so averaging them in would mix two blocks without a sink into the figure.
FROM_LAYER = 2
N_FIRST = 4  # the initial tokens StreamingLLM keeps by default (start_size=4 in mit-han-lab/streaming-llm)


def attention_probs(attn, x, cos, sin):
    """Attention probabilities of a :class:`~normref.models.llama.Attention` ``attn`` on its input ``x``
    (B, T, d), computed the way its forward computes them: ``(p, v)``, p of shape (B, n_head, T, T) (query ×
    key, each row summing to 1 over the keys it may see) and v (B, n_head, T, head_dim), K/V heads repeated.

    Why not ask the module? Its forward calls F.scaled_dot_product_attention, which returns only p @ v; the
    lines below repeat that forward's up to the attention call, on the module's own weights and RoPE.
    """
    import torch

    from ..models.llama import apply_rope

    if not isinstance(x, torch.Tensor) or x.dim() != 3 or x.shape[-1] != attn.cfg.d:
        raise ValueError(f"x must be a (batch, tokens, {attn.cfg.d}) tensor, got "
                         f"{tuple(x.shape) if isinstance(x, torch.Tensor) else type(x).__name__}")
    B, T, _ = x.shape
    c, hd = attn.cfg, attn.cfg.head_dim
    q = attn.q(x).view(B, T, c.n_head, hd).transpose(1, 2)  # (B, heads, T, hd)
    k = attn.k(x).view(B, T, c.n_kv_head, hd).transpose(1, 2)
    v = attn.v(x).view(B, T, c.n_kv_head, hd).transpose(1, 2)
    q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
    rep = c.n_head // c.n_kv_head
    k, v = k.repeat_interleave(rep, dim=1), v.repeat_interleave(rep, dim=1)
    scores = (q @ k.transpose(-2, -1)) / math.sqrt(hd)  # SDPA's default scale, 1/sqrt(q.size(-1))
    future = torch.ones(T, T, dtype=torch.bool).triu(1)  # is_causal: query t sees keys 0..t
    return torch.softmax(scores.masked_fill(future, float("-inf")), dim=-1), v


def attention_output(attn, p, v):
    """The module's output rebuilt from probabilities ``p`` and values ``v`` (:func:`attention_probs`):
    ``o(concat_h(p_h @ v_h))``, what ``attn(x, cos, sin)`` returns."""
    B, H, T, hd = v.shape
    return attn.o((p @ v).transpose(1, 2).reshape(B, T, H * hd))


def measure_ids(m, ids) -> dict:
    """Per block and head, on token ids ``ids`` of the loaded model ``m``: the mean attention on key 0 and on
    the query's own key over queries 1..T-1, the uniform baseline, and the largest difference between the
    rebuilt and the module's attention output (see the module docstring)."""
    import torch

    from ..models.llama import rope_angles

    ids = list(ids)
    if len(ids) < 2:
        raise ValueError(f"ids must hold at least 2 tokens (queries 1..T-1 are averaged), got {len(ids)}")
    net = m.net
    T = len(ids)
    cos, sin = rope_angles(T, net.cfg.head_dim, net.cfg.rope_base)
    t = torch.arange(1, T)
    sink_, self_, first_, err = [], [], [], 0.0

    def observe(attn, args, out):  # a forward hook: the module's own input (the attention norm's output), output
        nonlocal err
        p, v = attention_probs(attn, *args)
        err = max(err, float((attention_output(attn, p, v) - out).abs().max()))
        p = p[0]  # (heads, T, T)
        sink_.append(p[:, 1:, 0].mean(-1).tolist())
        self_.append(p[:, t, t].mean(-1).tolist())
        first_.append(p[:, 1:, :N_FIRST].mean(1).tolist())

    hooks = [b.attn.register_forward_hook(observe) for b in net.blocks]
    try:
        with torch.no_grad():
            x = net.tok_emb(torch.as_tensor([ids], dtype=torch.long))
            for b in net.blocks:
                x = b(x, cos, sin)
    finally:
        for h in hooks:
            h.remove()
    seen = (t + 1).double()  # how many keys query t sees
    return {"sink": sink_, "self": self_, "first": first_, "uniform": float((1 / seen).mean()),
            "first_uniform": float((seen.clamp(max=N_FIRST) / seen).mean()), "recon_max_abs": err}


@cache.memo
def _sink(weights_sha256: str, libs: str) -> dict:
    from . import one_thread
    from .normfree import N_TOKENS, _tokens, texts
    from ..models.checkpoint import load

    m = load(MODEL)
    with one_thread():
        per_text = [{"id": t["id"], **measure_ids(m, _tokens(m, t["text"]))} for t in texts()["texts"]]
    return {"model": m.label, "weights": m.weights_label + ", dequantized to float32", "n_tokens": N_TOKENS,
            "n_layer": m.cfg.n_layer, "n_head": m.cfg.n_head, "n_kv_head": m.cfg.n_kv_head, "libs": libs,
            "texts": per_text}


def sink() -> dict:
    """The measurement on every text of normfree.yml (see the module docstring), from the disk cache when
    possible: ``{"model", "weights", "n_tokens", "n_layer", "n_head", "n_kv_head", "libs", "texts": [{"id",
    "sink", "self", "first", "uniform", "first_uniform", "recon_max_abs"}]}``."""
    return _sink(*_inputs())


def _inputs() -> tuple[str, str]:
    """What the measurement is keyed on besides its code: the weights file's SHA-256 and the versions that compute it."""
    from ..models.checkpoint import spec
    from ..models.files import file_sha256

    return file_sha256(spec(MODEL).weights_path), cache.versions_hash(("torch", "numpy", "gguf", "tokenizers"))


sink.step_for = lambda: _sink.step_for(*_inputs())  # its cache step, computing nothing (normref.results.committed)


def summary(d: dict | None = None, from_layer: int = FROM_LAYER) -> dict:
    """The headline numbers, over the blocks ``from_layer``.. and all their heads unless said:

    * ``mean``: attention on position 0, mean over texts; ``text_min``, ``text_max``: the lowest and highest
      text's mean;
    * ``self``: attention on the query's own position; ``uniform``: the uniform baseline;
    * ``early``: attention on position 0 in the blocks before ``from_layer``;
    * ``first``: attention on the first :data:`N_FIRST` positions together; ``first_text_min``: the lowest
      text's; ``first_uniform``: their uniform baseline;
    * ``per_layer``: each block's mean over heads and texts (every block); ``max_layer``, ``max_layer_mean``:
      the block with the most; ``runner_up_layer``, ``runner_up_mean``: the next;
    * ``heads_over_half`` of ``n_heads``: heads of the counted blocks whose mean over texts exceeds 1/2;
      ``min_head``: the lowest head's mean;
    * ``recon_max_abs``: the largest difference between the rebuilt and the module's attention output.
    """
    d = sink() if d is None else d
    S = np.array([t["sink"] for t in d["texts"]])  # (texts, layers, heads)
    A = np.array([t["self"] for t in d["texts"]])
    F = np.array([t["first"] for t in d["texts"]]).sum(-1)  # (texts, layers, heads): on positions 0..N_FIRST-1
    L = S.shape[1]
    if isinstance(from_layer, bool) or not isinstance(from_layer, int) or not 0 < from_layer < L:
        raise ValueError(f"from_layer must be an int in [1, {L}), got {from_layer!r}")
    per_text = S[:, from_layer:].mean(axis=(1, 2))
    first_text = F[:, from_layer:].mean(axis=(1, 2))
    heads = S[:, from_layer:].mean(axis=0)  # (layers, heads), mean over texts
    per_layer = S.mean(axis=(0, 2))
    top, second = (int(i) for i in np.argsort(per_layer)[::-1][:2])
    return {
        "n_texts": S.shape[0], "n_tokens": d["n_tokens"], "n_layer": L, "n_head": S.shape[2], "from_layer": from_layer,
        "mean": float(per_text.mean()), "text_min": float(per_text.min()), "text_max": float(per_text.max()),
        "self": float(A[:, from_layer:].mean()), "uniform": float(np.mean([t["uniform"] for t in d["texts"]])),
        "early": float(S[:, :from_layer].mean()),
        "n_first": N_FIRST, "first": float(first_text.mean()), "first_text_min": float(first_text.min()),
        "first_uniform": float(np.mean([t["first_uniform"] for t in d["texts"]])),
        "per_layer": per_layer.tolist(), "max_layer": top, "max_layer_mean": float(per_layer[top]),
        "runner_up_layer": second, "runner_up_mean": float(per_layer[second]),
        "heads_over_half": int((heads > 0.5).sum()), "n_heads": int(heads.size), "min_head": float(heads.min()),
        "recon_max_abs": max(t["recon_max_abs"] for t in d["texts"]),
    }
