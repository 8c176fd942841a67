"""Values of the real-model page: SmolLM2-135M and MiniLM-L6, measured on the page prompts.

Everything is read from :mod:`normref.experiments.models` (one cached
measurement per model and prompt); nothing is typed in.
"""

from __future__ import annotations

from . import fmt, value
from ..experiments.models import PROMPTS, run, summary
from ..models.measurement import layer_rows

SMOL, MINI = "smollm2-135m", "minilm-l6"


def _cfg(model):
    return run(model, "en")["model"]


def _g(x: float) -> str:
    """Three significant digits, no trailing zeros (24, 19.6, 0.00213)."""
    return f"{x:.3g}".replace("-", "−")


def _big(x: float) -> str:
    """A large number rounded to an integer, with a thin space every three digits."""
    return f"{round(x):,}".replace(",", "\u2009")


# ---- configuration, read from the weights files
for _key in ("n_layer", "d", "d_ff", "n_head", "n_kv_head", "head_dim", "vocab_size", "context"):
    value(f"models.smol.{_key}")(lambda lang, k=_key: str(_cfg(SMOL)[k]))
for _key in ("n_layer", "d", "d_ff", "n_head"):
    value(f"models.mini.{_key}")(lambda lang, k=_key: str(_cfg(MINI)[k]))


@value("models.smol.last_layer")
def _smol_last(lang):
    return str(_cfg(SMOL)["n_layer"] - 1)


@value("models.smol.eps")
def _smol_eps(lang):
    return f"{_cfg(SMOL)['eps']:.0e}".replace("e-0", "e-")


@value("models.smol.rope_base")
def _smol_rope(lang):
    return f"{_cfg(SMOL)['rope_base']:g}"


@value("models.smol.sqrt_d")
def _smol_sqrt_d(lang):
    return _g(run(SMOL, "en")["sqrt_d"])


@value("models.mini.sqrt_d")
def _mini_sqrt_d(lang):
    return _g(run(MINI, "en")["sqrt_d"])


@value("models.mini.eps")
def _mini_eps(lang):
    return f"{_cfg(MINI)['eps']:.0e}".replace("e-", "e-")


@value("models.smol.weights")
def _smol_weights(lang):
    m = _cfg(SMOL)
    mats, emb = "/".join(m["matrix_types"]), m["embedding_type"]
    return f"{mats} 权重（嵌入 {emb}）" if lang == "zh" else f"{mats} weights (embeddings {emb})"


@value("models.smol.matrix_type")
def _smol_mtype(lang):
    return "/".join(_cfg(SMOL)["matrix_types"])


@value("models.smol.embedding_type")
def _smol_etype(lang):
    return _cfg(SMOL)["embedding_type"]


@value("models.smol.n_gains")
def _smol_n_gains(lang):
    m = _cfg(SMOL)
    return str((2 * m["n_layer"] + 1))


# ---- prompts
@value("models.prompt.en")
def _p_en(lang):
    return PROMPTS["en"]


@value("models.prompt.zh")
def _p_zh(lang):
    return PROMPTS["zh"]


for _m, _short in ((SMOL, "smol"), (MINI, "mini")):
    for _pl in ("en", "zh"):
        value(f"models.{_short}.{_pl}.n_tokens")(lambda lang, m=_m, pl=_pl: str(summary(m, pl)["n_tokens"]))
        value(f"models.{_short}.{_pl}.stream_first")(lambda lang, m=_m, pl=_pl: fmt(summary(m, pl)["stream_first"], 1))
        value(f"models.{_short}.{_pl}.stream_last")(
            lambda lang, m=_m, pl=_pl: fmt(summary(m, pl)["stream_last"], 0 if m == SMOL else 1))
        value(f"models.{_short}.{_pl}.growth")(lambda lang, m=_m, pl=_pl: _g(summary(m, pl)["growth"]))


@value("models.mini.zh.n_unk")
def _mini_unk(lang):
    return str(summary(MINI, "zh")["n_unk"])


