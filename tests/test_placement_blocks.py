"""normref.blocks' placements: each forward against a hand-written reference, DeepNorm's α and β,
QK-norm's bound on the attention logits, gradients to every parameter, and bad input."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F

from normref import blocks as B
from normref.blocks import (BlockConfig, DeepNormBlock, OutputNormBlock, PeriLNBlock, PostLNBlock, PreLNBlock,
                            TinyConfig, TinyTransformer, deepnorm_alpha, deepnorm_beta, make_block, mixln_post_layers)

D, H = 16, 2


# ------------------------------------------------------------------ hand-written references
# Written from the formulas with torch.nn.functional only, reading the block's weights: no normref
# norm, no module forward is reused, so a wiring mistake in a block cannot hide in its reference.


def _norm(m, x):
    if isinstance(m, B.LayerNorm):
        return F.layer_norm(x, (x.shape[-1],), m.weight, m.bias, m.eps)
    return x / torch.sqrt(x.pow(2).mean(-1, keepdim=True) + m.eps) * m.weight  # RMSNorm, ε inside the root


def _attn(a, x):
    Bsz, T, C = x.shape
    W, b = a.qkv.weight, a.qkv.bias
    q, k, v = (x @ W[i * C:(i + 1) * C].T + b[i * C:(i + 1) * C] for i in range(3))
    hd = C // a.n_head
    q, k, v = (t.view(Bsz, T, a.n_head, hd).transpose(1, 2) for t in (q, k, v))
    if hasattr(a, "q_norm"):
        q, k = _norm(a.q_norm, q), _norm(a.k_norm, k)
    s = q @ k.transpose(-2, -1) / math.sqrt(hd)
    s = s.masked_fill(torch.ones(T, T, dtype=torch.bool).triu(1), float("-inf"))
    y = torch.softmax(s, -1) @ v
    return y.transpose(1, 2).reshape(Bsz, T, C) @ a.proj.weight.T + a.proj.bias


def _mlp(m, x):
    return torch.relu(x @ m.fc.weight.T + m.fc.bias) @ m.proj.weight.T + m.proj.bias


def _reference(block, x):
    """The placement's two lines, written out."""
    f, g = (lambda h: _attn(block.attn, h)), (lambda h: _mlp(block.mlp, h))
    n = lambda m, h: _norm(m, h)  # noqa: E731
    if type(block) is PostLNBlock:  # x = LN(x + f(x))
        x = n(block.ln_1, x + f(x))
        return n(block.ln_2, x + g(x))
    if type(block) is PreLNBlock:  # x = x + f(LN(x))
        x = x + f(n(block.ln_1, x))
        return x + g(n(block.ln_2, x))
    if type(block) is PeriLNBlock:  # x = x + LN(f(LN(x)))
        x = x + n(block.ln_1_out, f(n(block.ln_1, x)))
        return x + n(block.ln_2_out, g(n(block.ln_2, x)))
    if type(block) is OutputNormBlock:  # x = x + LN(f(x))
        x = x + n(block.ln_1, f(x))
        return x + n(block.ln_2, g(x))
    if type(block) is DeepNormBlock:  # x = LN(α x + f(x))
        x = n(block.ln_1, block.alpha * x + f(x))
        return n(block.ln_2, block.alpha * x + g(x))
    raise AssertionError(type(block))


def _randomise_norms(model, gen):
    """Gains and biases away from 1 and 0, so a norm that is skipped or swapped changes the output."""
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, (B.LayerNorm, B.RMSNorm)):
                m.weight.copy_(1 + 0.3 * torch.randn(m.weight.shape, generator=gen))
                if getattr(m, "bias", None) is not None:
                    m.bias.copy_(0.2 * torch.randn(m.bias.shape, generator=gen))


CASES = [(p, norm, qk) for p in ("post", "pre", "peri", "output", "deepnorm")
         for norm in ("layernorm", "rmsnorm") for qk in (False, True)]


@pytest.mark.parametrize("placement, norm, qk", CASES)
def test_block_forward_matches_hand_written_reference(placement, norm, qk):
    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(1)
    cfg = BlockConfig(d_model=D, n_head=H, norm=norm, placement=placement, qk_norm=qk)
    block = make_block(cfg, 0, 6)
    _randomise_norms(block, gen)
    x = 3 * torch.randn(2, 5, D, generator=gen)
    with torch.no_grad():
        assert torch.allclose(block(x), _reference(block, x), atol=2e-5, rtol=1e-5)
    assert hasattr(block.attn, "q_norm") is qk


