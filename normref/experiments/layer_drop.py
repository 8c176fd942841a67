"""Layer importance on real weights: drop each of SmolLM2's blocks in turn and measure the loss.

Sun et al. 2025 ("The Curse of Depth", arXiv 2502.05795) report that in Pre-LN
LLMs "nearly half of the layers are less effective than expected", and blame
the stream's growth with depth: a deep block adds a small update to a large
stream. This module measures the part of that which one trained model can
show: for SmolLM2-135M-Instruct (Pre-RMSNorm, 30 blocks), the next-token
cross-entropy on a fixed text with block ℓ replaced by the identity
(x_{ℓ+1} = x_ℓ), for every ℓ, beside the stream's length entering each block
on the same text. What it cannot show is the paper's causal claim (that Pre-LN
*makes* deep blocks weak during training): that needs training with and
without the fix, which one set of released weights cannot give.

One forward pass, then each drop resumed from the stream entering the dropped block: the blocks run
465 times instead of the 900 of 31 whole passes, while the 31 LM heads and cross-entropies remain (0.75×
the CPU of whole passes in one run); the result is cached on
disk (key: the weights' SHA-256, this module's import closure, the library versions).
"""

from __future__ import annotations

import numpy as np

from .. import cache
from .smollm2_batch import TEXTS

__all__ = ["MODEL", "TEXT", "layer_drop", "summary", "cross_entropy", "drop_one", "streams", "ce_from"]

MODEL = "smollm2-135m"
# What this experiment needs done first (normref.experiments.declared): SmolLM2's weights, converted once.
EXPERIMENTS = ("normref.models.checkpoint:convert('smollm2-135m')",)
# A fixed English text, not the one the S-curve reads: sentences 7-14 of the batch experiment's
# (written for measurement, not from a corpus, so not in the model's training data as such).
TEXT = " ".join(TEXTS[6:14])


def cross_entropy(logits, ids) -> float:
    """Mean next-token cross-entropy (nats) of (T, V) logits on token ids (T,): position t predicts t+1."""
    import torch
    import torch.nn.functional as F

    logits = torch.as_tensor(logits)
    ids = torch.as_tensor(list(ids), dtype=torch.long)
    if logits.dim() != 2 or logits.shape[0] != ids.shape[0] or ids.shape[0] < 2:
        raise ValueError(f"logits must be (T, V) with T = len(ids) ≥ 2, got {tuple(logits.shape)} and {ids.shape[0]} ids")
    return float(F.cross_entropy(logits[:-1].double(), ids[1:]))


class _Skip:
    """Stands in for a block: returns the stream unchanged (x_{ℓ+1} = x_ℓ)."""

    def __call__(self, x, *args, **kwargs):
        return x


def drop_one(m, ids, layer: int | None) -> float:
    """Cross-entropy of the loaded model ``m`` on ``ids`` with block ``layer`` skipped (None: no block)."""
    blocks = m.net.blocks
    if layer is None:
        return cross_entropy(m.forward(ids)[0], ids)
    if isinstance(layer, bool) or not isinstance(layer, int) or not 0 <= layer < len(blocks):
        raise ValueError(f"layer must be a block index in [0, {len(blocks)}) or None, got {layer!r}")
    # The model is shared (load() caches it in the process): swap the block out of a plain list
    # the forward iterates, and always put it back.
    kept = list(blocks)
    try:
        # ModuleList refuses a non-Module; the forward only iterates, so a plain list serves for one call.
        object.__setattr__(m.net, "blocks", kept[:layer] + [_Skip()] + kept[layer + 1:])
        return cross_entropy(m.forward(ids)[0], ids)
    finally:
        del m.net.__dict__["blocks"]  # the ModuleList in m.net._modules is "blocks" again


