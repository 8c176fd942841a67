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
# # 笔记本：手算例子与 RMSNorm 的尺度不变性
#
# 首页的两项测量，放到你自己的机器上再跑一遍：先对四个数手算 RMSNorm，再把一个固定的随机向量拉伸 0.1 到 10 倍
# （合成数据，种子 0）。改掉单元里的任何一个数，重新运行即可。
#
# **怎么运行**：在 Colab 里打开，或者用你自己的 Jupyter。第一个代码单元会在缺少 `normref` 时从本站安装它，
# 除了一个 Python 内核之外什么都不需要。

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
# ## 手算例子
#
# 平方、求平均、开方、相除。`normref.rms_norm` 做的是同一件事，只是在根号里多了一个 ε，
# 增益 *g* 在模型学到它之前等于 1。

# %%
import numpy as np

import normref

x = np.array([2.0, -1.0, 3.0, 0.0])  # 换成你自己的数试试
rms = np.sqrt(np.mean(x**2))
print("RMS(x) =", round(float(rms), 4))
print("手算：", np.round(x / rms, 4))
print("normref：", np.round(normref.rms_norm(x), 4))
print("输出的 L2：", round(float(np.linalg.norm(normref.rms_norm(x))), 4), "= sqrt(d) =", np.sqrt(x.size))

# %% [markdown]
# ## 尺度不变性
#
# `scale_sweep` 就是首页那张图背后的函数：它把一个向量逐级拉伸，记下每个倍数下输入和 RMSNorm 输出的长度。

# %%
import matplotlib.pyplot as plt

from normref.experiments.scale import scale_sweep
import normref.figures.palette as palette

plt.rcParams.update(palette.rc())  # 与本站的图同一套颜色（Post-LN 在前、Pre-LN 在后），背景透明

r = scale_sweep(d=256, seed=0)  # 试试 d=1024，或换一个种子
print("d =", r["d"], " sqrt(d) =", r["sqrt_d"])
print("输入 L2 的最小值与最大值：", r["l2_in"].min().round(3), r["l2_in"].max().round(3))
print("输出 L2 的最小值与最大值：", r["l2_out"].min().round(6), r["l2_out"].max().round(6))

fig, ax = plt.subplots(figsize=(6, 3.4))
ax.loglog(r["scales"], r["l2_in"], label=r"$\|c\,x\|_2$")
ax.loglog(r["scales"], r["l2_out"], label=r"$\|\mathrm{RMSNorm}(c\,x)\|_2$")
ax.axhline(r["sqrt_d"], ls="--", lw=1, color="gray")
ax.set_xlabel("$c$")
ax.set_ylabel("L2")
ax.legend()
plt.show()

# %% [markdown]
# 横轴是拉伸倍数 *c*，纵轴是长度。输入长度跨了两个数量级，输出长度却一直停在 √d（虚线）。
#
# **动手试试**：取 `d=1024`，水平线会移到 32。再加上增益：`normref.rms_norm(x, gain=g)`，
# 取 `g = np.full(256, 0.5)`，输出长度会减半。在下面验证。

# %%
x = np.random.default_rng(0).standard_normal(256)
g = np.full(256, 0.5)
print("不加增益的 L2：", np.linalg.norm(normref.rms_norm(x)).round(4))
print("g = 0.5 时的 L2：", np.linalg.norm(normref.rms_norm(x, gain=g)).round(4))
