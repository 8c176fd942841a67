"""What the worked solutions of the pages' exercises compute: the exercise's change, measured.

Each function answers one exercise that asks "what if …" with the measurement,
on the same code and settings as the page the exercise belongs to. They live in
their own module so that adding one does not change the cache key of the page
experiments (cache.memo keys a result by its module's import closure).

1. ``layer_norm_by_hand``: LayerNorm of the formulas page's exercise vector, step by step.
2. ``shift_sweep``: LayerNorm and RMSNorm of x + c for a few shifts c.
3. ``stream_share``: at initialization, how much larger the residual stream entering each
   LN is than the branch added to it, in Post-LN and DeepNorm (α·x against f(x)).
4. ``final_norms``: which layouts of normref.blocks.TinyTransformer add a final norm.
5. ``moe_variants``: ‖u‖'s spread in the K3 page's LatentMoE with top-1 routing and identical
   experts, and with a softmax over all experts that is not renormalized over the chosen k.
"""

from __future__ import annotations

import numpy as np

from ..cache import memo
from . import one_thread

__all__ = ["EXERCISE_X", "SHIFTS", "layer_norm_by_hand", "shift_sweep", "stream_share", "final_norms",
           "moe_variants"]

# The vector of the formulas page's first exercise (the page states it in the question).
EXERCISE_X = (1.0, 1.0, 1.0, 5.0)
# The shifts of its second exercise: none, the exercise's 10, and a larger one.
SHIFTS = (0.0, 10.0, 100.0)


def layer_norm_by_hand(x=EXERCISE_X) -> dict:
    """LayerNorm of ``x`` step by step (experiments.formulas.layernorm_steps), and its d."""
    from .formulas import layernorm_steps

    steps = layernorm_steps(np.asarray(x, dtype=np.float64))
    return {**steps, "d": len(x)}


def shift_sweep(x=EXERCISE_X, shifts=SHIFTS) -> dict:
    """{"shifts", "layer_norm": (shifts, d), "rms_norm": (shifts, d)} of x + c (gain 1, no bias)."""
    from ..norms import layer_norm, rms_norm

    x = np.asarray(x, dtype=np.float64)
    if not shifts:
        raise ValueError("shifts must name at least one shift")
    return {"shifts": tuple(float(c) for c in shifts),
            "layer_norm": np.stack([layer_norm(x + c) for c in shifts]),
            "rms_norm": np.stack([rms_norm(x + c) for c in shifts])}


@memo
@one_thread()
def stream_share(placements: tuple = ("post", "deepnorm"), n_layer: int = 12, d_model: int = 64, n_head: int = 4,
                 vocab_size: int = 64, block_size: int = 32, batch: int = 16, seeds: tuple = (0, 1, 2)) -> dict:
    """{placement: median over sub-layers, tokens and seeds of ‖α·x‖ / ‖f(x)‖} at initialization: how much
    the residual stream outweighs the branch in the sum each LN normalizes (α = 1 for Post-LN), and α."""
    import torch

    from ..blocks import DeepNormBlock, TinyConfig, TinyTransformer

    if not seeds:
        raise ValueError("seeds must name at least one seed")
    out = {"n_layer": n_layer, "seeds": tuple(seeds)}
    for placement in placements:
        ratios, alpha = [], 1.0
        for seed in seeds:
            torch.manual_seed(seed)
            model = TinyTransformer(TinyConfig(placement=placement, n_layer=n_layer, d_model=d_model, n_head=n_head,
                                               vocab_size=vocab_size, block_size=block_size))
            for b in model.blocks:
                alpha = b.alpha if isinstance(b, DeepNormBlock) else 1.0
                for sub in (b.attn, b.mlp):
                    sub.register_forward_hook(
                        lambda m, a, y, alpha=alpha: ratios.append(
                            (alpha * a[0].norm(dim=-1) / y.norm(dim=-1)).flatten().detach().numpy()))
            idx = torch.randint(vocab_size, (batch, block_size), generator=torch.Generator().manual_seed(10_000 + seed))
            with torch.no_grad():
                model(idx)
        out[placement] = {"ratio": float(np.median(np.concatenate(ratios))), "alpha": float(alpha)}
    return out


def final_norms() -> dict:
    """{placement: does TinyTransformer put a norm before the head?}, read from the model it builds."""
    import torch.nn as nn

    from ..blocks import PLACEMENTS, TinyConfig, TinyTransformer

    return {p: not isinstance(TinyTransformer(TinyConfig(placement=p, n_layer=4)).ln_f, nn.Identity)
            for p in PLACEMENTS}


@memo
@one_thread()
def moe_variants(n_tokens: int = 2048, seed: int = 0) -> dict:
    """The K3 page's ‖u‖ measurement (experiments.moe, its base point) changed two ways.

    ``top1_identical``: top-1 routing and no synthetic spread between the experts (σ = 0): cv of ‖u‖,
    of ‖W↓x‖, and of ‖u‖/‖W↓x‖² (what is left once the GLU's degree 2 is divided out).
    ``no_renorm``: the base point with weights softmax over all N experts, kept on the chosen k without
    renormalizing. Those weights are the renormalized ones times S, the kept probability mass, so
    u becomes S·u: cv of ‖u‖ with and without renormalizing, cv of S, and cv of ‖RMSNorm(S·u)‖.
    """
    import torch

    from ..moe import LatentMoE, LatentMoEConfig
    from ..nn import rms_norm
    from .moe import BASE, BASE_SPREAD, _one, _scale_experts, cv

    if isinstance(n_tokens, bool) or not isinstance(n_tokens, int) or n_tokens < 2:
        raise ValueError(f"n_tokens must be an integer >= 2, got {n_tokens!r}")
    top1 = _one(LatentMoEConfig(**{**BASE, "top_k": 1}), 0.0, n_tokens, seed)
    # The base point again, as experiments.moe._one builds it, keeping the router's full softmax.
    cfg = LatentMoEConfig(**BASE)
    gen = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    m = LatentMoE(cfg)
    _scale_experts(m, BASE_SPREAD, gen)
    x = rms_norm(torch.randn(n_tokens, cfg.d_model, generator=gen))
    with torch.no_grad():
        p = torch.softmax(m.router(x) / cfg.temperature, dim=-1)
        kept = p.topk(cfg.top_k, dim=-1).values.sum(-1)  # S: the mass the chosen k keep
        _, aux = m(x, return_aux=True)
        u_kept = kept[:, None] * aux.u
    return {
        "n_experts": cfg.n_experts, "top_k": cfg.top_k,
        "top1_identical": {k: top1[k] for k in ("cv_u", "cv_z", "cv_u_over_z2")},
        "no_renorm": {
            "cv_u": cv(aux.u.norm(dim=-1).numpy()),
            "cv_u_kept": cv(u_kept.norm(dim=-1).numpy()),
            "cv_kept": cv(kept.numpy()),
            "kept_mean": float(kept.mean()),
            "cv_u_kept_normed": cv(rms_norm(u_kept, eps=cfg.eps).norm(dim=-1).numpy()),
        },
    }
