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
# # Notebook: the formulas, evaluated
#
# The formulas page states each identity and each bound with a number next to it; this notebook computes
# them with the same normref functions, so you can change the input and watch the number move:
# LayerNorm as RMSNorm of the mean-centered vector, why the length is √d, the LayerNorm Jacobian, and
# softmax saturation. All inputs are synthetic and seeded.
#
# **Running it.** Open it in Colab, or in your own Jupyter. The first cell installs `normref` from this
# site when it is missing.

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


pip_install(["normref[plot] @ NORMREF_WHEEL_URL"], ["normref", "matplotlib"])

# %% [markdown]
# ## LayerNorm is RMSNorm of the mean-centered vector

# %%
import numpy as np

from normref.experiments.formulas import layernorm_steps

s = layernorm_steps(np.array([2.0, -1.0, 3.0, 0.0]))  # the worked example; try your own vector
print("mean(x) =", s["mean"], "  variance =", s["variance"], "  std =", round(s["std"], 4))
print("LayerNorm(x)         =", np.round(s["layer_norm"], 4))
print("RMSNorm(x - mean(x)) =", np.round(s["rms_norm_of_centred"], 4))
print("RMSNorm(x)           =", np.round(s["rms_norm"], 4), " (no centring)")

# %% [markdown]
# ## Why the length is about √d, and what a gain does
#
# After dividing by the RMS the squares average 1, so they sum to *d*. A gain *g* then multiplies the length
# by about RMS(*g*). The gain here is a synthetic stand-in, 1 + 0.3·*z*.

# %%
from normref.experiments.formulas import sqrt_d_demo

for d in (16, 256, 1024, 4096):  # try other sizes, or gain_spread=1.0
    r = sqrt_d_demo(d=d, seed=0)
    print(f"d = {d:5d}: L2(x) = {r['l2_in']:8.2f}  L2(y) = {r['l2_out']:7.3f} (sqrt(d) = {r['sqrt_d']:6.2f})"
          f"  L2(y*g) = {r['l2_gain']:7.3f}  sqrt(d)*RMS(g) = {r['predicted_gain']:7.3f}")

# %% [markdown]
# ## The LayerNorm Jacobian shrinks as the input grows
#
# Xiong et al. (2020), Lemma 3: ‖J_LN(x)‖₂ = √d / ‖x − μ‖₂ for LayerNorm
# without a gain. `ln_jacobian_sweep` computes the Jacobian in closed form for one vector stretched by *c*.

# %%
from normref.experiments.formulas import ln_jacobian_sweep

r = ln_jacobian_sweep(d=64, seed=0, scales=(0.1, 1.0, 10.0, 100.0))
print(f"{'c':>6} {'||c x||':>9} {'||J||_2':>9} {'sqrt(d)/||c x - mean||':>24}")
for c, length, spectral, bound in r["rows"]:
    print(f"{c:>6g} {length:>9.3f} {spectral:>9.4f} {bound:>24.4f}")

# %% [markdown]
# ## Softmax saturation
#
# Six fixed scores, their overall size multiplied by *c* (a hidden vector *c* times longer makes every
# dot-product score *c* times larger). As *c* grows the distribution collapses onto the largest score and
# the softmax Jacobian, through which every gradient passes, goes to zero. `saturation` is what the page's
# figure draws.

# %%
import matplotlib.pyplot as plt

from normref.experiments.softmax import SCORES, saturation
import normref.figures.palette as palette

plt.rcParams.update(palette.rc())  # the site figures' colors (Post-LN first, Pre-LN second), on no background

r = saturation(scores=SCORES)  # try scores=np.array([1.0, 0.9, 0.8, 0.7, 0.6, 0.5])
fig, ax = plt.subplots(figsize=(6, 3.4))
ax.semilogx(r["scales"], r["top"], label="top probability")
ax.semilogx(r["scales"], r["jacobian_norm"], label="||softmax Jacobian||_2")
ax.set_xlabel("scale c of the scores")
ax.legend()
plt.show()
for c in (1.0, 4.0, 16.0):
    i = int(np.argmin(abs(r["scales"] - c)))
    print(f"c = {c:4g}: top probability {r['top'][i]:.3f}, ||J||_2 = {r['jacobian_norm'][i]:.4f}")
