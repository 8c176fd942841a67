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
# # 笔记本：把公式算出来
#
# 公式页的每个恒等式、每个界旁边都标着一个数；这个笔记本用同样的 normref 函数把它们算出来，你可以换一个输入，
# 看那个数怎么变：LayerNorm 等于对中心化向量做 RMSNorm、长度为什么是 √d、LayerNorm 的雅可比矩阵，以及
# softmax 饱和。所有输入都是合成的、固定种子。
#
# **怎么运行**：在 Colab 里打开，或者用你自己的 Jupyter。第一个代码单元会在缺少 `normref` 时从本站安装它。

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


pip_install(["normref[plot] @ NORMREF_WHEEL_URL"], ["normref", "matplotlib"])

# %% [markdown]
# ## LayerNorm 就是对中心化向量做 RMSNorm

# %%
import numpy as np

from normref.experiments.formulas import layernorm_steps

s = layernorm_steps(np.array([2.0, -1.0, 3.0, 0.0]))  # 首页的手算例子；也可以换成你自己的向量
print("均值 =", s["mean"], "  方差 =", s["variance"], "  标准差 =", round(s["std"], 4))
print("LayerNorm(x)         =", np.round(s["layer_norm"], 4))
print("RMSNorm(x - mean(x)) =", np.round(s["rms_norm_of_centred"], 4))
print("RMSNorm(x)           =", np.round(s["rms_norm"], 4), "（不减均值）")

# %% [markdown]
# ## 长度为什么约等于 √d，增益又做了什么
#
# 除以 RMS 之后，各分量平方的平均是 1，所以平方和是 *d*。增益 *g* 再把长度乘上大约 RMS(*g*)。
# 这里的增益是合成的替身：1 + 0.3·*z*。

# %%
from normref.experiments.formulas import sqrt_d_demo

for d in (16, 256, 1024, 4096):  # 换别的维度，或者传 gain_spread=1.0
    r = sqrt_d_demo(d=d, seed=0)
    print(f"d = {d:5d}：L2(x) = {r['l2_in']:8.2f}  L2(y) = {r['l2_out']:7.3f}（sqrt(d) = {r['sqrt_d']:6.2f}）"
          f"  L2(y*g) = {r['l2_gain']:7.3f}  sqrt(d)*RMS(g) = {r['predicted_gain']:7.3f}")

# %% [markdown]
# ## 输入越长，LayerNorm 的雅可比越小
#
# Xiong 等人（2020）的引理 3：不带增益的 LayerNorm 满足 ‖J_LN(x)‖₂ = √d / ‖x − μ‖₂。
# `ln_jacobian_sweep` 对同一个向量拉伸 *c* 倍，用闭式解算出雅可比。

# %%
from normref.experiments.formulas import ln_jacobian_sweep

r = ln_jacobian_sweep(d=64, seed=0, scales=(0.1, 1.0, 10.0, 100.0))
print(f"{'c':>6} {'||c x||':>9} {'||J||_2':>9} {'sqrt(d)/||c x - mean||':>24}")
for c, length, spectral, bound in r["rows"]:
    print(f"{c:>6g} {length:>9.3f} {spectral:>9.4f} {bound:>24.4f}")

# %% [markdown]
# ## softmax 饱和
#
# 六个固定的分数，整体乘上 *c*（隐藏向量长了 *c* 倍，它算出的每个点积分数也大 *c* 倍）。*c* 越大，分布越集中到
# 最大的那个分数上，而每个梯度都要经过的 softmax 雅可比趋于零。`saturation` 就是公式页那张图画的数据。
# 下图横轴是 *c*：实线是最大概率，虚线是雅可比的谱范数。

# %%
import matplotlib.pyplot as plt

from normref.experiments.softmax import SCORES, saturation
import normref.figures.palette as palette

plt.rcParams.update(palette.rc())  # 与本站的图同一套颜色（Post-LN 在前、Pre-LN 在后），背景透明

r = saturation(scores=SCORES)  # 试试 scores=np.array([1.0, 0.9, 0.8, 0.7, 0.6, 0.5])
fig, ax = plt.subplots(figsize=(6, 3.4))
ax.semilogx(r["scales"], r["top"], label=r"$\max_i p_i$")
ax.semilogx(r["scales"], r["jacobian_norm"], ls="--", label=r"$\|J_{\mathrm{softmax}}\|_2$")
ax.set_xlabel("$c$")
ax.legend()
plt.show()
for c in (1.0, 4.0, 16.0):
    i = int(np.argmin(abs(r["scales"] - c)))
    print(f"c = {c:4g}：最大概率 {r['top'][i]:.3f}，||J||_2 = {r['jacobian_norm'][i]:.4f}")