def test_mixln_stack_is_post_then_pre_and_matches_reference():
    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(2)
    cfg = TinyConfig(placement="mixln", n_layer=8, d_model=D, n_head=H, vocab_size=11, block_size=6)
    model = TinyTransformer(cfg)
    _randomise_norms(model, gen)
    kinds = [type(b) for b in model.blocks]
    assert kinds == [PostLNBlock] * 2 + [PreLNBlock] * 6  # a quarter of 8 layers
    idx = torch.randint(11, (2, 6), generator=gen)
    x = model.wte(idx) + model.wpe(torch.arange(6))
    with torch.no_grad():
        for b in model.blocks:
            x = _reference(b, x)
        ref = _norm(model.ln_f, x) @ model.head.weight.T  # the Pre-LN tail needs the final norm
        assert torch.allclose(model(idx)[0], ref, atol=5e-5, rtol=1e-5)


@pytest.mark.parametrize("n, expected", [(1, 1), (4, 1), (8, 2), (12, 3), (48, 12)])
def test_mixln_split_is_a_quarter(n, expected):
    assert mixln_post_layers(n) == expected  # the official README: POST_NUM=3 for 12 layers
    assert mixln_post_layers(n, 0.5) == max(1, round(n / 2))


@pytest.mark.parametrize("placement, final_norm", [("post", False), ("deepnorm", False), ("pre", True), ("peri", True),
                                                   ("output", True), ("mixln", True)])
def test_final_norm_only_where_the_stream_is_not_normalized(placement, final_norm):
    model = TinyTransformer(TinyConfig(placement=placement, n_layer=4, d_model=D, n_head=H, vocab_size=7, block_size=4))
    assert isinstance(model.ln_f, torch.nn.Identity) is not final_norm


# ------------------------------------------------------------------ DeepNorm


@pytest.mark.parametrize("n", [1, 6, 12, 18, 100, 1000])
def test_deepnorm_alpha_beta_follow_the_decoder_only_formulas(n):
    # torchscale/architecture/decoder.py: alpha = (2N)^(1/4); weights divided by (8N)^(1/4).
    assert deepnorm_alpha(n) == pytest.approx(math.pow(2.0 * n, 0.25), rel=1e-12)
    assert deepnorm_beta(n) == pytest.approx(1 / math.pow(8.0 * n, 0.25), rel=1e-12)
    # α grows and β shrinks with depth, and α·β = 4^{-1/4} for every N.
    assert deepnorm_alpha(n) * deepnorm_beta(n) == pytest.approx(4 ** -0.25)


def test_deepnorm_values_for_known_depths():
    assert deepnorm_alpha(8) == pytest.approx(2.0)  # (16)^(1/4)
    assert deepnorm_beta(2) == pytest.approx(0.5)  # (16)^(-1/4)
    assert deepnorm_alpha(1000) == pytest.approx(2000 ** 0.25)


def test_deepnorm_scales_ffn_v_and_out_but_not_q_k():
    """Same seed, same draws: DeepNorm's weights are Post-LN's times β exactly where DeepNet says."""
    kw = dict(n_layer=6, d_model=D, n_head=H, vocab_size=9, block_size=4)
    torch.manual_seed(3)
    post = TinyTransformer(TinyConfig(placement="post", **kw))
    torch.manual_seed(3)
    deep = TinyTransformer(TinyConfig(placement="deepnorm", **kw))
    beta = deepnorm_beta(6)
    for bp, bd in zip(post.blocks, deep.blocks):
        assert bd.alpha == pytest.approx(deepnorm_alpha(6)) and bd.beta == pytest.approx(beta)
        for name in ("mlp.fc.weight", "mlp.proj.weight", "attn.proj.weight"):
            assert torch.allclose(bd.get_parameter(name), beta * bp.get_parameter(name)), name
        Wp, Wd = bp.attn.qkv.weight, bd.attn.qkv.weight
        assert torch.equal(Wd[:2 * D], Wp[:2 * D])  # q and k: gain 1
        assert torch.allclose(Wd[2 * D:], beta * Wp[2 * D:])  # v: β
    assert torch.equal(deep.wte.weight, post.wte.weight)


def test_deepnorm_block_needs_the_depth():
    with pytest.raises(ValueError, match="n_layer"):
        make_block(BlockConfig(placement="deepnorm"))
    with pytest.raises(ValueError, match="n_layer"):
        make_block(BlockConfig(placement="mixln"), n_layer=4)
    with pytest.raises(ValueError, match="layer must be"):
        make_block(BlockConfig(placement="mixln"), 4, 4)
    with pytest.raises(ValueError, match="n_layer must be a positive integer"):
        deepnorm_alpha(0)


# ------------------------------------------------------------------ QK-norm