@value("models.mini.zh.unk_share")
def _mini_unk_share(lang):
    s = summary(MINI, "zh")
    # [CLS] and [SEP] are not characters of the prompt: count the rest.
    return f"{round(100 * s['n_unk'] / (s['n_tokens'] - 2))}%"


@value("models.mini.en.stream_range")
def _mini_range(lang):
    rows = layer_rows(run(MINI, "en"))
    vals = [r["stream"] for r in rows] + [run(MINI, "en")["final"]["stream_in"]["l2_excl0"]]
    return f"{fmt(min(vals), 1)}–{fmt(max(vals), 1)}"


# ---- RMSNorm before and after the gain
@value("models.smol.pre_gain_reldev")
def _pre_dev(lang):
    dev = max(summary(SMOL, pl)["pre_gain_dev"] for pl in PROMPTS) / run(SMOL, "en")["sqrt_d"]
    return f"{dev:.1e}".replace("e-0", "e-").replace("-", "−")


@value("models.smol.en.post1_range")
def _post1(lang):
    s = summary(SMOL, "en")
    return f"{fmt(s['post1_min'], 1)}–{fmt(s['post1_max'], 1)}"


@value("models.smol.en.post2_range")
def _post2(lang):
    s = summary(SMOL, "en")
    return f"{fmt(s['post2_min'], 1)}–{fmt(s['post2_max'], 1)}"


@value("models.smol.en.final_post")
def _final_post(lang):
    return fmt(run(SMOL, "en")["final"]["norms"][0]["post_gain"]["l2_excl0"], 0)


# ---- the gains
def _block_gains():
    return [n["gain"] for L in run(SMOL, "en")["layers"] for n in L["norms"]]


@value("models.smol.gain_median_range")
def _gmed(lang):
    meds = [g["median"] for g in _block_gains()]
    return f"{fmt(min(meds), 3)}–{fmt(max(meds), 2)}"


@value("models.smol.gain_median_range_from1")
def _gmed1(lang):
    """Median gains of layers 1.. (layer 0's attention norm is an outlier, reported on its own)."""
    doc = run(SMOL, "en")
    meds = [n["gain"]["median"] for L in doc["layers"][1:] for n in L["norms"]]
    return f"{fmt(min(meds), 2)}–{fmt(max(meds), 2)}"


@value("models.smol.gain_max")
def _gmax(lang):
    return fmt(max(g["max"] for g in _block_gains()), 2)


@value("models.smol.gain_layer0_attn_median")
def _g0(lang):
    return _g(run(SMOL, "en")["layers"][0]["norms"][0]["gain"]["median"])


@value("models.smol.gain_layer0_attn_absmax")
def _g0max(lang):
    g = run(SMOL, "en")["layers"][0]["norms"][0]["gain"]
    return fmt(max(abs(g["min"]), abs(g["max"])), 2)


@value("models.smol.en.l0_mid")
def _l0_mid(lang):
    """Stream of layer 0 after the attention add (= the input of its MLP norm)."""
    return fmt(layer_rows(run(SMOL, "en"))[0]["n2_in"], 1)


@value("models.smol.en.l1_in")
def _l1_in(lang):
    return fmt(layer_rows(run(SMOL, "en"))[1]["stream"], 1)


@value("models.smol.final_gain_median")
def _gfin(lang):
    return fmt(run(SMOL, "en")["final"]["norms"][0]["gain"]["median"], 2)


@value("models.smol.final_gain_range")
def _gfin_range(lang):
    g = run(SMOL, "en")["final"]["norms"][0]["gain"]
    return f"{fmt(g['min'], 2)} … {fmt(g['max'], 2)}"


@value("models.smol.n_negative_gains")
def _gneg(lang):
    return str(sum(1 for s, g in run(SMOL, "en")["gains"].items() for w in g["weight"] if w < 0))


@value("models.smol.n_gain_values")
def _gall(lang):
    return str(sum(len(g["weight"]) for g in run(SMOL, "en")["gains"].values()))


# ---- position 0
@value("models.smol.massive_from")
def _mfrom(lang):
    return str(summary(SMOL, "en")["massive_from"])


@value("models.smol.pos0_peak")
def _mpeak(lang):
    return _big(summary(SMOL, "en")["pos0_peak"])


