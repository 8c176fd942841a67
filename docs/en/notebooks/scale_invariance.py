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
# # Notebook: RMSNorm's scale invariance
#
# The same experiment as the home page, to run on your own machine.
# Install the repository first (`pip install .` from its root), then run the cells top to bottom.
# We stretch one fixed random vector by factors from 0.1 to 10 and compare the length of the
# input with the length of RMSNorm's output. The data is synthetic (seeded).

# %%
import numpy as np
import matplotlib.pyplot as plt

import normref
from normref.experiments.scale import scale_sweep

r = scale_sweep(d=256, seed=0)
print("d =", r["d"], " sqrt(d) =", r["sqrt_d"])
print("input L2, smallest and largest:", r["l2_in"].min().round(3), r["l2_in"].max().round(3))
print("output L2, smallest and largest:", r["l2_out"].min().round(6), r["l2_out"].max().round(6))

# %% [markdown]
# The input length spans two orders of magnitude; the output length does not move from sqrt(d).

# %%
fig, ax = plt.subplots(figsize=(6, 3.4))
ax.loglog(r["scales"], r["l2_in"], label="L2 of the input c·x")
ax.loglog(r["scales"], r["l2_out"], label="L2 of RMSNorm(c·x)")
ax.axhline(r["sqrt_d"], ls="--", lw=1, color="gray")
ax.set_xlabel("stretch factor c")
ax.set_ylabel("L2 length")
ax.legend()
plt.show()

# %% [markdown]
# **Try it:** change `d` to 1024. Where does the flat line move to? Then add a gain:
# `normref.rms_norm(x, gain=g)` with `g = np.full(256, 0.5)` halves the output length. Check it below.

# %%
x = np.random.default_rng(0).standard_normal(256)
g = np.full(256, 0.5)
print("L2 without gain:", np.linalg.norm(normref.rms_norm(x)).round(4))
print("L2 with g = 0.5:", np.linalg.norm(normref.rms_norm(x, gain=g)).round(4))
