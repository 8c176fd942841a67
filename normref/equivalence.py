"""Pre-LN ≡ Pre-RMSNorm: convert a Pre-LN model into a Pre-RMSNorm one that computes the same function.

Jiang, Gu, Zhu, Pan (NeurIPS 2023, arXiv 2305.14858); their ``example.py`` does
the same on a random ViT. The argument, in three lines:

1. LayerNorm ignores the mean of its input: LN(x) = LN(x − mean(x)·1). In Pre-LN
   the residual stream is read only through norms (each branch's LN, the final
   LN), so the stream's mean never reaches the output.
2. So remove it where it enters: everything that writes to the stream (the
   token and position embeddings, every branch's output projection) is made to
   write zero-mean vectors, by subtracting from each written vector its mean
   over the d features. The stream is then zero-mean at every layer, and the
   output is unchanged (by 1.).
3. On a zero-mean x, var(x) = mean(x²), so LN(x) = RMSNorm(x) with the same ε.
   LN's gain γ and bias β are folded into the linear map that reads the norm:
   W(γ ⊙ n + β) + b = (W diag γ) n + (W β + b).

Everything is numpy, in float64, on a state dict with the names of
:class:`normref.blocks.TinyTransformer` (placement "pre"): ``from_torch`` reads one,
``forward`` runs it, ``to_pre_rmsnorm`` converts it. The check is then one line:
``abs(forward(sd, idx) - forward(to_pre_rmsnorm(sd), idx, norm="rmsnorm")).max()``.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from .norms import check_eps, layer_norm, rms_norm

__all__ = ["from_torch", "forward", "stream", "to_pre_rmsnorm", "n_layers"]

_BRANCHES = (("ln_1", "attn.qkv", "attn.proj"), ("ln_2", "mlp.fc", "mlp.proj"))  # (norm, reads it, writes the stream)


def n_layers(sd: dict) -> int:
    """How many blocks the state dict holds (``blocks.0`` … ``blocks.{L-1}``)."""
    if not isinstance(sd, dict):
        raise TypeError(f"sd must be a dict of arrays (a state dict), got {type(sd).__name__}")
    L = 0
    while f"blocks.{L}.attn.qkv.weight" in sd:
        L += 1
    for key in ("wte.weight", "wpe.weight", "head.weight"):
        if key not in sd:
            raise ValueError(f"sd is missing {key!r}: not a TinyTransformer state dict")
    if L == 0:
        raise ValueError("sd has no blocks (no 'blocks.0.attn.qkv.weight')")
    return L


def from_torch(model) -> dict:
    """A Pre-LN TinyTransformer's weights as a float64 numpy state dict.

    LayerNorm Scaling (``ln_scaling``) is a fixed factor 1/√ℓ on a norm's output,
    so it is folded into that norm's γ and β here: the same function, as plain Pre-LN.
    """
    from .blocks import ScaledPreLNBlock, TinyTransformer  # torch only for this reader

    if not isinstance(model, TinyTransformer):
        raise TypeError(f"model must be a normref.blocks.TinyTransformer, got {type(model).__name__}")
    cfg = model.cfg
    if cfg.placement != "pre" or cfg.norm != "layernorm":
        raise ValueError("model must be Pre-LN with LayerNorm (cfg.placement='pre', cfg.norm='layernorm'), "
                         f"got placement={cfg.placement!r}, norm={cfg.norm!r}")
    if cfg.qk_norm:
        raise ValueError("model must have cfg.qk_norm=False: the numpy forward has no QK-norm")
    sd = {k: v.detach().cpu().double().numpy().copy() for k, v in model.state_dict().items()}
    for i, b in enumerate(model.blocks):
        if isinstance(b, ScaledPreLNBlock):
            for ln in ("ln_1", "ln_2"):
                for leaf in ("weight", "bias"):
                    sd[f"blocks.{i}.{ln}.{leaf}"] = sd[f"blocks.{i}.{ln}.{leaf}"] * b.scale
    sd["n_head"], sd["eps"] = cfg.n_head, cfg.eps  # what the forward needs besides arrays
    return sd


def _linear(sd, name, x):
    y = x @ sd[f"{name}.weight"].T
    b = sd.get(f"{name}.bias")
    return y if b is None else y + b


def _norm(sd, name, x, norm, eps):
    g, b = sd.get(f"{name}.weight"), sd.get(f"{name}.bias")
    if norm == "layernorm":
        return layer_norm(x, g, b, eps)
    if b is not None:
        raise ValueError(f"sd has {name}.bias, but an RMSNorm has no bias: fold it first (to_pre_rmsnorm)")
    return rms_norm(x, g, eps)


def _attention(sd, name, x, n_head):
    """Causal multi-head self-attention, as :class:`normref.blocks.Attention` (no QK-norm)."""
    T, C = x.shape[-2:]
    q, k, v = np.split(_linear(sd, f"{name}.qkv", x), 3, axis=-1)
    hd = C // n_head
    q, k, v = (t.reshape(*t.shape[:-1], n_head, hd).swapaxes(-3, -2) for t in (q, k, v))  # (..., heads, T, hd)
    s = q @ k.swapaxes(-2, -1) / math.sqrt(hd)
    s = np.where(np.triu(np.ones((T, T), dtype=bool), 1), -np.inf, s)  # a token sees itself and the past
    p = np.exp(s - s.max(-1, keepdims=True))
    y = (p / p.sum(-1, keepdims=True)) @ v
    return _linear(sd, f"{name}.proj", y.swapaxes(-3, -2).reshape(*x.shape[:-1], C))


def _check(sd, idx, norm):
    L = n_layers(sd)
    if norm not in ("layernorm", "rmsnorm"):
        raise ValueError(f"norm must be 'layernorm' or 'rmsnorm', got {norm!r}")
    idx = np.asarray(idx)
    if not np.issubdtype(idx.dtype, np.integer) or idx.ndim != 2:
        raise TypeError(f"idx must be a 2-d integer array (batch, time) of token ids, got dtype {idx.dtype}, "
                        f"shape {idx.shape}")
    V, Tmax = sd["wte.weight"].shape[0], sd["wpe.weight"].shape[0]
    if not 0 < idx.shape[1] <= Tmax:
        raise ValueError(f"idx has {idx.shape[1]} positions; this model takes 1..{Tmax}")
    if idx.size and (idx.min() < 0 or idx.max() >= V):
        raise ValueError(f"idx must hold token ids in [0, {V})")
    n_head = sd.get("n_head")
    if isinstance(n_head, bool) or not isinstance(n_head, numbers.Integral) or n_head <= 0:
        raise ValueError(f"sd['n_head'] must be a positive integer, got {n_head!r}")
    return L, idx, int(n_head), check_eps(sd.get("eps", 1e-5))


def stream(sd: dict, idx, norm: str = "layernorm") -> list[np.ndarray]:
    """The residual stream [x_0, x_1, …, x_L] of a Pre-LN (or Pre-RMSNorm) model on token ids ``idx``."""
    L, idx, n_head, eps = _check(sd, idx, norm)
    x = sd["wte.weight"][idx] + sd["wpe.weight"][: idx.shape[1]]
    xs = [x]
    for i in range(L):
        p = f"blocks.{i}"
        x = x + _attention(sd, f"{p}.attn", _norm(sd, f"{p}.ln_1", x, norm, eps), n_head)
        h = _norm(sd, f"{p}.ln_2", x, norm, eps)
        x = x + _linear(sd, f"{p}.mlp.proj", np.maximum(_linear(sd, f"{p}.mlp.fc", h), 0.0))  # ReLU MLP
        xs.append(x)
    return xs


def forward(sd: dict, idx, norm: str = "layernorm") -> np.ndarray:
    """Logits (batch, time, vocab): the stream, the final norm, the head."""
    x = stream(sd, idx, norm)[-1]
    return _linear(sd, "head", _norm(sd, "ln_f", x, norm, check_eps(sd.get("eps", 1e-5))))


def _fold(sd, out, norm, reader):
    """Fold norm's γ, β into the linear map that reads it: W' = W·diag(γ), b' = b + W·β."""
    g, b = out.pop(f"{norm}.weight", None), out.pop(f"{norm}.bias", None)
    W = sd[f"{reader}.weight"]
    bias = sd.get(f"{reader}.bias", np.zeros(W.shape[0]))
    out[f"{reader}.weight"] = W if g is None else W * g
    out[f"{reader}.bias"] = bias if b is None else bias + W @ b