@pytest.mark.parametrize("norm", ["rmsnorm", "layernorm"])
def test_qk_norm_bounds_attention_logits_by_the_gains(norm):
    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(4)
    hd = D // H
    cfg = BlockConfig(d_model=D, n_head=H, norm=norm, qk_norm=True)
    attn = B.Attention(cfg)
    x = 1000 * torch.randn(3, 7, D, generator=gen)  # a huge input: without QK-norm the logits explode
    for gq, gk in ((1.0, 1.0), (2.5, 0.7), (4.0, 3.0)):
        with torch.no_grad():
            attn.q_norm.weight.fill_(gq)
            attn.k_norm.weight.fill_(gk)
            if norm == "layernorm":
                attn.q_norm.bias.zero_()
                attn.k_norm.bias.zero_()
            s = attn.logits(x)
        seen = s[torch.isfinite(s)]
        # |q̂·k̂|/√d_h ≤ ‖q̂‖‖k̂‖/√d_h = (√d_h·g_q)(√d_h·g_k)/√d_h = √d_h·g_q·g_k (ε only lowers it)
        bound = math.sqrt(hd) * gq * gk
        assert seen.abs().max() <= bound * (1 + 1e-5)
        assert seen.abs().max() > 0.3 * bound  # and it is a real bound, not a loose one
    # Per-dimension gains: the bound is √d_h · max|g_q ⊙ g_k|.
    with torch.no_grad():
        attn.q_norm.weight.copy_(torch.linspace(-2, 3, hd))
        attn.k_norm.weight.copy_(torch.linspace(1, 0.5, hd))
        s = attn.logits(x)
    g = (attn.q_norm.weight * attn.k_norm.weight).abs().max().item()
    assert s[torch.isfinite(s)].abs().max() <= math.sqrt(hd) * g * (1 + 1e-5)
    # Without QK-norm the same input gives logits thousands of times larger.
    plain = B.Attention(BlockConfig(d_model=D, n_head=H, norm=norm))
    with torch.no_grad():
        raw = plain.logits(x)
    assert raw[torch.isfinite(raw)].abs().max() > 1000 * math.sqrt(hd)


def test_attention_logits_agree_with_the_forward():
    torch.manual_seed(5)
    for qk in (False, True):
        attn = B.Attention(BlockConfig(d_model=D, n_head=H, qk_norm=qk))
        x = torch.randn(2, 6, D)
        with torch.no_grad():
            s = attn.logits(x)
            _, _, v = attn.heads(x)
            y = (torch.softmax(s, -1) @ v).transpose(1, 2).reshape(2, 6, D)
            assert torch.allclose(attn.proj(y), attn(x), atol=1e-5)
        assert torch.isinf(s[..., 0, 1:]).all()  # causal: the first token sees only itself


# ------------------------------------------------------------------ gradients and compatibility


@pytest.mark.parametrize("placement", B.PLACEMENTS)
@pytest.mark.parametrize("qk", [False, True])
def test_gradients_reach_every_parameter(placement, qk):
    torch.manual_seed(6)
    model = TinyTransformer(TinyConfig(placement=placement, qk_norm=qk, n_layer=4, d_model=D, n_head=H,
                                       vocab_size=13, block_size=8))
    _randomise_norms(model, torch.Generator().manual_seed(7))
    idx = torch.randint(13, (4, 9))
    _, loss = model(idx[:, :-1], idx[:, 1:])
    loss.backward()
    for name, p in model.named_parameters():
        assert p.grad is not None, name
        assert torch.isfinite(p.grad).all(), name
        assert p.grad.abs().sum() > 0, name


def test_post_and_pre_keep_their_parameter_names_and_order():
    """The toll-booth experiments and snippets address these names; a seed must give the same weights."""
    cfg = BlockConfig(d_model=D, n_head=H)
    names = {p: [n for n, _ in make_block(BlockConfig(d_model=D, n_head=H, placement=p)).named_parameters()]
             for p in ("post", "pre")}
    assert names["post"] == ["attn.qkv.weight", "attn.qkv.bias", "attn.proj.weight", "attn.proj.bias", "ln_1.weight",
                             "ln_1.bias", "mlp.fc.weight", "mlp.fc.bias", "mlp.proj.weight", "mlp.proj.bias",
                             "ln_2.weight", "ln_2.bias"]
    assert names["pre"][:2] == ["ln_1.weight", "ln_1.bias"]
    assert cfg.qk_norm is False and cfg.placement == "pre"
    # Every placement draws the same linear weights from one seed (DeepNorm then scales some by β).
    kw = dict(n_layer=3, d_model=D, n_head=H, vocab_size=9, block_size=4)
    lin = {}
    for p in ("post", "pre", "peri", "output", "mixln"):
        torch.manual_seed(8)
        m = TinyTransformer(TinyConfig(placement=p, **kw))
        lin[p] = [mod.weight for mod in m.modules() if isinstance(mod, torch.nn.Linear)]
    for p in lin:
        assert all(torch.equal(a, b) for a, b in zip(lin[p], lin["post"])), p


@pytest.mark.parametrize("kw, exc, match", [
    (dict(placement="sandwich"), ValueError, "placement must be one of"),
    (dict(qk_norm="yes"), TypeError, "qk_norm must be True or False"),
    (dict(mixln_post=0.0), ValueError, "mixln_post must be a fraction"),
    (dict(mixln_post=1.5), ValueError, "mixln_post must be a fraction"),
])
def test_block_config_rejects_bad_placement_options(kw, exc, match):
    with pytest.raises(exc, match=match):
        BlockConfig(**kw)
