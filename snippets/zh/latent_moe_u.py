"""搭一个带归一化的小 LatentMoE，逐个词元看 u 的大小。

按 K3 的形状缩小：隐藏维度 d = 64，潜空间维度 ℓ = 32，224 个路由专家里选 4 个
（K3 是 896 选 16，同为 1:56），另有 2 个共享专家。我们喂给它 2048 个长度全都相同的
词元（就像 Pre-RMSNorm 块交给它的那样），打印聚合后的路由输出的长度 ‖u‖ 在词元之间
变化多大，再看 W↑ 在不加归一化时（原版 LatentMoE）和加了归一化时（Kimi K3，式 11）
把它变成什么。变异系数（CV）是标准差 / 均值。需要带 torch 的 normref：本站把 normref
发布成 wheel，站上这段代码旁边就有 pip 安装命令。
"""
import torch

from normref.moe import LatentMoE, LatentMoEConfig
from normref.nn import rms_norm

torch.manual_seed(0)
cfg = LatentMoEConfig(d_model=64, d_latent=32, n_experts=224, top_k=4, d_expert=32,
                      n_shared=2, d_shared=64, temperature=0.2, normalize_latent=True)
moe = LatentMoE(cfg)
x = rms_norm(torch.randn(2048, cfg.d_model))  # 每个词元的长度都是 √64 = 8

with torch.no_grad():
    y, aux = moe(x, return_aux=True)  # aux.u：聚合后的路由输出，归一化之前
    without = moe.up(aux.u)  # 原版 LatentMoE 加回去的：W↑ · u
    with_norm = aux.routed  # K3 加回去的：W↑ · RMSNorm(u)


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