def _center_rows(a):
    """Each d-vector that a row of ``a`` writes, minus its mean over the d features (the last axis)."""
    return a - a.mean(axis=-1, keepdims=True)


def to_pre_rmsnorm(sd: dict) -> dict:
    """The equivalent Pre-RMSNorm model: zero-mean writes to the stream, RMSNorms without gain or bias.

    Run it with ``forward(result, idx, norm="rmsnorm")``. The input is not modified.
    """
    L = n_layers(sd)
    out = dict(sd)
    # Fold every norm's gain and bias into the linear map that reads it (the head reads ln_f).
    for i in range(L):
        for ln, reader, _ in _BRANCHES:
            _fold(sd, out, f"blocks.{i}.{ln}", f"blocks.{i}.{reader}")
    _fold(sd, out, "ln_f", "head")
    # Recenter what writes to the stream. A (d_out, d_in) weight writes W·h: centre each column over
    # the d_out features (the mean over axis 0), and the bias likewise.
    out["wte.weight"], out["wpe.weight"] = _center_rows(sd["wte.weight"]), _center_rows(sd["wpe.weight"])
    for i in range(L):
        for _, _, writer in _BRANCHES:
            W = sd[f"blocks.{i}.{writer}.weight"]
            out[f"blocks.{i}.{writer}.weight"] = W - W.mean(axis=0, keepdims=True)
            b = sd.get(f"blocks.{i}.{writer}.bias")
            if b is not None:
                out[f"blocks.{i}.{writer}.bias"] = b - b.mean()
    return out
