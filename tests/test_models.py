"""Real models: our forwards against transformers, the recorded statistics, bad input, the CLI.

The slow tests load real weights: they use the ``real_models`` fixture, which marks them
``models`` (tests/conftest.py); they run in ``make test``, not in ``make test-fast``.
Each model is loaded once per session (``normref.models.load`` caches it).
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import torch

from normref import data, stats, values
from normref.__main__ import main
from normref.models import MODELS, check_prompt, load, measure, spec
from normref.models import measurement as measure_mod
from normref.models.record import summarize

PROMPT_EN = "The capital of France is"
PROMPT_ZH = "归一化让每个词元的隐藏向量保持稳定。"


@pytest.fixture(scope="module")
def smol(real_models):
    return real_models("smollm2-135m")


@pytest.fixture(scope="module")
def mini(real_models):
    return real_models("minilm-l6")


def _doc(model: str, prompt: str) -> dict:
    # Uncached on purpose: these tests check the computation, not an old cache entry.
    return measure_mod._measure.uncached(model, prompt, "test", "test")


# ---------------------------------------------------------------- cross-checks with transformers


def test_smollm2_logits_and_tokens_match_transformers(smol, monkeypatch):
    import functools

    import gguf
    from transformers import AutoModelForCausalLM, AutoTokenizer

    # transformers rebuilds gguf's (pure, read-only) tensor-name map once per submodule, ~400 times;
    # memoising it cuts the load by a third without touching what is compared.
    monkeypatch.setattr(gguf, "get_tensor_name_map", functools.lru_cache(maxsize=None)(gguf.get_tensor_name_map))
    path = smol.spec.weights_path
    # transformers dequantises the same GGUF independently and un-permutes Q/K for rotate_half RoPE.
    hf = AutoModelForCausalLM.from_pretrained(str(path.parent), gguf_file=path.name, dtype=torch.float32).eval()
    tok = AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
    for text in (PROMPT_EN, PROMPT_ZH, "In 2024, 12345 apples cost $3.50!\n\tok", "<|im_start|>user\nHi<|im_end|>"):
        assert smol.encode(text) == tok(text)["input_ids"], text
    for text in (PROMPT_EN, PROMPT_ZH):
        ids = smol.encode(text)
        ours, _ = smol.forward(ids)
        with torch.no_grad():
            ref = hf(torch.tensor([ids])).logits[0]
        diff = float((ours - ref).abs().max())
        print(f"max |logit difference| vs transformers on {text!r}: {diff:.2e}")
        assert diff <= 1e-3, f"max |logit difference| = {diff:.2e} on {text!r}"


def test_minilm_hidden_states_match_transformers(mini):
    from transformers import BertModel

    hf = BertModel.from_pretrained(str(mini.spec.weights_path.parent)).eval()
    ids = mini.encode("Normalization keeps the stream in check.")
    out, rec = mini.forward(ids, record=True)
    with torch.no_grad():
        ref = hf(torch.tensor([ids]), output_hidden_states=True)
    assert float((out - ref.last_hidden_state[0]).abs().max()) <= 1e-4
    # Every layer's stream (what enters block i) against transformers' hidden state i.
    for i in range(mini.cfg.n_layer):
        np.testing.assert_allclose(rec[f"blk.{i}"]["stream_in"]["l2_tokens"], stats.l2(ref.hidden_states[i][0]),
                                   rtol=1e-5)


def test_greedy_text_is_sensible(smol):
    assert smol.generate(PROMPT_EN, 1).strip() == "Paris"
    with pytest.raises(ValueError, match="encoder"):
        load("minilm-l6").generate("hello", 1)


# ---------------------------------------------------------------- statistics


def _norms(doc):
    for part in (doc["embedding"], *doc["layers"], doc["final"]):
        yield from part["norms"]


def test_smollm2_statistics(smol):
    doc = _doc("smollm2-135m", PROMPT_EN)
    d, n = doc["model"]["d"], doc["model"]["n_layer"]
    assert (d, n) == (smol.cfg.d, smol.cfg.n_layer) and doc["sqrt_d"] == math.sqrt(d)
    assert len(doc["layers"]) == n and len(list(_norms(doc))) == 2 * n + 1
    for nm in _norms(doc):
        # Before the gain, every token's RMSNorm output has L2 = √d (ε moves it by < 1e-3 relative).
        np.testing.assert_allclose(nm["pre_gain"]["l2_tokens"], math.sqrt(d), rtol=1e-3)
        g = np.asarray(doc["gains"][nm["site"]]["weight"])
        assert g.shape == (d,) and nm["gain"]["median"] == pytest.approx(float(np.median(g)))
        assert doc["gains"][nm["site"]]["bias"] is None
    for L in doc["layers"]:
        # Pre-norm: the first norm reads the stream itself.
        assert L["norms"][0]["input"] == L["stream_in"]
    # The stream grows with depth (position 0 excluded); the normalised copies do not.
    first, last = doc["layers"][0]["stream_in"]["l2_excl0"], doc["final"]["stream_in"]["l2_excl0"]
    assert last > 50 * first
    assert doc["next_token"].strip() == "Paris"
    # l2_excl0 / l2_all are the means of the per-token values.
    s = doc["layers"][5]["stream_in"]
    assert s["l2_excl0"] == pytest.approx(np.mean(s["l2_tokens"][1:]))
    assert s["l2_all"] == pytest.approx(np.mean(s["l2_tokens"]))


def test_minilm_statistics(mini):
    doc = _doc("minilm-l6", "The capital of France is Paris.")
    d = doc["model"]["d"]
    assert doc["tokens"][0] == "[CLS]" and doc["tokens"][-1] == "[SEP]" and doc["n_unk"] == 0
    for nm in _norms(doc):
        np.testing.assert_allclose(nm["pre_gain"]["l2_tokens"], math.sqrt(d), rtol=1e-3)
        assert nm["bias"] is not None
    # Post-LN: the stream entering layer i+1 is the output of layer i's last LayerNorm.
    for a, b in zip(doc["layers"], doc["layers"][1:]):
        assert b["stream_in"]["l2_tokens"] == a["norms"][1]["post_gain"]["l2_tokens"]
    streams = [L["stream_in"]["l2_excl0"] for L in doc["layers"]] + [doc["final"]["stream_in"]["l2_excl0"]]
    assert max(streams) < 3 * min(streams), "a Post-LN stream is reset every layer; it should not grow"
    # The uncased English vocabulary does not know most Chinese characters.
    zh = _doc("minilm-l6", PROMPT_ZH)
    assert zh["n_unk"] > (zh["n_tokens"] - 2) / 2


def test_summarize_matches_normref_stats():
    x = torch.randn(7, 33, generator=torch.Generator().manual_seed(0))
    x[0, 5] = 100.0
    s = summarize(x)
    np.testing.assert_allclose(s["l2_tokens"], stats.l2(x))
    assert s["l2_excl0"] == pytest.approx(stats.mean_l2_per_token(x, skip_first=True))
    assert s["l2_all"] == pytest.approx(stats.mean_l2_per_token(x))
    assert s["top_dim"][0] == 5 and s["top_share"][0] == pytest.approx(1e4 / float((x[0] ** 2).sum()))
    with pytest.raises(ValueError, match="tokens, d"):
        summarize(torch.zeros(3))


# ---------------------------------------------------------------- bad input


def test_unknown_model_is_a_clear_error():
    for fn in (spec, load):
        with pytest.raises(ValueError, match="model must be one of smollm2-135m, minilm-l6"):
            fn("gpt-5")
    with pytest.raises(ValueError, match="model must be one of"):
        measure("gpt-5", "hello")


def test_empty_prompt_is_a_clear_error():
    for bad in ("", "   \n"):
        with pytest.raises(ValueError, match="prompt must contain some text"):
            measure("smollm2-135m", bad)
    with pytest.raises(TypeError, match="prompt must be a str"):
        check_prompt(["hello"])


def test_prompt_longer_than_the_context_is_a_clear_error(smol, mini, tmp_path, monkeypatch):
    with pytest.raises(ValueError, match=r"takes at most 8192 tokens"):
        smol.encode(" a" * (smol.cfg.context + 1))
    monkeypatch.setenv("NORMREF_CACHE", str(tmp_path))
    with pytest.raises(ValueError, match=r"prompt is \d+ tokens long, but all-MiniLM-L6-v2 takes at most 512"):
        measure("minilm-l6", "word " * 600)
    assert not list(tmp_path.glob("data/*.pkl")), "a failed measurement must not be cached"
    with pytest.raises(ValueError, match="more than the model's context"):
        smol.net(torch.zeros(1, smol.cfg.context + 1, dtype=torch.long))
    with pytest.raises(ValueError, match="at least 2 tokens"):  # the statistics leave position 0 out
        measure("smollm2-135m", "Hi")


# ---------------------------------------------------------------- cache and CLI


def test_measurement_is_cached_on_disk(mini, tmp_path, monkeypatch):
    from normref.models import files

    monkeypatch.setenv("NORMREF_CACHE", str(tmp_path))
    files._sha_for.cache_clear()
    a = measure("minilm-l6", "Caching keeps warm builds cheap.")

    def no_model_work(name):
        raise AssertionError("a warm measurement must not load the model")

    monkeypatch.setattr(measure_mod, "load", no_model_work)
    assert measure("minilm-l6", "Caching keeps warm builds cheap.") == a
    assert len(list(tmp_path.glob("filehash/*.txt"))) == 1  # the weights file is hashed once, then remembered
    with pytest.raises(AssertionError, match="must not load"):
        measure("minilm-l6", "A different prompt is a different key.")


def test_the_file_hash_is_named_by_no_absolute_path(tmp_path, monkeypatch):
    """The weights' SHA-256 is remembered under the file's folder and name, size and mtime: the same file in
    a moved environment (copied, times kept) is found; another mtime or content is hashed again."""
    import hashlib
    import shutil

    from normref.models import files

    monkeypatch.setenv("NORMREF_CACHE", str(tmp_path / "cache"))
    files._sha_for.cache_clear()
    a = tmp_path / "env-a" / "pkg" / "w.bin"
    a.parent.mkdir(parents=True)
    a.write_bytes(b"weights" * 1000)
    b = tmp_path / "moved" / "env-b" / "pkg" / "w.bin"
    b.parent.mkdir(parents=True)
    shutil.copy2(a, b)
    assert files.file_sha256(a) == files.file_sha256(b) == hashlib.sha256(a.read_bytes()).hexdigest()
    assert len(list((tmp_path / "cache").glob("filehash/*.txt"))) == 1
    b.write_bytes(b"other" * 1000)
    assert files.file_sha256(b) == hashlib.sha256(b"other" * 1000).hexdigest()


def test_cached_gguf_conversion_is_bit_identical_to_reading_the_gguf(smol, tmp_path, monkeypatch):
    """load_gguf_cached dequantizes once per weights file; what it reads back is the same bits."""
    from normref.models import llama
    from normref.models.files import file_sha256

    path = smol.spec.weights_path
    ref_net, ref_tok, ref_info = llama.load_gguf(path)
    calls = []

    def counted(p):
        calls.append(p)
        return ref_net, ref_tok, ref_info

    monkeypatch.setenv("NORMREF_CACHE", str(tmp_path))
    monkeypatch.setattr(llama, "load_gguf", counted)
    sha = file_sha256(path)
    llama.load_gguf_cached(path, sha)  # converts and stores
    net, tok, info = llama.load_gguf_cached(path, sha)  # reads the stored conversion
    assert len(calls) == 1, "the GGUF was dequantized more than once"
    assert len(list(tmp_path.glob("models/*.safetensors"))) == 1
    assert net is not ref_net and info == ref_info and net.cfg == ref_net.cfg
    ours, ref = net.state_dict(), ref_net.state_dict()
    assert sorted(ours) == sorted(ref)
    for k in ref:
        assert ours[k].dtype == ref[k].dtype == torch.float32 and torch.equal(ours[k], ref[k]), k
    for text in (PROMPT_EN, PROMPT_ZH, "<|im_start|>user\nHi<|im_end|>"):
        ids = ref_tok.encode(text).ids
        assert tok.encode(text).ids == ids, text
        with torch.no_grad():
            assert torch.equal(net(torch.tensor([ids])), ref_net(torch.tensor([ids]))), text
    assert llama.load_gguf_cached(path, "0" * 64) is not None and len(calls) == 2  # another file: converted anew
    # What a build's task runs first (normref.models.checkpoint.convert): the conversion alone, loading nothing.
    assert llama.convert_gguf_cached(path, sha) is True and len(calls) == 2  # there already
    assert llama.convert_gguf_cached(path, "1" * 64) is False and len(calls) == 3  # converted, once
    assert llama.convert_gguf_cached(path, "1" * 64) is True and len(calls) == 3
    from normref.models import checkpoint

    assert checkpoint.convert("minilm-l6") is True  # safetensors: nothing to convert


@pytest.mark.parametrize("model", sorted(MODELS))
def test_cli_writes_valid_json_and_prints_a_table(model, smol, mini, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("NORMREF_CACHE", str(tmp_path / "cache"))
    out = tmp_path / "act.json"
    assert main(["activations", "--model", model, "--prompt", PROMPT_EN, "--json", str(out)]) == 0
    doc = json.loads(out.read_text(encoding="utf-8"))
    m = doc["model"]
    assert doc["schema"] == "normref.activations/1" and m["id"] == model and doc["prompt"] == PROMPT_EN
    assert len(doc["layers"]) == m["n_layer"] and len(doc["tokens"]) == doc["n_tokens"]
    assert all(len(g["weight"]) == m["d"] for g in doc["gains"].values())
    table = capsys.readouterr().out
    assert m["name"] in table and len(table.splitlines()) == m["n_layer"] + 5
    with pytest.raises(SystemExit) as e:  # one line and status 2, as every command says a mistake
        main(["activations", "--model", model, "--prompt", " "])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("python -m normref activations: error: prompt must contain some text") and err.count("\n") == 1
    with pytest.raises(SystemExit):
        main(["activations", "--model", "nope", "--prompt", "x"])


# ---------------------------------------------------------------- what the page uses


def test_snippet_measures_the_page_prompt():
    # The snippet reads the measurement the figures already made (one disk-cache entry), which keeps
    # the build cheap; it only stays cheap while the two prompts agree.
    from pathlib import Path

    from normref.experiments.models import PROMPTS

    src = (Path(__file__).resolve().parent.parent / "snippets" / "smollm2_layers.py").read_text(encoding="utf-8")
    assert f'prompt = "{PROMPTS["en"]}"' in src


def test_layer_explorer_dataset_and_tables(real_models):
    d = data.get("layer_explorer", "zh")
    json.loads(data.to_json(d))
    assert d["prompt_order"] == ["zh", "en"]
    for model, entry in d["models"].items():
        n = entry["model"]["n_layer"]
        for pl in ("en", "zh"):
            run = entry["runs"][pl]
            assert len(run["layers"]) == n and len(run["layers"][0]["stream_in"]["l2_tokens"]) == run["n_tokens"]
    for name, model in (("models.smol.layers", "smollm2-135m"), ("models.mini.layers", "minilm-l6")):
        n = d["models"][model]["model"]["n_layer"]
        for lang in ("zh", "en"):
            assert len(values.table(name, lang).rows) == n + 1  # layers, end
    assert values.get("models.smol.n_layer") == "30" and values.get("models.smol.sqrt_d") == "24"


def test_figure_captions_name_what_the_weights_file_says(real_models):
    from normref import figures

    m = measure("smollm2-135m", "The capital of France is")["model"]
    label = {"en": f"{'/'.join(m['matrix_types'])} weights (embeddings {m['embedding_type']})",
             "zh": f"{'/'.join(m['matrix_types'])} 量化权重（嵌入矩阵 {m['embedding_type']}）"}
    for name in ("models_forward_strip", "models_l2_layers", "models_gains", "models_massive"):
        spec_ = figures.get(name)
        for lang in ("zh", "en"):
            assert m["name"] in spec_.caption[lang], (name, lang)
            assert m["matrix_types"][0] in spec_.caption[lang] and m["embedding_type"] in spec_.caption[lang]
    assert label["en"] in figures.get("models_l2_layers").caption["en"]
    assert label["zh"] in figures.get("models_l2_layers").caption["zh"]
    assert "uncased English" in figures.get("models_l2_layers").caption["en"]


def test_real_models_page_in_both_languages(site):
    import html as html_mod
    import re

    from support import lang_root

    for lang in ("zh", "en"):
        page = (lang_root(site, lang) / "real-models" / "index.html").read_text(encoding="utf-8")
        for name in ("models_forward_strip", "models_l2_layers", "models_gains", "models_massive"):
            assert f"{name}-light.svg" in page and f"{name}-dark.svg" in page, (lang, name)
        for name in ("models.smol.en.growth", f"position0.{lang}.dim", "models.mini.zh.n_unk", "models.smol.sqrt_d"):
            assert values.get(name, lang) in page, (lang, name)
        # The detail table is generated: its first data row is in the page.
        cells = values.table("models.smol.layers", lang).rows[0]
        assert all(f">{c}<" in page for c in cells if c), (lang, cells)
        # (the hook wraps [[data: …]] in a <template>, so instant navigation does not run it as a script)
        blob = re.search(r'<template class="nr-data" id="nr-data-layer_explorer"><script type="application/json">'
                         r'(.*?)</script></template>', page, re.S)
        assert blob and json.loads(html_mod.unescape(blob.group(1)).replace("<\\/", "</")) == json.loads(
            data.to_json(data.get("layer_explorer", lang)))
        assert "smollm2_layers.py" in page and "the stream grew" in page