@value("models.smol.pos0_dim")
def _mdim(lang):
    return str(summary(SMOL, "en")["pos0_dim"])


@value("models.smol.pos0_share")
def _mshare(lang):
    return f"{100 * summary(SMOL, 'en')['pos0_share']:.1f}%"


@value("models.smol.pos0_ratio")
def _mratio(lang):
    return _big(summary(SMOL, "en")["pos0_ratio"])


@value("models.smol.pos0_vs_typical")
def _mtyp(lang):
    return _big(summary(SMOL, "en")["pos0_vs_typical"])


@value("models.smol.en.stream_all_at_massive")
def _mall(lang):
    s = summary(SMOL, "en")
    L = run(SMOL, "en")["layers"][s["massive_from"]]["stream_in"]
    return _big(L["l2_all"])


@value("models.smol.en.stream_excl0_at_massive")
def _mexcl(lang):
    s = summary(SMOL, "en")
    return fmt(run(SMOL, "en")["layers"][s["massive_from"]]["stream_in"]["l2_excl0"], 0)


@value("models.smol.massive_ratio_threshold")
def _mthr(lang):
    from ..experiments.models import MASSIVE_RATIO

    return f"{MASSIVE_RATIO:g}"


# ---- per-layer detail tables (generated from the measurement, never typed)
def _table(model: str, prompt_lang: str, lang: str) -> str:
    doc = run(model, prompt_lang)
    rows = layer_rows(doc)
    if model == SMOL:
        head = (["层", "残差流", "注意力前 x̂", "注意力前输出", "g 中位数", "MLP 前 x̂", "MLP 前输出", "g 中位数", "位置 0"]
                if lang == "zh" else
                ["layer", "stream", "attn x̂", "attn out", "g median", "MLP x̂", "MLP out", "g median", "position 0"])
    else:
        head = (["层", "残差流", "x + 注意力", "x̂", "LN 输出", "γ 中位数", "h + MLP", "x̂", "LN 输出", "γ 中位数"]
                if lang == "zh" else
                ["layer", "stream", "x + attn", "x̂", "LN out", "γ median", "h + MLP", "x̂", "LN out", "γ median"])
    lines = ["| " + " | ".join(head) + " |", "|" + "---:|" * len(head)]
    for r in rows:
        if model == SMOL:
            cells = [r["layer"], fmt(r["stream"], 1), fmt(r["n1_pre"], 3), fmt(r["n1_post"], 2), fmt(r["g1"], 3),
                     fmt(r["n2_pre"], 3), fmt(r["n2_post"], 2), fmt(r["g2"], 3), fmt(r["pos0"], 0)]
        else:
            cells = [r["layer"], fmt(r["stream"], 2), fmt(r["n1_in"], 2), fmt(r["n1_pre"], 3), fmt(r["n1_post"], 2),
                     fmt(r["g1"], 3), fmt(r["n2_in"], 2), fmt(r["n2_pre"], 3), fmt(r["n2_post"], 2), fmt(r["g2"], 3)]
        lines.append("| " + " | ".join(str(c) for c in cells) + " |")
    fin = doc["final"]
    end = "末" if lang == "zh" else "end"
    if model == SMOL:
        fn = fin["norms"][0]
        cells = [end, fmt(fin["stream_in"]["l2_excl0"], 1), fmt(fn["pre_gain"]["l2_excl0"], 3),
                 fmt(fn["post_gain"]["l2_excl0"], 2), fmt(fn["gain"]["median"], 3), "", "", "",
                 fmt(fin["stream_in"]["l2_tokens"][0], 0)]
    else:
        cells = [end, fmt(fin["stream_in"]["l2_excl0"], 2)] + [""] * 8
    lines.append("| " + " | ".join(str(c) for c in cells) + " |")
    return "\n".join(lines)


@value("models.table.smol")
def _table_smol(lang):
    """The SmolLM2 table on the page's own prompt (Chinese page: Chinese prompt)."""
    return _table(SMOL, lang, lang)


@value("models.table.mini")
def _table_mini(lang):
    return _table(MINI, "en", lang)
