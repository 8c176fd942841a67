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
# # Notebook: RMSNorm vs LayerNorm, passes and bytes
#
# The performance page argues that a norm is memory-bound: what counts is how many times an implementation
# reads and writes the tensor, measured against a plain copy. This notebook counts those passes, draws the
# page's roofline from the committed benchmark run, and then times the implementations on your machine
# with the same benchmark code.
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
# ## Passes over memory
#
# `pass_counts` runs each eager implementation once under a dispatch mode that sees every aten op and counts
# the full reads and writes of *x*-sized tensors. A fused kernel makes two, like a copy.

# %%
from normref import bench

for (family, norm), c in bench.pass_counts(d=256).items():
    print(f"{family:>10} {norm:>4}: {c['passes']:2d} passes ({c['reads']} reads, {c['writes']} writes): "
          + " ".join(c["ops"]))

# %% [markdown]
# ## The roofline, from the committed run
#
# `normref/results/bench-cpu.json` is the full `python -m normref bench` run that the page's figures draw.

# %%
import matplotlib.pyplot as plt

from normref.results import bench_cpu
import normref.figures.palette as palette

plt.rcParams.update(palette.rc())  # the site figures' colors (Post-LN first, Pre-LN second), on no background

rep = bench_cpu()
m = rep["machine"]
print(f"measured on {m['cpu_model']}, {m['torch_threads']} threads, torch {m['torch']}, {m['date'][:10]}")
rows = [r for r in rep["results"] if r["device"] == "cpu" and r["mode"] == "forward" and r["dtype"] == "float32"]
fig, ax = plt.subplots(figsize=(6, 3.4))
for family in ("functional", "normref"):
    for norm, ls in (("rms", "-"), ("ln", "--")):
        pts = sorted((r["d"], r["copy_fraction"]) for r in rows if r["family"] == family and r["norm"] == norm)
        ax.plot([p[0] for p in pts], [p[1] for p in pts], ls=ls, marker="o", ms=3, label=f"{family} {norm}")
ax.set_xscale("log", base=2)
ax.set_xlabel("hidden size d")
ax.set_ylabel("fraction of the copy's bandwidth")
ax.legend(fontsize=8)
plt.show()

# %% [markdown]
# ## On your machine
#
# The same benchmark code, on a smaller tensor so it takes a few seconds. Timings differ from run to run;
# the site's build skips it (its pages must come out the same bytes every time), so on the site this cell
# only says so; run it to see your machine's numbers.

# %%
import os

if os.environ.get("NORMREF_SITE_BUILD"):
    print("(timing skipped while the site was built)")
else:
    cfg = bench.BenchConfig(total=1024 * 1024, dims=(1024, 4096), dtypes=("float32",), modes=("forward",),
                            warmup=2, repeats=7, compile=False)  # try total=4096 * 4096, as the page's run
    mine = bench.run_bench(cfg, log=lambda *a: None)
    for r in mine["results"]:
        print(f"d = {r['d']:5d}  {r['impl']:<20} {r['time_s']['median'] * 1e3:7.3f} ms  "
              f"{r['copy_fraction']:5.0%} of the copy's bandwidth")
