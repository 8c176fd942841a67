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
# # 笔记本：RMSNorm 与 LayerNorm，遍数与字节
#
# 性能一页的论点是：归一化受限于内存，要看的是一个实现把张量读写了几遍，并拿它和一次普通的复制比。这个笔记本
# 先数这些遍数，再用仓库里提交的那次基准测试画出页面上的屋顶线，最后用同一套基准代码在你的机器上计时。
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
# ## 内存遍数
#
# `pass_counts` 让每个 eager 实现在一个能看到所有 aten 算子的 dispatch 模式下跑一次，数它对 *x* 大小的张量整读、
# 整写了几次。融合内核只有两遍，和复制一样。

# %%
from normref import bench

for (family, norm), c in bench.pass_counts(d=256).items():
    print(f"{family:>10} {norm:>4}：{c['passes']:2d} 遍（读 {c['reads']}、写 {c['writes']}）：" + " ".join(c["ops"]))

# %% [markdown]
# ## 提交在仓库里的那次测量：屋顶线
#
# `normref/results/bench-cpu.json` 是一次完整的 `python -m normref bench`，页面上的图都由它画出。下图横轴是隐藏
# 宽度 *d*，纵轴是达到了复制带宽的几成；实线是 RMSNorm，虚线是 LayerNorm。

# %%
import matplotlib.pyplot as plt

from normref.results import bench_cpu
import normref.figures.palette as palette

plt.rcParams.update(palette.rc())  # 与本站的图同一套颜色（Post-LN 在前、Pre-LN 在后），背景透明

rep = bench_cpu()
m = rep["machine"]
print(f"测量于 {m['cpu_model']}，{m['torch_threads']} 线程，torch {m['torch']}，{m['date'][:10]}")
rows = [r for r in rep["results"] if r["device"] == "cpu" and r["mode"] == "forward" and r["dtype"] == "float32"]
fig, ax = plt.subplots(figsize=(6, 3.4))
for family in ("functional", "normref"):
    for norm, ls in (("rms", "-"), ("ln", "--")):
        pts = sorted((r["d"], r["copy_fraction"]) for r in rows if r["family"] == family and r["norm"] == norm)
        ax.plot([p[0] for p in pts], [p[1] for p in pts], ls=ls, marker="o", ms=3, label=f"{family} {norm}")
ax.set_xscale("log", base=2)
ax.set_xlabel("$d$")
ax.set_ylabel("copy bandwidth share")
ax.legend(fontsize=8)
plt.show()

# %% [markdown]
# ## 在你的机器上
#
# 同一套基准代码，换一个小一点的张量，几秒钟就能跑完。计时每次都不一样；本站构建时跳过这一步（页面每次构建都必须
# 得到相同的字节），所以站上这个单元只说明它被跳过了，你自己运行才会看到你机器上的数字。

# %%
import os

if os.environ.get("NORMREF_SITE_BUILD"):
    print("（构建本站时跳过了计时）")
else:
    cfg = bench.BenchConfig(total=1024 * 1024, dims=(1024, 4096), dtypes=("float32",), modes=("forward",),
                            warmup=2, repeats=7, compile=False)  # 试试 total=4096 * 4096，和页面那次一样
    mine = bench.run_bench(cfg, log=lambda *a: None)
    for r in mine["results"]:
        print(f"d = {r['d']:5d}  {r['impl']:<20} {r['time_s']['median'] * 1e3:7.3f} ms  "
              f"复制带宽的 {r['copy_fraction']:5.0%}")
