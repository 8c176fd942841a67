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
# # Notebook: the normalized LatentMoE of K3 §2.3.1
#
# Kimi K3 puts an RMSNorm between the aggregated routed output *u* and the up-projection W↑
# (Eq. (11)). The K3 page measures how much ‖u‖ varies from token to token, and what the norm
# does to it, on `normref.moe.LatentMoE` in a scaled-down K3 shape; then it trains a toy model with and
# without the norm. This notebook calls both with the same functions and settings. Everything is
# synthetic and seeded. The toy training is one of the few slow results committed with normref: where your
# normref's code and library versions are the run's, it is read from there (the page names the machine);
# otherwise it runs here the first time, then comes from the cache. To run it yourself anyway:
# `python -m normref committed --refresh toy_training`.
#
# **Running it.** Open it in Colab, or in your own Jupyter. The first cell installs `normref` (with torch)
# from this site when it is missing.

# %% [markdown] tags=["normref-install-note"]
# **torch.** When torch is missing, the first cell installs the build for the CPU alone, from PyTorch's
# own index (on Linux, pip's default torch is the CUDA build, a much larger download). A torch you
# already have is kept, Colab's included. If torch should use an NVIDIA GPU (CUDA), install that build
# before you run the first cell, or delete the cell's CPU line.

# %%
# Install normref (the package that computed this page's numbers) and what this notebook
# imports, from the site's own wheel. Skipped when they are installed already (in the
# site's build, say, or on a second run); an install that fails stops here and says why.
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
            why += " " + ("This notebook installs normref from {site}, the address written into it when"
                          " the site was built; if the site has moved or cannot be reached from here, "
                          "change that address, in this cell's pip_install line for normref, to the "
                          "wheel on a site you can reach.").format(site=site[0])
        raise RuntimeError(f"pip install {' '.join(args)} failed: {why}")


# torch built for the CPU alone, from PyTorch's own index (on Linux, pip's default torch is the CUDA
# build, a much larger download). Skipped when torch is installed already: Colab's own is kept. If
# torch should use an NVIDIA GPU (CUDA), delete this line: the next one then installs PyPI's torch,
# the CUDA build on Linux.
pip_install(["torch==2.13.0", "--index-url", "https://download.pytorch.org/whl/cpu"], ["torch"])
pip_install(["normref[plot,torch] @ NORMREF_WHEEL_URL"], ["normref", "matplotlib", "torch"])

# %% [markdown]
# ## One block, 2048 tokens of equal length

# %%
import torch

from normref.moe import LatentMoE, LatentMoEConfig
from normref.nn import rms_norm

torch.manual_seed(0)
cfg = LatentMoEConfig(d_model=64, d_latent=32, n_experts=224, top_k=4, d_expert=32, n_shared=2, d_shared=64,
                      temperature=0.2, normalize_latent=True)  # try top_k=16, or temperature=1.0
moe = LatentMoE(cfg)
x = rms_norm(torch.randn(2048, cfg.d_model))  # every token has length sqrt(64) = 8
with torch.no_grad():
    y, aux = moe(x, return_aux=True)
    without = moe.up(aux.u)  # the original LatentMoE: W_up u
for name, v in (("||u||", aux.u), ("||RMSNorm(u)||", aux.u_in), ("||W_up u|| (no norm)", without),
                ("||W_up RMSNorm(u)|| (K3)", aux.routed), ("||shared branch||", aux.shared)):
    n = v.norm(dim=-1)
    print(f"{name:<26} mean {n.mean():7.3f}   CV {n.std(unbiased=False) / n.mean():.3f}")

# %% [markdown]
# ## The sweeps behind the page's figures
#
# `u_spread` changes one factor at a time around the base point (top-k, routing temperature, expert count,
# the spread of expert sizes) and measures the coefficient of variation (CV, std / mean) of each length.
# Unlike the block above, its experts get a synthetic spread of output sizes (σ = 0.5, standing in
# for trained experts of unequal size), so ‖u‖ varies more at the base point.

# %%
import matplotlib.pyplot as plt

from normref.experiments.moe import u_spread
import normref.figures.palette as palette

plt.rcParams.update(palette.rc())  # the site figures' colors (Post-LN first, Pre-LN second), on no background

r = u_spread()
b = r["base_run"]
print(f"base point: CV of ||u|| {b['cv_u']:.3f}; routed branch without the norm {b['cv_routed_raw']:.3f},"
      f" with it {b['cv_routed_norm']:.3f}; shared branch {b['cv_shared']:.3f}")
sweep = r["sweeps"]["temperature"]  # or "top_k", "n_experts", "expert_spread"
fig, ax = plt.subplots(figsize=(6, 3.4))
for key, label in (("cv_u", "||u||"), ("cv_routed_raw", "W_up u"), ("cv_routed_norm", "W_up RMSNorm(u)"),
                   ("cv_shared", "shared")):
    ax.plot([f"{v:g}" for v in sweep["values"]], [run[key] for run in sweep["runs"]], marker="o", label=label)
ax.set_xlabel("routing temperature")
ax.set_ylabel("CV of per-token length")
ax.set_ylim(bottom=0)
ax.legend(fontsize=8)
plt.show()

# %% [markdown]
# ## A toy training comparison
#
# A two-block Pre-RMSNorm stack with one LatentMoE per block learns a teacher that switches with the input's
# cluster. For each seed both variants start from the same weights and see the same batches.

# %%
import numpy as np

from normref.experiments.moe import toy_training

r = toy_training()  # the page's setting: seeds (0, 1, 2), learning rates 3e-3 and 1e-2
print(f"predicting the mean scores an MSE of {r['predict_mean_mse']:.3f}")
for lr in r["lrs"]:
    for normalize in (False, True):
        final = [run["val"][-1] for run in r["runs"] if run["lr"] == lr and run["normalize"] == normalize]
        label = "W_up RMSNorm(u)" if normalize else "W_up u         "
        print(f"lr {lr:g}: {label} final validation MSE {np.mean(final):.4f} (seeds: "
              + ", ".join(f"{v:.4f}" for v in final) + ")")
