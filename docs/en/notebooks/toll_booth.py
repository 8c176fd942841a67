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
# # Notebook: Post-LN vs Pre-LN, measured
#
# The toll-booth page's three pieces of evidence, with the same normref functions and the same settings as
# its figures: per-layer gradients at initialization, the length of the residual stream against Lemma 2 of
# Xiong et al. (2020), and a short training run with and without warmup. Everything is synthetic and
# seeded; results are cached on disk under `.cache/normref`, so a second run is instant. The training is one of
# the few slow results committed with normref: where your normref's code and library versions are the run's,
# it is read from there (the page names the machine); otherwise it runs here the first time. To run it
# yourself anyway: `python -m normref committed --refresh warmup_runs`.
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
# ## Evidence 1: the gradient of each layer at initialization

# %%
import matplotlib.pyplot as plt
import numpy as np

from normref.experiments import toll_booth as tb
import normref.figures.palette as palette

plt.rcParams.update(palette.rc())  # the site figures' colors (Post-LN first, Pre-LN second), on no background

r = tb.grad_per_layer()  # the page's setting; try n_layer=24, or seeds=(0, 1)
for p in ("post", "pre"):
    mean = r[p].mean(axis=0)
    print(f"{p:>4}-LN: layer 1 / layer {len(mean)} = {mean[0] / mean[-1]:.2f}")
fig, ax = plt.subplots(figsize=(6, 3.4))
for p in ("post", "pre"):
    ax.plot(r["layers"], r[p].mean(axis=0), marker="o", color=palette.POST_LN if p == "post" else palette.PRE_LN,
            label=f"{p}-LN")
ax.set_xlabel("layer l (1 = nearest the input)")
ax.set_ylabel("||dloss/dW_FFN||")
ax.set_ylim(bottom=0)
ax.legend()
plt.show()

# %% [markdown]
# ## Evidence 2: the residual stream at initialization
#
# Lemma 2: Post-LN's sum before its last norm has E‖x‖² = 3d/2; Pre-LN's stream lies
# between (1 + l/2)·d and (1 + 3l/2)·d.

# %%
r = tb.stream_norms()
d, layers = r["d"], r["layers"]
b = tb.lemma2_bounds(d, layers)
print(f"Post-LN x + FFN(x): {r['post_sum'].mean() / d:.2f} d (the lemma: 1.5 d)")
print(f"Pre-LN at layer {layers[-1]}: {r['pre'].mean(axis=0)[-1] / d:.2f} d "
      f"(the lemma: {b['pre_lo'][-1] / d:.1f} d to {b['pre_hi'][-1] / d:.1f} d)")
fig, ax = plt.subplots(figsize=(6, 3.4))
ax.plot(layers, r["pre"].mean(axis=0) / d, marker="o", color=palette.PRE_LN, label="Pre-LN stream")
ax.plot(layers, r["post"].mean(axis=0) / d, marker="o", color=palette.POST_LN, label="Post-LN layer output")
ax.fill_between(layers, b["pre_lo"] / d, b["pre_hi"] / d, color=palette.PRE_LN, alpha=0.15, label="Lemma 2, Pre-LN bounds")
ax.set_xlabel("layer l (0 = the input)")
ax.set_ylabel("E||x_l||^2 / d")
ax.legend()
plt.show()

# %% [markdown]
# ## Evidence 3: training with and without warmup
#
# Four runs on the same synthetic data from the same seed. `TrainSetting` holds every knob: change `steps`,
# `lr` or `warmup` and run the cell again (a new setting is a new cache entry).

# %%
setting = tb.TrainSetting()  # e.g. tb.TrainSetting(lr=3e-4, warmup=80)
r = tb.warmup_runs(setting)
print(f"uniform guess ln V = {r['uniform']:.3f}, lowest possible loss = {r['entropy']:.3f}")
print("mean loss over the last 20 steps:")
for key in ("post/none", "post/warmup", "pre/none", "pre/warmup"):
    print(f"  {key:<12} {np.mean(r[key][-20:]):.3f}")
fig, ax = plt.subplots(figsize=(6, 3.4))
k = 10
for key in ("post/none", "post/warmup", "pre/none", "pre/warmup"):
    ax.plot(np.convolve(r[key], np.ones(k) / k, mode="valid"), label=key,
            color=palette.POST_LN if key.startswith("post") else palette.PRE_LN, ls="-" if key.endswith("none") else "--")
ax.axhline(r["entropy"], ls=":", color="gray")
ax.set_xlabel("training step")
ax.set_ylabel("loss (nats), 10-step mean")
ax.legend()
plt.show()
