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
# # Notebook: the worked example and RMSNorm's scale invariance
#
# The home page's two measurements, to run on your own machine: RMSNorm by hand on four numbers, then one
# fixed random vector stretched by factors from 0.1 to 10 (synthetic data, seed 0). Change a number in a
# cell and run it again.
#
# **Running it.** Open it in Colab, or in your own Jupyter. The first cell installs `normref` from this
# site when it is missing, so it needs nothing but a Python kernel.

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
# ## The worked example
#
# Square, average, take the square root, divide. `normref.rms_norm` does the same, with an
# ε inside the square root and a gain *g* = 1 until a model learns one.

# %%
import numpy as np

import normref

x = np.array([2.0, -1.0, 3.0, 0.0])  # try your own numbers
rms = np.sqrt(np.mean(x**2))
print("RMS(x) =", round(float(rms), 4))
print("by hand:", np.round(x / rms, 4))
print("normref:", np.round(normref.rms_norm(x), 4))
print("L2 of the output:", round(float(np.linalg.norm(normref.rms_norm(x))), 4), "= sqrt(d) =", np.sqrt(x.size))

# %% [markdown]
# ## Scale invariance
#
# `scale_sweep` is the function behind the home page's figure: it stretches one vector and measures the
# length of the input and of RMSNorm's output at every factor.

# %%
import matplotlib.pyplot as plt

from normref.experiments.scale import scale_sweep
import normref.figures.palette as palette

plt.rcParams.update(palette.rc())  # the site figures' colors (Post-LN first, Pre-LN second), on no background

r = scale_sweep(d=256, seed=0)  # try d=1024, or another seed
print("d =", r["d"], " sqrt(d) =", r["sqrt_d"])
print("input L2, smallest and largest:", r["l2_in"].min().round(3), r["l2_in"].max().round(3))
print("output L2, smallest and largest:", r["l2_out"].min().round(6), r["l2_out"].max().round(6))

fig, ax = plt.subplots(figsize=(6, 3.4))
ax.loglog(r["scales"], r["l2_in"], label="input c·x")
ax.loglog(r["scales"], r["l2_out"], label="RMSNorm(c·x)")
ax.axhline(r["sqrt_d"], ls="--", lw=1, color="gray")
ax.set_xlabel("stretch factor c")
ax.set_ylabel("L2 length")
ax.legend()
plt.show()

# %% [markdown]
# The input length spans two orders of magnitude; the output length stays at √d.
#
# **Try it:** with `d=1024` the flat line moves to 32. Then add a gain: `normref.rms_norm(x, gain=g)`
# with `g = np.full(256, 0.5)` halves the output length. Check it below.

# %%
x = np.random.default_rng(0).standard_normal(256)
g = np.full(256, 0.5)
print("L2 without gain:", np.linalg.norm(normref.rms_norm(x)).round(4))
print("L2 with g = 0.5:", np.linalg.norm(normref.rms_norm(x, gain=g)).round(4))
