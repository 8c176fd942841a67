"""DyT and Derf (normref.nn, normref.norms) and LayerNorm Scaling (normref.blocks): each against a
hand-written reference, gradients to every parameter, the block switches, and bad options."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from normref import blocks as B
from normref import nn as nnr
from normref import norms
from normref.blocks import BlockConfig, PreLNBlock, ScaledPreLNBlock, TinyConfig, TinyTransformer, make_block

D, H = 16, 2
RNG = np.random.default_rng(7)


# ------------------------------------------------------------------ hand-written references
# tanh and erf written without np.tanh / math.erf / torch.erf, so a reference cannot share a mistake.


def _tanh(z):
    e = np.exp(-2 * np.abs(z))  # stable for large |z|
    return np.sign(z) * (1 - e) / (1 + e)


def _erf(z):
    """erf(z) = 2Φ(√2·z) − 1: the Gaussian CDF, rescaled to (−1, 1) (torch's ndtr is Φ)."""
    return 2 * torch.special.ndtr(math.sqrt(2) * torch.as_tensor(z, dtype=torch.float64)).numpy() - 1


def _params(d):
    return RNG.standard_normal(d) * 0.5 + 1, RNG.standard_normal(d) * 0.3


def test_numpy_dyt_is_gain_times_tanh_plus_bias():
    x = RNG.standard_normal((3, 5, 12)) * 4
    g, b = _params(12)
    for alpha in (0.05, 0.5, 2.0):
        np.testing.assert_allclose(norms.dyt(x, alpha, g, b), g * _tanh(alpha * x) + b, atol=1e-14)
    np.testing.assert_allclose(norms.dyt(x, 0.5), _tanh(0.5 * x), atol=1e-14)  # no gain, no bias


def test_numpy_derf_is_gain_times_erf_plus_bias():
    x = RNG.standard_normal((4, 9)) * 3
    g, b = _params(9)
    for alpha, s in ((0.5, 0.0), (1.3, -0.4), (0.1, 2.0)):
        np.testing.assert_allclose(norms.derf(x, alpha, s, g, b), g * _erf(alpha * x + s) + b, atol=1e-13)
    assert norms.derf(np.array([0.0]), 1.0)[0] == 0.0  # erf is odd and s = 0 by default


@pytest.mark.parametrize("cls", [nnr.DyT, nnr.Derf])
def test_torch_modules_match_the_numpy_reference(cls):
    x = RNG.standard_normal((2, 7, 12)) * 3
    g, b = _params(12)
    m = cls(12, alpha_init=0.8, dtype=torch.float64)
    with torch.no_grad():
        m.weight.copy_(torch.from_numpy(g))
        m.bias.copy_(torch.from_numpy(b))
        if cls is nnr.Derf:
            m.shift.fill_(0.3)
        y = m(torch.from_numpy(x)).numpy()
    ref = norms.dyt(x, 0.8, g, b) if cls is nnr.DyT else norms.derf(x, 0.8, 0.3, g, b)
    np.testing.assert_allclose(y, ref, atol=1e-12)


def test_initial_values_follow_the_official_code():
    # jiachenzhu/DyT dynamic_tanh.py and zlab-princeton/Derf dynamic_erf.py: α0 = 0.5, s0 = 0, γ = 1, β = 0.
    for m in (nnr.DyT(6), nnr.Derf(6)):
        assert m.alpha.shape == (1,) and m.alpha.item() == 0.5
        assert torch.equal(m.weight, torch.ones(6)) and torch.equal(m.bias, torch.zeros(6))
    assert nnr.Derf(6).shift.item() == 0.0
    assert [n for n, _ in nnr.DyT(6).named_parameters()] == ["alpha", "weight", "bias"]
    assert [n for n, _ in nnr.DyT(6, bias=False).named_parameters()] == ["alpha", "weight"]  # their LLaMA code
    assert [n for n, _ in nnr.Derf(6).named_parameters()] == ["alpha", "weight", "bias", "shift"]


def test_element_wise_unlike_a_norm():
    """Changing one feature changes only that output (a norm's row statistic moves all of them)."""
    x = torch.randn(1, 10, dtype=torch.float64)
    x2 = x.clone()
    x2[0, 3] += 5.0
    for m in (nnr.DyT(10, dtype=torch.float64), nnr.Derf(10, dtype=torch.float64)):
        with torch.no_grad():
            diff = (m(x2) - m(x)).abs()[0]
        assert diff[3] > 0 and torch.count_nonzero(diff) == 1
    rms = nnr.RMSNorm(10, dtype=torch.float64)
    with torch.no_grad():
        assert torch.count_nonzero(rms(x2) - rms(x)) == 10


@pytest.mark.parametrize("cls", [nnr.DyT, nnr.Derf])
def test_gradients_reach_every_parameter_and_pass_gradcheck(cls):
    m = cls(5, alpha_init=0.7, dtype=torch.float64)
    with torch.no_grad():
        m.weight.uniform_(0.5, 1.5)
        m.bias.uniform_(-0.3, 0.3)
    x = torch.randn(3, 5, dtype=torch.float64, requires_grad=True)
    (m(x) ** 2).sum().backward()
    for name, p in m.named_parameters():
        assert p.grad is not None and p.grad.abs().sum() > 0, name
    assert x.grad.abs().sum() > 0
    params = tuple(m.parameters())
    fn = lambda x, *ps: torch.func.functional_call(m, dict(zip([n for n, _ in m.named_parameters()], ps)), (x,))  # noqa: E731
    assert torch.autograd.gradcheck(fn, (x.detach().requires_grad_(),) + tuple(p.detach().requires_grad_() for p in params))


@pytest.mark.parametrize("kw, exc, match", [
    (dict(dim=0), ValueError, "dim must be a positive integer"),
    (dict(dim=True), ValueError, "dim must be a positive integer"),
    (dict(dim=4, alpha_init=0.0), ValueError, "alpha_init must be a finite number > 0"),
    (dict(dim=4, alpha_init=-1), ValueError, "alpha_init must be a finite number > 0"),
    (dict(dim=4, alpha_init=float("nan")), ValueError, "alpha_init"),
    (dict(dim=4, alpha_init="0.5"), TypeError, "alpha_init must be a real number"),
    (dict(dim=4, alpha_init=True), TypeError, "alpha_init must be a real number"),
    (dict(dim=4, bias="yes"), TypeError, "bias must be True or False"),
])
def test_modules_reject_bad_options(kw, exc, match):
    for cls in (nnr.DyT, nnr.Derf):
        with pytest.raises(exc, match=match):
            cls(**kw)


def test_derf_rejects_a_bad_shift_and_both_reject_bad_input():
    with pytest.raises(ValueError, match="shift_init must be a finite number"):
        nnr.Derf(4, shift_init=float("inf"))
    with pytest.raises(TypeError, match="shift_init must be a real number"):
        nnr.Derf(4, shift_init=None)
    for m in (nnr.DyT(4), nnr.Derf(4)):
        with pytest.raises(ValueError, match="last dimension 4"):
            m(torch.randn(2, 5))
        with pytest.raises(TypeError, match="floating-point"):
            m(torch.ones(2, 4, dtype=torch.long))
    with pytest.raises(ValueError, match="alpha must be a finite number > 0"):
        norms.dyt(np.ones(3), -0.5)
    with pytest.raises(TypeError, match="shift must be a real number"):
        norms.derf(np.ones(3), 0.5, "0")
    with pytest.raises(ValueError, match="gain must have shape"):
        norms.dyt(np.ones((2, 3)), 0.5, gain=np.ones(4))


# ------------------------------------------------------------------ the switches in normref.blocks


def _attn(a, x):
    Bsz, T, C = x.shape
    W, b = a.qkv.weight, a.qkv.bias
    q, k, v = (x @ W[i * C:(i + 1) * C].T + b[i * C:(i + 1) * C] for i in range(3))
    hd = C // a.n_head
    q, k, v = (t.view(Bsz, T, a.n_head, hd).transpose(1, 2) for t in (q, k, v))
    s = (q @ k.transpose(-2, -1) / math.sqrt(hd)).masked_fill(torch.ones(T, T, dtype=torch.bool).triu(1), float("-inf"))
    return (torch.softmax(s, -1) @ v).transpose(1, 2).reshape(Bsz, T, C) @ a.proj.weight.T + a.proj.bias


def _mlp(m, x):
    return torch.relu(x @ m.fc.weight.T + m.fc.bias) @ m.proj.weight.T + m.proj.bias


def _dyt(m, x):  # γ tanh(αx) + β, from the formula
    return m.weight * torch.tanh(m.alpha * x) + m.bias


def _ln(m, x):
    return F.layer_norm(x, (x.shape[-1],), m.weight, m.bias, m.eps)


def _randomise(model, gen):
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, (nnr.LayerNorm, nnr.DyT)):
                m.weight.copy_(1 + 0.3 * torch.randn(m.weight.shape, generator=gen))
                m.bias.copy_(0.2 * torch.randn(m.bias.shape, generator=gen))
            if isinstance(m, nnr.DyT):
                m.alpha.fill_(0.3 + torch.rand(1, generator=gen).item())
            if isinstance(m, torch.nn.Linear) and m.bias is not None:
                m.bias.copy_(0.1 * torch.randn(m.bias.shape, generator=gen))


