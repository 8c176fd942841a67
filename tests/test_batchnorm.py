"""BatchNorm vs per-token statistics on SmolLM2's activations (the interview page's BatchNorm section).

The helpers are checked on synthetic data (fast); the measurement itself loads
SmolLM2 on a cache miss (marked ``models``).
"""

from __future__ import annotations

import numpy as np
import pytest

from normref import values
from normref.experiments import smollm2_batch as sb


def _synthetic(n_texts=20, d=16, seed=0):
    rng = np.random.default_rng(seed)
    lengths = rng.integers(3, 12, size=n_texts)
    text_of = np.repeat(np.arange(n_texts), lengths)
    pos = np.concatenate([np.arange(n) for n in lengths])
    x = rng.normal(size=(len(text_of), d)) * np.linspace(0.5, 3, d) + rng.normal(size=d)
    return x, text_of, pos, lengths


def test_fluctuation_shrinks_with_batch_size_and_per_token_stats_do_not_move(monkeypatch):
    monkeypatch.setattr(sb, "N_BATCHES", 60)
    x, text_of, pos, lengths = _synthetic()
    r = sb._bn_fluctuation(x, text_of, pos, len(lengths), np.random.default_rng(1))
    by = r["by_batch"]
    assert list(by) == list(sb.BATCH_SIZES)
    cv = [by[b]["var_cv"] for b in sb.BATCH_SIZES]
    assert all(a > b for a, b in zip(cv, cv[1:]))  # more tokens per batch, steadier statistics
    for b in sb.BATCH_SIZES:
        assert by[b]["out_change"] > 0 and by[b]["train_vs_inference"] > 0
    assert r["per_token_change"] == 0.0


def test_unmasked_padding_shrinks_the_variance(monkeypatch):
    monkeypatch.setattr(sb, "N_BATCHES", 30)
    x, text_of, _, lengths = _synthetic()
    r = sb._padding(x, text_of, lengths, np.random.default_rng(2))
    assert 0 < r["pad_share"] < 1 and r["var_ratio"] < 1


@pytest.mark.models
def test_batch_statistics_fluctuate_and_per_token_ones_do_not():
    """What the interview page and the claim ledger state, on SmolLM2's real activations."""
    r = sb.smollm2_batch()
    assert r["n_texts"] == len(sb.TEXTS) and r["n_tokens"] == sum(r["lengths"]) and r["d"] == 576
    for layer in sb.LAYERS:
        bn = r["layers"][layer]["batchnorm"]
        small, large = bn["by_batch"][sb.BATCH_SIZES[0]], bn["by_batch"][sb.BATCH_SIZES[-1]]
        # Measured (layer 15): CV 26% → 7%, a token's output moves 29% → 11%, train vs inference 29% → 8%.
        assert small["var_cv"] > 0.15 and large["var_cv"] < small["var_cv"] / 2
        assert small["out_change"] > 0.15 and large["out_change"] > 0.05
        assert small["train_vs_inference"] > large["train_vs_inference"] > 0.03
        assert bn["per_token_change"] == 0.0
        pad = r["layers"][layer]["padding"]
        assert 0.2 < pad["pad_share"] < 0.7 and pad["var_ratio"] < 0.85


@pytest.mark.models
@pytest.mark.parametrize("lang", ["zh", "en"])
def test_values_render(lang):
    for name in values.names():
        if name.startswith("batchnorm."):
            assert values.get(name, lang)
    assert values.get("batchnorm.per_token_change", lang) == "0"
    assert values.get("batchnorm.var_cv_small", lang).endswith("%")


@pytest.mark.models
def test_caption_names_what_the_weights_file_says():
    from normref import figures

    r = sb.smollm2_batch()
    assert r["weights"] == "Q4_1 weights (embeddings Q8_0)"  # read from the GGUF by normref.models
    spec = figures.get("batchnorm_fluctuation")
    assert r["model"] in spec.caption["en"] and r["weights"] in spec.caption["en"]
    assert r["model"] in spec.caption["zh"] and "Q4_1" in spec.caption["zh"] and "Q8_0" in spec.caption["zh"]
    for lang in ("zh", "en"):
        assert str(len(sb.TEXTS)) in spec.caption[lang] and str(sb.N_BATCHES) in spec.caption[lang]
