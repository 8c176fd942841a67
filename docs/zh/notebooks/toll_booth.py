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
# # 笔记本：实测 Post-LN 与 Pre-LN
#
# 收费站一页的三条证据，用同样的 normref 函数、和页面配图一样的配置得出：初始化时每层的梯度、残差流的长度
# 与 Xiong 等人（2020）引理 2 的对照，以及一次有无预热的小训练。全部是合成数据、固定种子；结果缓存在
# `.cache/normref` 下，第二次运行立刻出结果。小训练是随 normref 提交的几项较慢的结果之一：如果你的 normref
# 代码和库版本与那次运行相同，就直接读取提交的结果（页面上写了是哪台机器算的）；否则第一次运行时在这里真正
# 训练。想自己重跑，运行 `python -m normref committed --refresh warmup_runs`。
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
# ## 证据一：初始化时每层的梯度
#
# 横轴是层号 *l*（1 最靠近输入），纵轴是该层 FFN 权重的梯度范数，取各随机种子的平均。

# %%
import matplotlib.pyplot as plt
import numpy as np

from normref.experiments import toll_booth as tb
import normref.figures.palette as palette

plt.rcParams.update(palette.rc())  # 与本站的图同一套颜色（Post-LN 在前、Pre-LN 在后），背景透明

r = tb.grad_per_layer()  # 页面上的配置；试试 n_layer=24，或 seeds=(0, 1)
for p in ("post", "pre"):
    mean = r[p].mean(axis=0)
    print(f"{p:>4}-LN：第 1 层 / 第 {len(mean)} 层 = {mean[0] / mean[-1]:.2f}")
fig, ax = plt.subplots(figsize=(6, 3.4))
for p in ("post", "pre"):
    ax.plot(r["layers"], r[p].mean(axis=0), marker="o", color=palette.POST_LN if p == "post" else palette.PRE_LN,
            label=f"{p.capitalize()}-LN")
ax.set_xlabel("$l$")
ax.set_ylabel(r"$\|\partial\mathcal{L}/\partial W_{\mathrm{FFN}}\|$")
ax.set_ylim(bottom=0)
ax.legend()
plt.show()

# %% [markdown]
# ## 证据二：初始化时的残差流
#
# 引理 2：Post-LN 在最后一次归一化之前的和满足 E‖x‖² = 3d/2；Pre-LN 的残差流落在
# (1 + l/2)·d 与 (1 + 3l/2)·d 之间。下图纵轴是 E‖x_l‖² / d，阴影是 Pre-LN 的上下界。

# %%
r = tb.stream_norms()
d, layers = r["d"], r["layers"]
b = tb.lemma2_bounds(d, layers)
print(f"Post-LN 的 x + FFN(x)：{r['post_sum'].mean() / d:.2f} d（Lemma 2：1.5 d）")
print(f"Pre-LN 第 {layers[-1]} 层：{r['pre'].mean(axis=0)[-1] / d:.2f} d"
      f"（Lemma 2：{b['pre_lo'][-1] / d:.1f} d 到 {b['pre_hi'][-1] / d:.1f} d）")
fig, ax = plt.subplots(figsize=(6, 3.4))
ax.plot(layers, r["pre"].mean(axis=0) / d, marker="o", color=palette.PRE_LN, label="Pre-LN")
ax.plot(layers, r["post"].mean(axis=0) / d, marker="o", color=palette.POST_LN, label="Post-LN")
ax.fill_between(layers, b["pre_lo"] / d, b["pre_hi"] / d, color=palette.PRE_LN, alpha=0.15, label="Lemma 2")
ax.set_xlabel("$l$")
ax.set_ylabel(r"$\mathbb{E}\|x_l\|^2 / d$")
ax.legend()
plt.show()

# %% [markdown]
# ## 证据三：有无预热的训练
#
# 同一份合成数据、同一个初始化种子，跑四次。所有开关都在 `TrainSetting` 里：改 `steps`、`lr` 或 `warmup`
# 后重跑这个单元即可（新配置就是新的缓存条目）。图中是 10 步滑动平均的损失，点线是这份数据上可能的最低损失。

# %%
setting = tb.TrainSetting()  # 例如 tb.TrainSetting(lr=3e-4, warmup=80)
r = tb.warmup_runs(setting)
print(f"均匀猜测 ln V = {r['uniform']:.3f}，可能的最低损失 = {r['entropy']:.3f}")
print("最后 20 步的平均损失：")
for key in ("post/none", "post/warmup", "pre/none", "pre/warmup"):
    print(f"  {key:<12} {np.mean(r[key][-20:]):.3f}")
fig, ax = plt.subplots(figsize=(6, 3.4))
k = 10
for key in ("post/none", "post/warmup", "pre/none", "pre/warmup"):
    ax.plot(np.convolve(r[key], np.ones(k) / k, mode="valid"), label=key,
            color=palette.POST_LN if key.startswith("post") else palette.PRE_LN, ls="-" if key.endswith("none") else "--")
ax.axhline(r["entropy"], ls=":", color="gray")
ax.set_xlabel("step")
ax.set_ylabel(r"$\mathcal{L}$ (nats)")
ax.legend()
plt.show()
