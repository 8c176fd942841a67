"""Build a small normalized LatentMoE and look at the size of u, token by token.

A scaled-down K3 shape: width d = 64, latent width ℓ = 32, 4 of 224 routed experts
(K3 routes 16 of 896, the same 1:56) and 2 shared experts. We feed it 2048 tokens
that all have the same length (as a Pre-RMSNorm block would hand them over) and
print how much ‖u‖, the aggregated routed output, varies from token to token,
then what W↑ makes of it without the norm (the original LatentMoE) and with it
(Kimi K3, Eq. 11). The coefficient of variation (CV) is std / mean. Needs normref
with torch: the site publishes normref as a wheel, and the pip line is next to
this code on the site.
"""
import torch

from normref.moe import LatentMoE, LatentMoEConfig
from normref.nn import rms_norm

torch.manual_seed(0)
cfg = LatentMoEConfig(d_model=64, d_latent=32, n_experts=224, top_k=4, d_expert=32,
                      n_shared=2, d_shared=64, temperature=0.2, normalize_latent=True)
moe = LatentMoE(cfg)
x = rms_norm(torch.randn(2048, cfg.d_model))  # every token has length √64 = 8

with torch.no_grad():
    y, aux = moe(x, return_aux=True)  # aux.u: the aggregated routed output, before the norm
    without = moe.up(aux.u)  # what the original LatentMoE adds: W↑ · u
    with_norm = aux.routed  # what K3 adds: W↑ · RMSNorm(u)


def stats(name, v):
    n = v.norm(dim=-1)
    lo, hi = torch.quantile(n, torch.tensor([0.01, 0.99]))
    print(f"{name:<27} mean {n.mean():7.3f}   CV {n.std(unbiased=False) / n.mean():.3f}   p99/p1 {hi / lo:5.1f}")


stats("‖u‖", aux.u)
stats(f"‖RMSNorm(u)‖ (√ℓ = {cfg.d_latent ** 0.5:.2f})", aux.u_in)
stats("‖W↑·u‖  (no norm)", without)
stats("‖W↑·RMSNorm(u)‖  (K3)", with_norm)
stats("‖shared branch‖", aux.shared)
print("routing weights sum to 1:", torch.allclose(aux.weights.sum(-1), torch.ones(len(x))))
