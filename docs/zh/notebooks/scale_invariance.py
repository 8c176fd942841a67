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
# # 笔记本：RMSNorm 的尺度不变性
#
# 与首页相同的实验，放到你自己的机器上跑一遍。
# 先在仓库根目录安装（`pip install .`），再从上到下依次运行各个单元。
# 我们把一个固定的随机向量拉伸 0.1 到 10 倍，比较输入长度与 RMSNorm 输出的长度。数据是合成的（固定种子）。

# %%
import numpy as np
import matplotlib.pyplot as plt

import normref
from normref.experiments.scale import scale_sweep

r = scale_sweep(d=256, seed=0)
print("d =", r["d"], " sqrt(d) =", r["sqrt_d"])
print("输入 L2 的最小值与最大值：", r["l2_in"].min().round(3), r["l2_in"].max().round(3))
print("输出 L2 的最小值与最大值：", r["l2_out"].min().round(6), r["l2_out"].max().round(6))

# %% [markdown]
# 输入长度跨了两个数量级，输出长度却始终停在 sqrt(d)。

# %%
fig, ax = plt.subplots(figsize=(6, 3.4))
ax.loglog(r["scales"], r["l2_in"], label="input c·x")
ax.loglog(r["scales"], r["l2_out"], label="RMSNorm(c·x)")
ax.axhline(r["sqrt_d"], ls="--", lw=1, color="gray")
ax.set_xlabel("c")
ax.set_ylabel("L2")
ax.legend()
plt.show()

# %% [markdown]
# **动手试试：** 把 `d` 改成 1024，水平线移到了哪里？再加上增益：
# `normref.rms_norm(x, gain=g)`，取 `g = np.full(256, 0.5)`，输出长度会减半。在下面验证。

# %%
x = np.random.default_rng(0).standard_normal(256)
g = np.full(256, 0.5)
print("不加增益的 L2：", np.linalg.norm(normref.rms_norm(x)).round(4))
print("g = 0.5 时的 L2：", np.linalg.norm(normref.rms_norm(x, gain=g)).round(4))
