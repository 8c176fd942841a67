"""The attention sink (normref.experiments.sink, normref.values.sink): the probabilities are the ones
llama.Attention computes (rebuilt through F.scaled_dot_product_attention's output), rows sum to 1 over the keys
a query sees, the per-head means and baselines; with the real weights, a re-run of one text against the cached
result, and every value finite and in range."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest
import torch

from normref.experiments import sink as SK
from normref.models.llama import Llama, LlamaConfig, rope_angles

CFG = LlamaConfig(n_layer=3, d=32, d_ff=48, n_head=4, n_kv_head=2, eps=1e-5, rope_base=10000.0, vocab_size=50,
                  context=64)


def _toy():
    torch.manual_seed(0)
    net = Llama(CFG)
    with torch.no_grad():  # a sharper, less uniform attention than the default init gives
        for b in net.blocks:
            b.attn.q.weight.mul_(4)
            b.attn.k.weight.mul_(4)
    return net


def _check_probs(attn, x, cos, sin):
    p, v = SK.attention_probs(attn, x, cos, sin)
    B, T = x.shape[:2]
    assert p.shape == (B, attn.cfg.n_head, T, T) and v.shape == (B, attn.cfg.n_head, T, attn.cfg.head_dim)
    # Causal: a query gives nothing to later keys; each row sums to 1 over the keys it sees.
    assert bool((p.triu(1) == 0).all())
    torch.testing.assert_close(p.sum(-1), torch.ones(B, attn.cfg.n_head, T), rtol=0, atol=1e-5)
    # Rebuilt from our probabilities and v, the output is what the module (F.scaled_dot_product_attention)
    # returns, to float32 tolerance relative to the output's size.
    with torch.no_grad():
        ours, theirs = SK.attention_output(attn, p, v), attn(x, cos, sin)
    scale = float(theirs.abs().max())
    assert float((ours - theirs).abs().max()) <= 1e-5 * max(scale, 1.0)
    return p


def test_probabilities_are_the_modules_on_a_small_model():
    net = _toy()
    T = 12
    cos, sin = rope_angles(T, CFG.head_dim, CFG.rope_base)
    x = torch.randn(2, T, CFG.d)
    for b in net.blocks:
        with torch.no_grad():
            p = _check_probs(b.attn, b.attn_norm(x), cos, sin)
        assert float(p[:, :, 1:, 0].std()) > 0.01  # not uniform: the check has something to catch


def test_probabilities_catch_a_wrong_scale():
    # The check is not vacuous: a softmax without the 1/sqrt(head_dim) scale rebuilds a different output.
    net = _toy()
    b = net.blocks[0]
    T = 10
    cos, sin = rope_angles(T, CFG.head_dim, CFG.rope_base)
    with torch.no_grad():
        x = b.attn_norm(torch.randn(1, T, CFG.d))
        p, v = SK.attention_probs(b.attn, x, cos, sin)
        logp = torch.log(p.clamp_min(1e-30)) * math.sqrt(CFG.head_dim)  # scores up to a per-row constant
        wrong = torch.softmax(logp.masked_fill(p == 0, float("-inf")), dim=-1)
        diff = (SK.attention_output(b.attn, wrong, v) - b.attn(x, cos, sin)).abs().max()
    assert float(diff) > 1e-3


def test_measure_ids_averages_queries_one_on():
    net = _toy()
    m = SimpleNamespace(net=net)
    ids = [3, 17, 5, 9, 41, 2, 2, 8, 30, 1]
    T = len(ids)
    r = SK.measure_ids(m, ids)
    assert np.array(r["sink"]).shape == np.array(r["self"]).shape == (CFG.n_layer, CFG.n_head)
    assert np.array(r["first"]).shape == (CFG.n_layer, CFG.n_head, SK.N_FIRST)
    assert r["recon_max_abs"] < 1e-5
    assert r["uniform"] == pytest.approx(np.mean([1 / (t + 1) for t in range(1, T)]), rel=1e-12)
    assert r["first_uniform"] == pytest.approx(np.mean([min(t + 1, SK.N_FIRST) / (t + 1) for t in range(1, T)]),
                                               rel=1e-12)
    # The same numbers from the probabilities computed block by block, by hand.
    cos, sin = rope_angles(T, CFG.head_dim, CFG.rope_base)
    with torch.no_grad():
        x = net.tok_emb(torch.tensor([ids]))
        for i, b in enumerate(net.blocks):
            p, _ = SK.attention_probs(b.attn, b.attn_norm(x), cos, sin)
            p = p[0].numpy()
            for h in range(CFG.n_head):
                assert r["sink"][i][h] == pytest.approx(np.mean([p[h, t, 0] for t in range(1, T)]), abs=1e-7)
                assert r["self"][i][h] == pytest.approx(np.mean([p[h, t, t] for t in range(1, T)]), abs=1e-7)
                assert r["first"][i][h][0] == pytest.approx(r["sink"][i][h], abs=1e-7)
            x = b(x, cos, sin)
    # The hooks are gone.
    assert all(not b.attn._forward_hooks for b in net.blocks)


def test_bad_input_is_refused():
    net = _toy()
    with pytest.raises(ValueError, match="ids must hold at least 2 tokens"):
        SK.measure_ids(SimpleNamespace(net=net), [4])
    cos, sin = rope_angles(4, CFG.head_dim, CFG.rope_base)
    with pytest.raises(ValueError, match=r"x must be a \(batch, tokens, 32\) tensor"):
        SK.attention_probs(net.blocks[0].attn, torch.zeros(4, CFG.d), cos, sin)
    d = {"n_tokens": 4, "texts": [{"sink": [[0.5]] * 3, "self": [[0.1]] * 3, "first": [[[0.5, 0, 0, 0]]] * 3,
                                   "uniform": 0.4, "first_uniform": 1.0, "recon_max_abs": 0.0}] * 2}
    for bad in (0, 3, True, 1.5):
        with pytest.raises(ValueError, match=r"from_layer must be an int in \[1, 3\)"):
            SK.summary(d, from_layer=bad)
    s = SK.summary(d, from_layer=1)
    assert s["mean"] == 0.5 and s["heads_over_half"] == 0 and s["n_heads"] == 2


# ---------------------------------------------------------------- real weights


def test_the_real_probabilities_match_sdpa_and_the_cache(real_models):
    from normref.experiments.normfree import N_TOKENS, _tokens, texts

    m = real_models("smollm2-135m")
    d = SK.sink()
    assert d["n_tokens"] == N_TOKENS and d["n_layer"] == 30 and d["n_head"] == 9
    assert [t["id"] for t in d["texts"]] == [t["id"] for t in texts()["texts"]]
    # Every block of every text rebuilt the module's output to float32 tolerance (the outputs are O(1..10)).
    assert max(t["recon_max_abs"] for t in d["texts"]) < 5e-4
    # A few blocks of one text, checked directly (rows sum to 1; the rebuilt output is SDPA's).
    ids = _tokens(m, texts()["texts"][0]["text"])
    net = m.net
    cos, sin = rope_angles(len(ids), net.cfg.head_dim, net.cfg.rope_base)
    with torch.no_grad():
        x = net.tok_emb(torch.tensor([ids]))
        for i, b in enumerate(net.blocks):
            if i in (0, 12, 24):
                _check_probs(b.attn, b.attn_norm(x), cos, sin)
            x = b(x, cos, sin)
    # A re-run of that text gives the cached numbers.
    r = SK.measure_ids(m, ids)
    np.testing.assert_allclose(r["sink"], d["texts"][0]["sink"], atol=1e-6)
    np.testing.assert_allclose(r["self"], d["texts"][0]["self"], atol=1e-6)


def test_the_summary_is_in_range_and_says_what_it_measures(real_models):
    s = SK.summary()
    for k in ("mean", "text_min", "text_max", "self", "uniform", "early", "first", "first_text_min",
              "first_uniform", "max_layer_mean", "runner_up_mean", "min_head"):
        assert math.isfinite(s[k]) and 0 <= s[k] <= 1, k
    assert s["text_min"] <= s["mean"] <= s["text_max"]
    assert s["mean"] <= s["first"] <= 1 and s["uniform"] < s["first_uniform"]
    assert s["runner_up_mean"] <= s["max_layer_mean"] and s["max_layer"] >= s["from_layer"]
    assert 0 <= s["heads_over_half"] <= s["n_heads"] == (s["n_layer"] - s["from_layer"]) * s["n_head"]
    # The finding the values state: position 0 draws several times the uniform share past the first blocks,
    # while those first blocks give it about the uniform share or less.
    assert s["mean"] > 5 * s["uniform"] and s["early"] < 2 * s["uniform"]


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_values_render(real_models, lang):
    from normref import values

    names = [n for n in values.names() if n.startswith("sink.")]
    assert len(names) >= 10
    for n in names:
        text = values.get(n, lang)
        num = float(text.rstrip("%").replace("\u2009", ""))
        assert math.isfinite(num) and num >= 0, (n, text)
        if text.endswith("%"):
            assert num <= 100, (n, text)
    tb = values.table("sink.layers", lang)
    assert len(tb.rows) == 30 and [r[0] for r in tb.rows] == [str(i) for i in range(1, 31)]  # blocks from 1, as drop-norm numbers them
