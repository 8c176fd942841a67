"""LatentMoE, with the optional RMSNorm that Kimi K3 puts before the up-projection (eq. 11).

    u = Σ_{i∈top-k} p_i · E_i(W↓ x)              (routed experts work at latent width ℓ)
    y = Σ_j E_shared_j(x) + W↑ · RMSNorm(u)       (normalize_latent=True, K3 §2.3.1)
    y = Σ_j E_shared_j(x) + W↑ · u                (normalize_latent=False, original LatentMoE)

Routing weights: the router scores every expert on the full-width x; the top-k
logits are kept and the softmax is taken over those k only (at temperature τ).
That is the same as a softmax over all experts renormalized over the chosen
ones, so the weights of a token always sum to 1 and u is a weighted average of
k expert outputs. We chose it because then the only thing that moves ‖u‖ is
*which* experts are chosen and *how unevenly* they are weighted, the two causes
§2.3.1 names; a softmax over all experts without renormalizing would add a
third (the kept mass Σp varies per token). The report's Eq. (11) names p_i but
not the router's exact function, so this is our choice, not K3's.

Experts are GLU FFNs (SwiGLU). The dispatch loops over experts, as HF's Mixtral
does: slow for big models, but every line is visible.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass, fields

import torch
import torch.nn as nn
import torch.nn.functional as F

from .nn import RMSNorm

__all__ = ["LatentMoEConfig", "LatentMoE", "MoEAux", "GLU"]


@dataclass
class LatentMoEConfig:
    d_model: int = 64  # full width d (K3: 7168)
    d_latent: int = 32  # latent width ℓ < d (K3: 3584, 0.5×)
    n_experts: int = 32  # routed experts N (K3: 896)
    top_k: int = 4  # experts per token k (K3: 16)
    d_expert: int = 32  # hidden width of each routed GLU expert
    n_shared: int = 1  # shared experts at full width (K3: 2)
    d_shared: int = 64  # hidden width of each shared GLU expert
    normalize_latent: bool = True  # K3's RMSNorm between aggregation and W↑
    temperature: float = 1.0  # τ in p = softmax(top-k logits / τ)
    eps: float = 1e-6

    def __post_init__(self):
        for f in fields(self):
            v = getattr(self, f.name)
            if f.name in ("normalize_latent",):
                if not isinstance(v, bool):
                    raise TypeError(f"{f.name} must be a bool, got {type(v).__name__}")
            elif f.name in ("temperature", "eps"):
                if isinstance(v, bool) or not isinstance(v, numbers.Real) or not v > 0:
                    raise ValueError(f"{f.name} must be a number > 0, got {v!r}")
            elif isinstance(v, bool) or not isinstance(v, numbers.Integral):
                raise TypeError(f"{f.name} must be an integer, got {type(v).__name__}")
            elif v < (0 if f.name == "n_shared" else 1):
                raise ValueError(f"{f.name} must be {'>= 0' if f.name == 'n_shared' else '> 0'}, got {v}")
        if self.top_k > self.n_experts:
            raise ValueError(f"top_k must be <= n_experts ({self.n_experts}), got {self.top_k}")


class GLU(nn.Module):
    """SwiGLU feed-forward: W2 (silu(W1 z) ⊙ W3 z)."""

    def __init__(self, d: int, hidden: int):
        super().__init__()
        self.w1, self.w3 = nn.Linear(d, hidden, bias=False), nn.Linear(d, hidden, bias=False)
        self.w2 = nn.Linear(hidden, d, bias=False)

    def forward(self, z):
        return self.w2(F.silu(self.w1(z)) * self.w3(z))


@dataclass
class MoEAux:
    """What happened inside one forward, for experiments (per token, flattened)."""

    u: torch.Tensor  # (T, ℓ) the aggregated routed output, before any norm
    u_in: torch.Tensor  # (T, ℓ) what W↑ is applied to: RMSNorm(u) (gain included) or u itself
    weights: torch.Tensor  # (T, k) routing weights p_i, each row sums to 1
    indices: torch.Tensor  # (T, k) chosen experts
    routed: torch.Tensor  # (T, d) the routed branch W↑ · u_in
    shared: torch.Tensor  # (T, d) the shared branch Σ_j E_shared_j(x)


class LatentMoE(nn.Module):
    def __init__(self, cfg: LatentMoEConfig):
        super().__init__()
        if not isinstance(cfg, LatentMoEConfig):
            raise TypeError(f"cfg must be a LatentMoEConfig, got {type(cfg).__name__}")
        self.cfg = cfg
        self.router = nn.Linear(cfg.d_model, cfg.n_experts, bias=False)  # sees the full-width x
        self.down = nn.Linear(cfg.d_model, cfg.d_latent, bias=False)  # W↓
        self.experts = nn.ModuleList(GLU(cfg.d_latent, cfg.d_expert) for _ in range(cfg.n_experts))
        self.norm = RMSNorm(cfg.d_latent, eps=cfg.eps) if cfg.normalize_latent else nn.Identity()
        self.up = nn.Linear(cfg.d_latent, cfg.d_model, bias=False)  # W↑
        self.shared = nn.ModuleList(GLU(cfg.d_model, cfg.d_shared) for _ in range(cfg.n_shared))

    def forward(self, x: torch.Tensor, return_aux: bool = False):
        c = self.cfg
        if not isinstance(x, torch.Tensor) or not x.is_floating_point():
            raise TypeError(f"x must be a floating-point torch.Tensor, got {getattr(x, 'dtype', type(x).__name__)}")
        if x.dim() == 0 or x.shape[-1] != c.d_model:
            raise ValueError(f"x must have last dimension d_model={c.d_model}, got shape {tuple(x.shape)}")
        xf = x.reshape(-1, c.d_model)  # (T, d): routing is per token
        logits, indices = self.router(xf).topk(c.top_k, dim=-1)  # (T, k)
        weights = F.softmax(logits / c.temperature, dim=-1)  # over the k chosen experts only
        z = self.down(xf)  # (T, ℓ)
        u = torch.zeros_like(z)
        for e, expert in enumerate(self.experts):
            tok, slot = torch.where(indices == e)  # tokens that chose expert e
            if tok.numel():  # unchosen experts do no work and get no gradient
                u = u.index_add(0, tok, weights[tok, slot, None] * expert(z[tok]))
        u_in = self.norm(u)  # K3: fix the scale of u before W↑ brings it back to width d
        routed = self.up(u_in)
        shared = sum((s(xf) for s in self.shared), torch.zeros_like(xf))
        y = (shared + routed).reshape(x.shape)
        if return_aux:
            return y, MoEAux(u, u_in, weights, indices, routed, shared)
        return y
