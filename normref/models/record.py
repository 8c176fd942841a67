"""Recording what the norms see: a norm layer that also reports its pre-gain output.

A model built from :class:`Norm` layers runs exactly as with plain
``normref.nn`` norms. When a :class:`Recorder` is passed to ``forward``, each
norm also writes three tensors into it: its input, its output *before* the
learned gain (the normalised vector x̂, whose L2 is √d for RMSNorm) and its
output *after* the gain (what the next sub-layer reads). The model adds the
residual stream itself. The recorder keeps only per-token summaries (L2 norm,
largest dimension and its share of the squared norm), never the activations.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch

from .. import nn as nrnn

__all__ = ["Recorder", "Norm", "summarize", "gain_summary"]


def summarize(x: torch.Tensor) -> dict:
    """Per-token statistics of a (tokens, d) activation, as plain Python numbers.

    ``l2_excl0`` is the mean L2 per token over positions 1.., ``l2_all`` over
    every position (position 0 often carries a massive activation that would
    dominate the mean, so the figures use ``l2_excl0``). ``top_dim`` and
    ``top_share`` give, per token, the dimension with the largest |value| and
    the fraction of the squared norm it holds.
    """
    if x.dim() != 2:
        raise ValueError(f"x must have shape (tokens, d), got {tuple(x.shape)}")
    # numpy, single-threaded: for a few dozen tokens this beats torch's threaded reductions.
    sq = np.square(x.detach().cpu().numpy().astype(np.float64))
    norm2 = sq.sum(-1)
    l2 = np.sqrt(norm2)
    top_dim = sq.argmax(-1)
    share = sq[np.arange(len(sq)), top_dim] / np.maximum(norm2, np.finfo(np.float64).tiny)
    return {
        "l2_excl0": float(l2[1:].mean()) if len(l2) > 1 else float("nan"),
        "l2_all": float(l2.mean()),
        "l2_tokens": [float(v) for v in l2],
        "top_dim": [int(v) for v in top_dim],
        "top_share": [float(v) for v in share],
    }


def gain_summary(g: torch.Tensor) -> dict:
    """min / median / max / mean / mean |g| of a gain (or bias) vector."""
    g = g.detach().cpu().numpy().astype(np.float64)
    return {
        "min": float(g.min()), "median": float(np.median(g)), "max": float(g.max()),
        "mean": float(g.mean()), "mean_abs": float(np.abs(g).mean()),
    }


@dataclass
class Recorder:
    """Collects summaries keyed by site, e.g. ``("blk.3.attn_norm", "pre_gain")``."""

    stats: dict = field(default_factory=dict)

    def add(self, site: str, what: str, x: torch.Tensor) -> None:
        if x.dim() == 3:  # (batch=1, tokens, d)
            if x.shape[0] != 1:
                raise ValueError(f"the recorder handles one sequence at a time, got batch {x.shape[0]}")
            x = x[0]
        self.stats.setdefault(site, {})[what] = summarize(x)


class Norm(torch.nn.Module):
    """A normref RMSNorm or LayerNorm that can report its input, x̂ and output.

    ``kind`` is "rmsnorm" or "layernorm". ``site`` names it in the recording.
    """

    def __init__(self, kind: str, dim: int, eps: float, site: str):
        super().__init__()
        if kind not in ("rmsnorm", "layernorm"):
            raise ValueError(f"kind must be 'rmsnorm' or 'layernorm', got {kind!r}")
        self.kind, self.site = kind, site
        self.norm = nrnn.RMSNorm(dim, eps) if kind == "rmsnorm" else nrnn.LayerNorm(dim, eps)

    @property
    def weight(self):
        return self.norm.weight

    @property
    def bias(self):
        return getattr(self.norm, "bias", None)

    def forward(self, x: torch.Tensor, rec: Recorder | None = None) -> torch.Tensor:
        y = self.norm(x)
        if rec is not None:
            # The same normalisation without γ (and β): the vector the gain is applied to.
            if self.kind == "rmsnorm":
                xhat = nrnn.rms_norm(x, None, self.norm.eps)
            else:
                xhat = nrnn.layer_norm(x, None, None, self.norm.eps)
            rec.add(self.site, "input", x)
            rec.add(self.site, "pre_gain", xhat)
            rec.add(self.site, "post_gain", y)
        return y
