"""normref.equivalence: the numpy Pre-LN model equals the torch one, and its Pre-RMSNorm conversion
(Jiang et al. 2023) computes the same logits to 1e-10 in float64, on random small models."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from normref import equivalence as E
from normref.blocks import TinyConfig, TinyTransformer


def _model(seed, n_layer=3, d_model=16, n_head=2, vocab=11, T=8, **kw):
    """A random Pre-LN TinyTransformer in float64, with gains, norm biases and linear biases away from 1 and 0
    (the default init zeroes biases, which would let a wrong bias fold go unseen)."""
    torch.manual_seed(seed)
    model = TinyTransformer(TinyConfig(placement="pre", n_layer=n_layer, d_model=d_model, n_head=n_head,
                                       vocab_size=vocab, block_size=T, **kw)).double()
    gen = torch.Generator().manual_seed(seed + 1)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if ".ln_" in f".{name}" and name.endswith("weight"):
                p.copy_(1 + 0.4 * torch.randn(p.shape, generator=gen, dtype=torch.float64))
            elif name.endswith("bias"):
                p.copy_(0.3 * torch.randn(p.shape, generator=gen, dtype=torch.float64))
        model.wte.weight.add_(1.5)  # token embeddings with a large common mean: the part the conversion removes
    return model


def _idx(seed, vocab=11, T=8, batch=3):
    return np.random.default_rng(seed).integers(0, vocab, (batch, T))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_numpy_forward_equals_the_torch_model(seed):
    model = _model(seed)
    idx = _idx(seed)
    with torch.no_grad():
        ref = model(torch.from_numpy(idx))[0].numpy()
    np.testing.assert_allclose(E.forward(E.from_torch(model), idx), ref, atol=1e-10, rtol=0)


@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 10_000), n_layer=st.integers(1, 4), heads_width=st.sampled_from([(1, 8), (2, 8), (2, 12), (4, 16)]),
       T=st.integers(1, 8))
def test_pre_rmsnorm_conversion_is_exact(seed, n_layer, heads_width, T):
    n_head, d = heads_width
    sd = E.from_torch(_model(seed, n_layer=n_layer, d_model=d, n_head=n_head))
    idx = _idx(seed, T=T)
    y = E.forward(sd, idx)
    rms = E.to_pre_rmsnorm(sd)
    assert np.abs(E.forward(rms, idx, norm="rmsnorm") - y).max() <= 1e-10
    assert np.abs(y).max() > 0.1  # logits of a real size, so 1e-10 is a real check


def test_conversion_makes_the_stream_zero_mean_and_drops_every_norm_parameter():
    sd = E.from_torch(_model(3, n_layer=4))
    idx = _idx(3)
    before = E.stream(sd, idx)
    assert min(np.abs(x.mean(-1)).max() for x in before) > 0.5  # the original stream carries a mean
    rms = E.to_pre_rmsnorm(sd)
    for x in E.stream(rms, idx, norm="rmsnorm"):
        assert np.abs(x.mean(-1)).max() < 1e-12
    assert not [k for k in rms if ".ln_" in f".{k}"]  # gains and biases all folded into the next linear map
    assert "head.bias" in rms and "head.bias" not in sd  # ln_f's β lands in the head
    # Recentering alone (still LayerNorm) already gives the same output: the mean was never read.
    np.testing.assert_allclose(E.forward(rms, idx, norm="layernorm"), E.forward(sd, idx), atol=1e-10, rtol=0)


def test_without_recentering_rmsnorm_is_not_layernorm():
    """The check has teeth: swap LN for RMSNorm on the original weights and the logits move."""
    sd = E.from_torch(_model(4))
    idx = _idx(4)
    rms = E.to_pre_rmsnorm(sd)
    naive = dict(rms, **{k: sd[k] for k in ("wte.weight", "wpe.weight")})  # folded, but embeddings not recentered
    assert np.abs(E.forward(naive, idx, norm="rmsnorm") - E.forward(sd, idx)).max() > 1e-2


def test_conversion_leaves_its_input_alone():
    sd = E.from_torch(_model(5))
    copy = {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in sd.items()}
    E.to_pre_rmsnorm(sd)
    assert sd.keys() == copy.keys()
    assert all(np.array_equal(sd[k], copy[k]) for k in sd)


def test_layernorm_scaling_folds_into_the_gains_and_converts_too():
    model = _model(6, n_layer=4, ln_scaling=True)
    idx = _idx(6)
    with torch.no_grad():
        ref = model(torch.from_numpy(idx))[0].numpy()
    sd = E.from_torch(model)
    np.testing.assert_allclose(E.forward(sd, idx), ref, atol=1e-10, rtol=0)
    assert np.abs(E.forward(E.to_pre_rmsnorm(sd), idx, norm="rmsnorm") - ref).max() <= 1e-10


def test_bad_input_is_rejected_with_the_parameter_named():
    with pytest.raises(TypeError, match="model must be a normref.blocks.TinyTransformer"):
        E.from_torch(torch.nn.Linear(2, 2))
    post = TinyTransformer(TinyConfig(placement="post", n_layer=2, d_model=8, n_head=2, vocab_size=5, block_size=4))
    with pytest.raises(ValueError, match="placement='pre'"):
        E.from_torch(post)
    rms = TinyTransformer(TinyConfig(placement="pre", norm="rmsnorm", n_layer=2, d_model=8, n_head=2, vocab_size=5,
                                     block_size=4))
    with pytest.raises(ValueError, match="norm='layernorm'"):
        E.from_torch(rms)
    qk = TinyTransformer(TinyConfig(placement="pre", qk_norm=True, n_layer=2, d_model=8, n_head=2, vocab_size=5,
                                    block_size=4))
    with pytest.raises(ValueError, match="qk_norm"):
        E.from_torch(qk)
    sd = E.from_torch(_model(7, vocab=11, T=8))
    with pytest.raises(TypeError, match="sd must be a dict"):
        E.to_pre_rmsnorm([1, 2])
    with pytest.raises(ValueError, match="missing 'wte.weight'"):
        E.to_pre_rmsnorm({k: v for k, v in sd.items() if k != "wte.weight"})
    with pytest.raises(ValueError, match="norm must be 'layernorm' or 'rmsnorm'"):
        E.forward(sd, _idx(7), norm="batchnorm")
    with pytest.raises(TypeError, match="idx must be a 2-d integer array"):
        E.forward(sd, np.zeros((2, 3)))
    with pytest.raises(ValueError, match=r"token ids in \[0, 11\)"):
        E.forward(sd, np.full((1, 3), 11))
    with pytest.raises(ValueError, match="this model takes 1..8"):
        E.forward(sd, np.zeros((1, 9), dtype=int))
    with pytest.raises(ValueError, match="an RMSNorm has no bias"):
        E.forward(sd, _idx(7), norm="rmsnorm")  # unconverted: the LN biases are still there
    with pytest.raises(ValueError, match="n_head"):
        E.forward(dict(sd, n_head=0), _idx(7))
