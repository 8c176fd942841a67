"""Evidence for the K3 §2.3.1 page: how much ‖u‖ moves, and what the norm does to a toy training run.

1. ``u_spread``: the scale of the aggregated routed output u varies from token to
   token with which experts are chosen and how unevenly they are weighted. We
   measure ‖u‖ over many tokens while sweeping top-k, the routing temperature τ,
   the expert count N and how much the experts' output sizes differ, at a
   K3-like sparsity scaled down (K3 routes 16 of 896; our base routes 4 of 224,
   the same 1:56). u does not depend on the norm (the norm comes after it), so
   one forward gives both sides: W↑·u (original LatentMoE) and W↑·RMSNorm(u) (K3).
2. ``toy_training``: a small regression task learnt by a two-block residual
   stack of LatentMoE layers, with and without the norm, same seeds and data.

Everything is synthetic and seeded; the inputs x are RMS-normalized (as a
Pre-RMSNorm block would hand them to the MoE), so ‖x‖ is the same for every
token and the spread of ‖u‖ comes from inside the MoE (routing, the experts,
and ‖W↓x‖, which varies with the direction of x), not from the input's size.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import torch
import torch.nn as nn

from ..cache import memo
from . import one_thread
from ..moe import LatentMoE, LatentMoEConfig
from ..nn import RMSNorm, rms_norm

__all__ = ["BASE", "SWEEPS", "cv", "u_spread", "toy_training", "TOY"]

# K3 (Table 1): d 7168, ℓ 3584 (0.5×), 896 experts, 16 active, 2 shared. Scaled down,
# keeping ℓ = d/2, two shared experts and the 1:56 sparsity.
BASE = dict(d_model=64, d_latent=32, n_experts=224, top_k=4, d_expert=32, n_shared=2, d_shared=64,
            temperature=0.2)
BASE_SPREAD = 0.5  # σ of the synthetic log-normal expert output scales (see _scale_experts)

# One factor at a time around BASE.
SWEEPS = {
    "top_k": (1, 2, 4, 8, 16),
    "temperature": (3.0, 1.0, 0.5, 0.2, 0.05),
    "n_experts": (4, 16, 56, 224, 896),
    "expert_spread": (0.0, 0.25, 0.5, 1.0),
}




def cv(a) -> float:
    """Coefficient of variation: std / mean (population std)."""
    a = np.asarray(a, dtype=np.float64)
    return float(a.std() / a.mean())


def _scale_experts(m: LatentMoE, sigma: float, gen: torch.Generator) -> None:
    """Multiply each routed expert's output by exp(σ·z), z ~ N(0, 1).

    A freshly initialized MoE has statistically identical experts; trained
    experts are not (their output sizes differ). This synthetic spread stands
    in for that, so that *which* experts a token picks can matter.
    """
    with torch.no_grad():
        for ex in m.experts:
            ex.w2.weight.mul_(math.exp(sigma * float(torch.randn((), generator=gen))))


def _one(cfg: LatentMoEConfig, sigma: float, n_tokens: int, seed: int) -> dict:
    gen = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    m = LatentMoE(cfg)
    _scale_experts(m, sigma, gen)
    x = rms_norm(torch.randn(n_tokens, cfg.d_model, generator=gen))  # ‖x‖ = √d for every token
    with torch.no_grad():
        logits = m.router(x)
        _, aux = m(x, return_aux=True)
        routed_raw = m.up(aux.u)  # original LatentMoE: W↑ · u
        routed_norm = m.up(rms_norm(aux.u, eps=cfg.eps))  # K3: W↑ · RMSNorm(u), gain 1 (its init)
    u = aux.u.norm(dim=-1).numpy().astype(np.float64)
    z = m.down(x).norm(dim=-1).detach().numpy().astype(np.float64)  # ‖W↓x‖, shared by every chosen expert
    r_raw, r_norm = routed_raw.norm(dim=-1).numpy(), routed_norm.norm(dim=-1).numpy()
    sh = aux.shared.norm(dim=-1).numpy()
    return {
        "u_norm": u,  # ‖u‖ per token (what W↑ sees without the norm)
        "cv_u": cv(u),
        "cv_u_normed": cv(rms_norm(aux.u, eps=cfg.eps).norm(dim=-1).numpy()),  # ‖RMSNorm(u)‖ = √ℓ
        "cv_routed_raw": cv(r_raw),
        "cv_routed_norm": cv(r_norm),
        "cv_shared": cv(sh),
        "cv_z": cv(z),
        # A GLU is degree 2 in its input (silu(a)·b ~ a·b), so each expert's output grows like ‖z‖²;
        # what is left once that common factor is divided out is due to the experts and weights.
        "cv_u_over_z2": cv(u / z**2),
        "ratio_raw": float(np.median(r_raw / sh)),  # routed/shared branch size, per token, median
        "ratio_norm": float(np.median(r_norm / sh)),
        "cv_ratio_raw": cv(r_raw / sh),
        "cv_ratio_norm": cv(r_norm / sh),
        "max_over_min_u": float(np.quantile(u, 0.99) / np.quantile(u, 0.01)),
        "logit_std": float(logits.std()),
        "weight_max_mean": float(aux.weights.max(-1).values.mean()),  # how peaked the routing is
    }


@memo
def u_spread(n_tokens: int = 2048, seed: int = 0) -> dict:
    """{sweep: {"values": [...], "runs": [result of _one, ...]}} plus the base config."""
    if isinstance(n_tokens, bool) or not isinstance(n_tokens, int) or n_tokens < 2:
        raise ValueError(f"n_tokens must be an integer >= 2, got {n_tokens!r}")
    out = {"base": dict(BASE, expert_spread=BASE_SPREAD), "n_tokens": n_tokens, "seed": seed, "sweeps": {}}
    done = {}  # the base point sits in several sweeps: measure it once
    for name, vals in SWEEPS.items():
        runs = []
        for v in vals:
            kw = {**BASE, "expert_spread": BASE_SPREAD, name: v}
            kw["top_k"] = min(kw["top_k"], kw["n_experts"])  # N = 4 with top-4 is dense routing
            key = tuple(sorted(kw.items()))
            if key not in done:
                sigma = kw.pop("expert_spread")
                with one_thread():
                    done[key] = _one(LatentMoEConfig(**kw), sigma, n_tokens, seed)
            runs.append(done[key])
        out["sweeps"][name] = {"values": list(vals), "runs": runs}
    out["base_run"] = done[tuple(sorted(dict(BASE, expert_spread=BASE_SPREAD).items()))]
    return out


# ----------------------------------------------------------------------------- toy training


@dataclasses.dataclass(frozen=True)
class ToyConfig:
    d_in: int = 16
    d_out: int = 8
    n_clusters: int = 16  # the teacher is a different random MLP in each cluster of inputs
    d_model: int = 32
    n_layers: int = 2
    d_latent: int = 16
    n_experts: int = 8
    top_k: int = 2
    steps: int = 120
    batch: int = 128
    n_val: int = 1024
    eval_every: int = 10


TOY = ToyConfig()


class _Stack(nn.Module):
    """x → Linear → n_layers × (h += LatentMoE(RMSNorm(h))) → RMSNorm → Linear: a Pre-RMSNorm MoE stack."""

    def __init__(self, c: ToyConfig, normalize_latent: bool):
        super().__init__()
        mc = LatentMoEConfig(d_model=c.d_model, d_latent=c.d_latent, n_experts=c.n_experts, top_k=c.top_k,
                             d_expert=c.d_latent, n_shared=1, d_shared=c.d_model,
                             normalize_latent=normalize_latent)
        self.inp = nn.Linear(c.d_in, c.d_model)
        self.norms = nn.ModuleList(RMSNorm(c.d_model) for _ in range(c.n_layers))
        self.moes = nn.ModuleList(LatentMoE(mc) for _ in range(c.n_layers))
        self.out_norm, self.out = RMSNorm(c.d_model), nn.Linear(c.d_model, c.d_out)

    def forward(self, x):
        h = self.inp(x)
        for norm, moe in zip(self.norms, self.moes):
            h = h + moe(norm(h))
        return self.out(self.out_norm(h))


def _teacher_data(c: ToyConfig, n: int, gen: torch.Generator, teacher):
    centres, w1, w2 = teacher
    k = torch.randint(0, c.n_clusters, (n,), generator=gen)
    x = centres[k] + 0.5 * torch.randn(n, c.d_in, generator=gen)
    y = torch.einsum("nh,nho->no", torch.tanh(torch.einsum("ni,nih->nh", x, w1[k])), w2[k])
    return x, y


@memo
def toy_training(seeds=(0, 1, 2), lrs=(3e-3, 1e-2), cfg: ToyConfig = TOY) -> dict:
    """Validation MSE curves, with and without the norm, for each seed and learning rate.

    Per seed, both variants start from the *same* weights (the norm has no
    weights besides its gain) and see the same batches in the same order.
    """
    if not seeds or not lrs:
        raise ValueError(f"seeds and lrs must be non-empty, got seeds={seeds!r}, lrs={lrs!r}")
    if not all(isinstance(lr, (int, float)) and lr > 0 for lr in lrs):
        raise ValueError(f"lrs must be positive numbers, got {lrs!r}")
    if not isinstance(cfg, ToyConfig):
        raise TypeError(f"cfg must be a ToyConfig, got {type(cfg).__name__}")
    with one_thread():
        return _train_all(tuple(seeds), tuple(lrs), cfg)


def _train_all(seeds, lrs, c: ToyConfig) -> dict:
    tg = torch.Generator().manual_seed(1234)  # one teacher for all runs
    teacher = (2.0 * torch.randn(c.n_clusters, c.d_in, generator=tg),
               torch.randn(c.n_clusters, c.d_in, 32, generator=tg) / math.sqrt(c.d_in),
               torch.randn(c.n_clusters, 32, c.d_out, generator=tg) / math.sqrt(32))
    xv, yv = _teacher_data(c, c.n_val, torch.Generator().manual_seed(999), teacher)
    runs = []
    for lr in lrs:
        for seed in seeds:
            torch.manual_seed(seed)
            init = _Stack(c, True).state_dict()
            for normalize in (False, True):
                torch.manual_seed(seed)
                model = _Stack(c, normalize)
                own = model.state_dict()  # without the norm there is no latent gain to copy
                model.load_state_dict({k: v for k, v in init.items() if k in own}, strict=True)
                opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.0)
                gen = torch.Generator().manual_seed(10_000 + seed)
                steps, val = [], []
                for step in range(c.steps + 1):
                    if step % c.eval_every == 0:
                        with torch.no_grad():
                            val.append(float(nn.functional.mse_loss(model(xv), yv)))
                        steps.append(step)
                    if step == c.steps:
                        break
                    x, y = _teacher_data(c, c.batch, gen, teacher)
                    loss = nn.functional.mse_loss(model(x), y)
                    opt.zero_grad(set_to_none=True)
                    loss.backward()
                    opt.step()
                runs.append({"lr": lr, "seed": seed, "normalize": normalize, "steps": steps, "val": val})
    base = float(yv.var(dim=0).mean())  # MSE of predicting the mean: the scale of "no learning"
    return {"runs": runs, "seeds": list(seeds), "lrs": list(lrs), "cfg": dataclasses.asdict(c),
            "predict_mean_mse": base, "n_params": sum(p.numel() for p in model.parameters())}