@pytest.mark.parametrize("norm, cls", [("dyt", nnr.DyT), ("derf", nnr.Derf)])
def test_block_config_norm_switch_builds_the_element_wise_map(norm, cls):
    cfg = BlockConfig(d_model=D, n_head=H, norm=norm, alpha_init=0.2, shift_init=0.1, qk_norm=True)
    m = B.make_norm(cfg)
    assert type(m) is cls and m.alpha.item() == pytest.approx(0.2) and m.dim == D
    if cls is nnr.Derf:
        assert m.shift.item() == pytest.approx(0.1)
    block = make_block(cfg)
    assert type(block.ln_1) is cls and type(block.attn.q_norm) is cls and block.attn.q_norm.dim == D // H


def test_pre_ln_block_with_dyt_matches_reference():
    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(1)
    block = make_block(BlockConfig(d_model=D, n_head=H, norm="dyt"))
    _randomise(block, gen)
    x = 3 * torch.randn(2, 5, D, generator=gen)
    with torch.no_grad():
        h = x + _attn(block.attn, _dyt(block.ln_1, x))
        ref = h + _mlp(block.mlp, _dyt(block.ln_2, h))
        assert torch.allclose(block(x), ref, atol=2e-5, rtol=1e-5)


@pytest.mark.parametrize("norm", ["dyt", "derf"])
@pytest.mark.parametrize("placement", ["pre", "post", "peri"])
def test_gradients_reach_every_parameter_with_dyt_and_derf(norm, placement):
    torch.manual_seed(2)
    model = TinyTransformer(TinyConfig(placement=placement, norm=norm, n_layer=3, d_model=D, n_head=H,
                                       vocab_size=13, block_size=8))
    _randomise(model, torch.Generator().manual_seed(3))
    names = [n for n, _ in model.named_parameters()]
    assert sum(n.endswith("alpha") for n in names) >= 2 * 3  # one α per replaced norm
    idx = torch.randint(13, (4, 9))
    model(idx[:, :-1], idx[:, 1:])[1].backward()
    for name, p in model.named_parameters():
        assert p.grad is not None and torch.isfinite(p.grad).all() and p.grad.abs().sum() > 0, name