def streams(net, ids):
    """The stream entering each block and the final norm (31 tensors of (1, T, d)), with RoPE's cos and sin."""
    import torch

    from ..models.llama import rope_angles

    cfg = net.cfg
    cos, sin = rope_angles(len(ids), cfg.head_dim, cfg.rope_base)
    x = net.tok_emb(torch.as_tensor([list(ids)], dtype=torch.long))
    xs = [x]
    for b in net.blocks:
        x = b(x, cos, sin)
        xs.append(x)
    return xs, cos, sin


def ce_from(net, x, start: int, cos, sin, ids, skip: int | None = None) -> float | None:
    """Cross-entropy with the forward resumed at block ``start`` from stream ``x`` (block ``skip`` left out);
    None when the stream overflows float32 on the way (a substitution can make it grow without bound)."""
    import torch

    try:
        for i in range(start, len(net.blocks)):
            if i != skip:
                x = net.blocks[i](x, cos, sin)
        logits = net.final_norm(x) @ net.tok_emb.weight.T
    except ValueError as e:  # a real RMSNorm downstream refuses a stream that overflowed float32
        if "NaN or inf" not in str(e):
            raise
        return None
    if not bool(torch.isfinite(logits).all()):
        return None
    return cross_entropy(logits[0], ids)


@cache.memo
def _layer_drop(weights_sha256: str, libs: str) -> dict:
    import torch

    from . import one_thread
    from ..models.checkpoint import load

    m = load(MODEL)
    ids = m.encode(TEXT)
    n = len(m.net.blocks)
    with one_thread(), torch.no_grad():
        # One forward keeps the stream entering each block; dropping block l then resumes from the stream
        # entering it, at block l + 1 (the blocks before l would compute the same tensors again): the same
        # operations on the same tensors as a whole forward with block l skipped (drop_one), with half the block work.
        xs, cos, sin = streams(m.net, ids)
        base = ce_from(m.net, xs[-1], n, cos, sin, ids)
        dropped = [ce_from(m.net, xs[i], i + 1, cos, sin, ids) for i in range(n)]
    if None in (base, *dropped):  # ce_from: the stream overflowed float32 on the way
        bad = "none dropped" if base is None else f"block {dropped.index(None)} dropped"
        raise ValueError(f"{MODEL} on layer_drop.TEXT: the stream overflowed float32 ({bad})")
    # the stream entering each block, mean L2 over tokens 1.. (position 0 aside)
    stream_l2 = [x[0, 1:].norm(dim=-1).mean().item() for x in xs[:-1]]
    return {
        "model": m.label, "weights": m.weights_label, "n_layer": len(dropped), "n_tokens": len(ids), "text": TEXT,
        "base": base, "dropped": dropped, "delta": [c - base for c in dropped], "stream_l2": stream_l2,
    }


def layer_drop() -> dict:
    """Cross-entropy of SmolLM2 on :data:`TEXT`, whole and with each block dropped in turn, and the stream's
    mean L2 entering each block (see the module docstring). From the disk cache when possible."""
    return _layer_drop(*_inputs())


def _inputs() -> tuple[str, str]:
    """What the measurement is keyed on besides its code: the weights file's SHA-256 and the versions that compute it."""
    from ..models.checkpoint import spec
    from ..models.files import file_sha256

    return file_sha256(spec(MODEL).weights_path), cache.versions_hash(("torch", "numpy", "gguf", "tokenizers"))


layer_drop.step_for = lambda: _layer_drop.step_for(*_inputs())  # its cache step, computing nothing (normref.results.committed)


def summary(d: dict | None = None) -> dict:
    """The headline numbers: the costliest drops, and how many blocks cost less than a tenth of the costliest."""
    d = layer_drop() if d is None else d
    delta = np.asarray(d["delta"])
    order = np.argsort(delta)[::-1]
    small = delta < 0.1 * delta.max()
    return {"base": d["base"], "max_delta": float(delta.max()), "max_layer": int(order[0]) + 1,
            "top3": [int(i) + 1 for i in order[:3]], "n_small": int(small.sum()),
            "small_in_second_half": int(small[len(delta) // 2:].sum()),
            "median_delta": float(np.median(delta))}
