# ---
# jupyter:
#   jupytext:
#     formats: py:percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 笔记本：K3 §2.3.1 的归一化 LatentMoE
#
# Kimi K3 在路由专家聚合后的输出 *u* 与升投影 W↑ 之间加了一个 RMSNorm（式 (11)）。K3 一页用缩小版 K3 形状的
# `normref.moe.LatentMoE` 测量了 ‖u‖ 在词元之间波动多大、RMSNorm 又把它变成什么样，然后训练了一个
# 有无 RMSNorm 的玩具模型。这个笔记本用同样的函数、同样的配置得出这两项结果。全部是合成数据、固定种子。
# 玩具训练是随 normref 提交的几项较慢的结果之一：如果你的 normref 代码和库版本与那次运行相同，就直接读取
# 提交的结果（页面上写了是哪台机器算的）；否则第一次运行时在这里真正训练，之后走缓存。想自己重跑，运行
# `python -m normref committed --refresh toy_training`。
#
# **怎么运行**：在 Colab 里打开，或者用你自己的 Jupyter。第一个代码单元会在缺少时从本站安装 `normref`（含 torch）。

# %% [markdown] tags=["normref-install-note"]
# **torch**：缺少 torch 时，第一个代码单元会先从 PyTorch 自己的索引装只用 CPU 的 torch（在 Linux 上，pip 默认装的是 CUDA 版，下载量大得多）。
# 已经装好的 torch 原样保留，Colab 自带的也一样。想让 torch 用上 NVIDIA GPU（CUDA），就在运行第一个单元之前自己装好那个版本，
# 或者删掉单元里装 CPU 版的那一行。

# %%
# 安装 normref（算出本页数字的包）和本笔记本用到的库，来自本站自己的 wheel。
# 已经装好时（比如在本站的构建里，或第二次运行）直接跳过；安装失败就停在这里，说明原因。
import importlib
import importlib.util
import os
import re
import subprocess
import sys


def pip_install(args, modules):
    """pip install ARGS unless every module in MODULES imports; a failure raises, naming the install."""
    if all(importlib.util.find_spec(m) is not None for m in modules):
        return
    done = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-color", *args],
                          capture_output=True, text=True, env={**os.environ, "NO_COLOR": "1"})
    importlib.invalidate_caches()
    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    if done.returncode != 0 or missing:
        text = re.sub(r"\x1b\[[0-?]*[ -/]*[@-~]", "", done.stderr)  # ANSI codes, should any remain
        errors = [ln for ln in text.splitlines() if ln.startswith("ERROR")] or text.strip().splitlines()[-1:]
        why = " ".join(errors) if done.returncode != 0 else "it ran, but " + ", ".join(missing) + " still cannot be imported"
        site = [a.split(" @ ", 1)[1] for a in args if " @ " in a]
        if site and done.returncode != 0:
            why += " " + ("本笔记本从 {site} 安装 normref，这个地址是构建网站时写进来的；如果网站换"
                          "了地址，或者从这里访问不到，请把本单元里安装 normref 那一行 "
                          "pip_install 中的地址改成能访问到的网站上的 wheel 地址。").format(site=site[0])
        raise RuntimeError(f"pip install {' '.join(args)} failed: {why}")


# 只用 CPU 的 torch，来自 PyTorch 自己的索引（在 Linux 上，pip 默认装的是 CUDA 版，下载量大得多）。
# 已经装了 torch 就跳过，Colab 自带的 torch 原样保留。想让 torch 用上 NVIDIA GPU（CUDA），
# 就删掉这一行，下一行会装上 PyPI 的 torch（在 Linux 上是 CUDA 版）。
pip_install(["torch==2.13.0", "--index-url", "https://download.pytorch.org/whl/cpu"], ["torch"])
pip_install(["normref[plot,torch] @ NORMREF_WHEEL_URL"], ["normref", "matplotlib", "torch"])

# %% [markdown]
# ## 一个块，2048 个等长的词元
#
# 变异系数（CV）是标准差除以均值。