# ------------------------------------------------------------------ LayerNorm Scaling


def test_ln_scaling_scales_block_l_by_one_over_root_l():
    kw = dict(n_layer=5, d_model=D, n_head=H, vocab_size=11, block_size=6)
    torch.manual_seed(4)
    pre = TinyTransformer(TinyConfig(placement="pre", **kw))
    torch.manual_seed(4)
    lns = TinyTransformer(TinyConfig(placement="pre", ln_scaling=True, **kw))
    assert [type(b) for b in lns.blocks] == [ScaledPreLNBlock] * 5
    assert [b.scale for b in lns.blocks] == pytest.approx([1 / math.sqrt(l) for l in range(1, 6)])
    # The same parameters, in the same order, with the same values: LNS adds no parameter.
    assert [n for n, _ in lns.named_parameters()] == [n for n, _ in pre.named_parameters()]
    assert all(torch.equal(a, b) for a, b in zip(lns.parameters(), pre.parameters()))
    _randomise(lns, torch.Generator().manual_seed(5))
    idx = torch.randint(11, (2, 6))
    x = lns.wte(idx) + lns.wpe(torch.arange(6))
    with torch.no_grad():
        for l, b in enumerate(lns.blocks, start=1):  # x + f(LN(x)/√ℓ), both sub-layers
            x = x + _attn(b.attn, _ln(b.ln_1, x) / math.sqrt(l))
            x = x + _mlp(b.mlp, _ln(b.ln_2, x) / math.sqrt(l))
        ref = _ln(lns.ln_f, x) @ lns.head.weight.T  # the final norm is not scaled (official code)
        assert torch.allclose(lns(idx)[0], ref, atol=5e-5, rtol=1e-5)
        # Layer 1's factor is 1: the first block is plain Pre-LN.
        x0 = torch.randn(2, 6, D)
        plain = PreLNBlock.forward(lns.blocks[0], x0)
        assert torch.equal(lns.blocks[0](x0), plain)