# %%
import torch

from normref.moe import LatentMoE, LatentMoEConfig
from normref.nn import rms_norm

torch.manual_seed(0)
cfg = LatentMoEConfig(d_model=64, d_latent=32, n_experts=224, top_k=4, d_expert=32, n_shared=2, d_shared=64,
                      temperature=0.2, normalize_latent=True)  # 试试 top_k=16，或 temperature=1.0
moe = LatentMoE(cfg)
x = rms_norm(torch.randn(2048, cfg.d_model))  # 每个词元的长度都是 sqrt(64) = 8
with torch.no_grad():
    y, aux = moe(x, return_aux=True)
    without = moe.up(aux.u)  # 原始 LatentMoE：W↑ u
for name, v in (("‖u‖", aux.u), ("‖RMSNorm(u)‖", aux.u_in), ("‖W↑ u‖（无 RMSNorm）", without),
                ("‖W↑ RMSNorm(u)‖（K3）", aux.routed), ("‖共享分支‖", aux.shared)):
    n = v.norm(dim=-1)
    print(f"{name:<20} 均值 {n.mean():7.3f}   CV {n.std(unbiased=False) / n.mean():.3f}")

# %% [markdown]
# ## 页面配图背后的扫描
#
# `u_spread` 围绕基准点一次只改一个因素（top-k、路由温度、专家数、专家输出大小的离散度），测量每种长度的变异系数。
# 与上一个单元不同，这里的专家输出大小带有合成的离散度 σ = 0.5（代替训练后大小不一的专家），
# 所以基准点上 ‖u‖ 的波动更大。下图横轴是路由温度 τ。

# %%
import matplotlib.pyplot as plt

from normref.experiments.moe import u_spread
import normref.figures.palette as palette

plt.rcParams.update(palette.rc())  # 与本站的图同一套颜色（Post-LN 在前、Pre-LN 在后），背景透明

r = u_spread()
b = r["base_run"]
print(f"基准点：‖u‖ 的 CV {b['cv_u']:.3f}；路由分支无 RMSNorm 时 {b['cv_routed_raw']:.3f}，"
      f"有 RMSNorm 时 {b['cv_routed_norm']:.3f}；共享分支 {b['cv_shared']:.3f}")
sweep = r["sweeps"]["temperature"]  # 或 "top_k"、"n_experts"、"expert_spread"
fig, ax = plt.subplots(figsize=(6, 3.4))
for key, label in (("cv_u", r"$\|u\|$"), ("cv_routed_raw", r"$W_\uparrow u$"),
                   ("cv_routed_norm", r"$W_\uparrow\,\mathrm{RMSNorm}(u)$"), ("cv_shared", "shared")):
    ax.plot([f"{v:g}" for v in sweep["values"]], [run[key] for run in sweep["runs"]], marker="o", label=label)
ax.set_xlabel(r"$\tau$")
ax.set_ylabel("CV")
ax.set_ylim(bottom=0)
ax.legend(fontsize=8)
plt.show()

# %% [markdown]
# ## 玩具训练对比
#
# 两层 Pre-RMSNorm 残差堆叠，每层一个 LatentMoE，去拟合一个随输入所在的簇而切换的教师网络。同一个种子下，两种
# 变体从同样的权重出发、看到同样的批次。

# %%
import numpy as np

from normref.experiments.moe import toy_training

r = toy_training()  # 页面上的配置：种子 (0, 1, 2)，学习率 3e-3 与 1e-2
print(f"只预测均值的 MSE 是 {r['predict_mean_mse']:.3f}")
for lr in r["lrs"]:
    for normalize in (False, True):
        final = [run["val"][-1] for run in r["runs"] if run["lr"] == lr and run["normalize"] == normalize]
        label = "W↑ RMSNorm(u)" if normalize else "W↑ u         "
        print(f"学习率 {lr:g}：{label} 最终验证 MSE {np.mean(final):.4f}（各种子："
              + "、".join(f"{v:.4f}" for v in final) + "）")