def test_ln_scaling_gradients_reach_every_parameter():
    torch.manual_seed(6)
    model = TinyTransformer(TinyConfig(placement="pre", ln_scaling=True, n_layer=4, d_model=D, n_head=H,
                                       vocab_size=13, block_size=8))
    idx = torch.randint(13, (4, 9))
    model(idx[:, :-1], idx[:, 1:])[1].backward()
    for name, p in model.named_parameters():
        assert p.grad is not None and p.grad.abs().sum() > 0, name


@pytest.mark.parametrize("kw, exc, match", [
    (dict(norm="tanh"), ValueError, "norm must be one of"),
    (dict(alpha_init=0), ValueError, "alpha_init must be a finite number > 0"),
    (dict(alpha_init=float("inf")), ValueError, "alpha_init"),
    (dict(alpha_init="1"), TypeError, "alpha_init must be a real number"),
    (dict(shift_init=float("nan")), ValueError, "shift_init must be a finite number"),
    (dict(shift_init=False), TypeError, "shift_init must be a real number"),
    (dict(ln_scaling=1), TypeError, "ln_scaling must be True or False"),
    (dict(ln_scaling=True, placement="post"), ValueError, "ln_scaling applies to placement 'pre' only"),
    (dict(ln_scaling=True, placement="peri"), ValueError, "ln_scaling"),
])
def test_block_config_rejects_bad_norm_free_options(kw, exc, match):
    with pytest.raises(exc, match=match):
        BlockConfig(**kw)


def test_ln_scaling_block_needs_its_layer():
    cfg = BlockConfig(d_model=D, n_head=H, ln_scaling=True)
    with pytest.raises(ValueError, match="ln_scaling needs layer"):
        make_block(cfg)
    with pytest.raises(ValueError, match="ln_scaling needs layer"):
        make_block(cfg, -1)
    assert make_block(cfg, 3).scale == pytest.approx(0.5)  # layer index 3 is ℓ = 4
