"""normref's norms: agreement with PyTorch, properties, gradients, and bad input."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import normref
from normref import nn as nnr
from normref.stats import l2, mean_l2_per_token, rms, std, variance

RNG = np.random.default_rng(1234)


def _x(shape, dtype=np.float64):
    return RNG.standard_normal(shape).astype(dtype) * 3 + 0.5


# ------------------------------------------------------------------ agreement with torch


@pytest.mark.parametrize("dtype,tol", [(np.float64, 1e-10), (np.float32, 1e-5)])
def test_numpy_rms_norm_matches_torch(dtype, tol):
    x, g = _x((5, 7, 64), dtype), _x((64,), dtype)
    ours = normref.rms_norm(x, gain=g, eps=1e-6)
    tdtype = torch.float64 if dtype == np.float64 else torch.float32
    m = torch.nn.RMSNorm(64, eps=1e-6, dtype=tdtype)
    with torch.no_grad():
        m.weight.copy_(torch.from_numpy(g))
        ref_module = m(torch.from_numpy(x)).numpy()
    ref_fn = torch.nn.functional.rms_norm(torch.from_numpy(x), (64,), torch.from_numpy(g), 1e-6).numpy()
    np.testing.assert_allclose(ours, ref_module, atol=tol, rtol=tol)
    np.testing.assert_allclose(ours, ref_fn, atol=tol, rtol=tol)


@pytest.mark.parametrize("dtype,tol", [(np.float64, 1e-10), (np.float32, 1e-5)])
def test_numpy_layer_norm_matches_torch(dtype, tol):
    x, g, b = _x((4, 33), dtype), _x((33,), dtype), _x((33,), dtype)
    ours = normref.layer_norm(x, gain=g, bias=b, eps=1e-5)
    tdtype = torch.float64 if dtype == np.float64 else torch.float32
    m = torch.nn.LayerNorm(33, eps=1e-5, dtype=tdtype)
    with torch.no_grad():
        m.weight.copy_(torch.from_numpy(g))
        m.bias.copy_(torch.from_numpy(b))
        ref = m(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(ours, ref, atol=tol, rtol=tol)


@pytest.mark.parametrize("path", ["dispatch", "blocked"])
@pytest.mark.parametrize("dtype,tol", [(torch.float64, 1e-10), (torch.float32, 1e-5)])
@pytest.mark.parametrize("shape", [(3, 8), (2, 3, 257), (700, 512), (1, 4096)])
def test_torch_rms_norm_matches_torch_nn(dtype, tol, shape, path, monkeypatch):
    if path == "blocked":  # small inputs would otherwise go to F.rms_norm (normref.nn.SMALL_BYTES)
        monkeypatch.setattr(nnr, "SMALL_BYTES", -1)
    x = torch.randn(shape, dtype=dtype, generator=torch.Generator().manual_seed(0)) * 4
    ours = nnr.RMSNorm(shape[-1], eps=1e-6, dtype=dtype)
    ref = torch.nn.RMSNorm(shape[-1], eps=1e-6, dtype=dtype)
    with torch.no_grad():
        w = torch.rand(shape[-1], dtype=dtype) + 0.5
        ours.weight.copy_(w)
        ref.weight.copy_(w)
        torch.testing.assert_close(ours(x), ref(x), atol=tol, rtol=tol)
        torch.testing.assert_close(nnr.rms_norm(x, None, 1e-6), torch.nn.functional.rms_norm(x, (shape[-1],), None, 1e-6),
                                   atol=tol, rtol=tol)


def _blocked_calls(monkeypatch) -> list:
    """Count calls of the blocked path (the autograd Function) from here on."""
    calls = []
    real = nnr._RMSNormFn.apply
    monkeypatch.setattr(nnr._RMSNormFn, "apply", lambda *a: calls.append(1) or real(*a))
    return calls


def test_small_inference_goes_to_torch_and_training_to_the_blocked_path(monkeypatch):
    calls = _blocked_calls(monkeypatch)
    x, w = torch.randn(4, 64), torch.rand(64) + 0.5
    with torch.no_grad():
        y = nnr.rms_norm(x, w, 1e-6)
    assert calls == [] and torch.equal(y, torch.nn.functional.rms_norm(x, (64,), w, 1e-6))
    # Gradients: always the blocked path with its closed-form backward.
    xg = x.clone().requires_grad_()
    assert "_RMSNormFn" in type(nnr.rms_norm(xg, w).grad_fn).__name__ and calls == [1]
    wg = w.clone().requires_grad_()
    nnr.rms_norm(x, wg)
    assert calls == [1, 1]
    # Under no_grad a parameter's requires_grad does not matter (inference with a module).
    with torch.no_grad():
        nnr.RMSNorm(64)(x)
    assert calls == [1, 1]
    # Above SMALL_BYTES, other dtypes, mixed dtypes: blocked.
    big = torch.randn(nnr.SMALL_BYTES // (4 * 256) + 1, 256)
    nnr.rms_norm(big)
    nnr.rms_norm(x.bfloat16())
    nnr.rms_norm(x.double(), w)
    assert calls == [1] * 5


@pytest.mark.parametrize("bad, words", [
    (float("nan"), "NaN or inf"), (float("inf"), "NaN or inf"), (-float("inf"), "NaN or inf"),
    (3e19, "overflow"),  # finite, but its square overflows float32: rstd 0, a silent row of zeros
])
def test_small_path_checks_like_the_blocked_one(bad, words):
    x = torch.randn(8, 64)
    x[5, 3] = bad
    for path_bytes in (nnr.SMALL_BYTES, -1):
        old, nnr.SMALL_BYTES = nnr.SMALL_BYTES, path_bytes
        try:
            with torch.no_grad(), pytest.raises(ValueError, match=words):
                nnr.rms_norm(x)
            y = nnr.rms_norm(x, check_finite=False)  # unchecked: the row is garbage, the others are not
            torch.testing.assert_close(y[:5], torch.nn.functional.rms_norm(x[:5], (64,), None, 1e-6))
        finally:
            nnr.SMALL_BYTES = old


def test_small_path_keeps_rows_whose_total_is_large_but_finite():
    """The dot over the whole tensor can overflow where no row does: that call must still succeed."""
    x = torch.full((64, 16), 1e18)  # each row's sum of squares 1.6e37 < 3.4e38; all rows together 1.0e39
    with torch.no_grad():
        y = nnr.rms_norm(x)
    torch.testing.assert_close(y, torch.ones(64, 16))


def test_torch_rms_norm_bfloat16_is_close_to_float32_reference():
    """Documented bfloat16 behavior: like HF's LlamaRMSNorm we compute in float32
    and round once, so the result is within one bfloat16 step (2^-8 relative, an
    8-bit significand) of the float32 result on the same bfloat16 inputs; torch's
    own bfloat16 RMSNorm is within two steps of it."""
    x = torch.randn(64, 256, generator=torch.Generator().manual_seed(1)).bfloat16()
    w = (torch.rand(256) + 0.5).bfloat16()
    y16 = nnr.rms_norm(x, w)
    assert y16.dtype == torch.bfloat16
    ref = torch.nn.functional.rms_norm(x.float(), (256,), w.float(), 1e-6)
    torch.testing.assert_close(y16.float(), ref, atol=0, rtol=2**-8)
    theirs = torch.nn.functional.rms_norm(x, (256,), w, 1e-6)
    torch.testing.assert_close(y16.float(), theirs.float(), atol=0, rtol=2**-7)


def test_torch_layer_norm_matches_numpy():
    x = _x((6, 40))
    g, b = _x((40,)), _x((40,))
    m = nnr.LayerNorm(40, dtype=torch.float64)
    with torch.no_grad():
        m.weight.copy_(torch.from_numpy(g))
        m.bias.copy_(torch.from_numpy(b))
        y = m(torch.from_numpy(x)).detach().numpy()
    np.testing.assert_allclose(y, normref.layer_norm(x, g, b), atol=1e-10)


def test_modules_are_initialized_like_torch():
    r, ln = nnr.RMSNorm(16), nnr.LayerNorm(16)
    assert torch.equal(r.weight, torch.ones(16)) and not hasattr(r, "bias")
    assert torch.equal(ln.weight, torch.ones(16)) and torch.equal(ln.bias, torch.zeros(16))
    assert nnr.RMSNorm(8, elementwise_affine=False).weight is None


# ------------------------------------------------------------------ gradients


def test_rms_norm_gradcheck_float64():
    x = torch.randn(3, 5, 16, dtype=torch.float64, requires_grad=True)
    w = torch.randn(16, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda a, b: nnr.rms_norm(a, b, 1e-6), (x, w))
    assert torch.autograd.gradcheck(lambda a: nnr.rms_norm(a, None, 1e-3), (x,))


def test_layer_norm_gradcheck_float64():
    x = torch.randn(4, 12, dtype=torch.float64, requires_grad=True)
    w = torch.randn(12, dtype=torch.float64, requires_grad=True)
    b = torch.randn(12, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda a, c, d: nnr.layer_norm(a, c, d), (x, w, b))


def test_rms_norm_backward_matches_torch_nn():
    x = torch.randn(300, 96, dtype=torch.float64)
    w = torch.rand(96, dtype=torch.float64) + 0.5
    gy = torch.randn(300, 96, dtype=torch.float64)
    xa, wa = x.clone().requires_grad_(), w.clone().requires_grad_()
    nnr.rms_norm(xa, wa).backward(gy)
    xb, wb = x.clone().requires_grad_(), w.clone().requires_grad_()
    torch.nn.functional.rms_norm(xb, (96,), wb, 1e-6).backward(gy)
    torch.testing.assert_close(xa.grad, xb.grad, atol=1e-10, rtol=1e-10)
    torch.testing.assert_close(wa.grad, wb.grad, atol=1e-10, rtol=1e-10)


# ------------------------------------------------------------------ properties (hypothesis)

finite = st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False, width=64)
vectors = st.integers(1, 64).flatmap(lambda d: arrays(np.float64, (d,), elements=finite))
batches = st.tuples(st.integers(1, 4), st.integers(2, 48)).flatmap(
    lambda s: arrays(np.float64, s, elements=finite))


@settings(max_examples=80, deadline=None)
@given(vectors, st.floats(1e-2, 1e3))
def test_scale_invariance(x, c):
    """RMSNorm(c·x) = RMSNorm(x) for c > 0, up to the ε inside the square root."""
    eps = 1e-12
    assume(np.sqrt(np.mean(x * x)) * min(c, 1.0) >= 1e-3)  # ε matters only for near-zero vectors
    np.testing.assert_allclose(normref.rms_norm(c * x, eps=eps), normref.rms_norm(x, eps=eps), atol=1e-6, rtol=1e-6)


@settings(max_examples=80, deadline=None)
@given(batches)
def test_output_rms_is_one_and_l2_is_sqrt_d(x):
    big = np.sqrt(np.mean(x * x, axis=-1)) > 1e-2  # rows far from zero, where ε does not matter
    assume(big.any())
    y = normref.rms_norm(x, eps=1e-12)[big]
    np.testing.assert_allclose(rms(y), 1.0, rtol=1e-6)
    np.testing.assert_allclose(l2(y), np.sqrt(x.shape[-1]), rtol=1e-6)


@settings(max_examples=80, deadline=None)
@given(batches)
def test_layer_norm_is_rms_norm_of_centred_input(x):
    centred = x - x.mean(axis=-1, keepdims=True)
    np.testing.assert_allclose(normref.layer_norm(x, eps=1e-5), normref.rms_norm(centred, eps=1e-5), atol=1e-9)


@settings(max_examples=50, deadline=None)
@given(arrays(np.float64, (16,), elements=st.floats(-10, 10)), st.floats(0.5, 50))
def test_rms_norm_is_not_recentering_invariant(x, shift):
    """Adding a constant to every feature changes RMSNorm's output (LayerNorm's it does not).

    Exception: a constant vector shifted is only rescaled, so we need some spread."""
    assume(np.std(x) >= 1.0)
    np.testing.assert_allclose(normref.layer_norm(x + shift), normref.layer_norm(x), atol=1e-6)
    assert not np.allclose(normref.rms_norm(x + shift), normref.rms_norm(x), atol=1e-3)


def test_stats_helpers():
    x = np.array([[2.0, -1.0, 3.0, 0.0], [1.0, 1.0, 1.0, 1.0]])
    np.testing.assert_allclose(rms(x), [np.sqrt(3.5), 1.0])
    np.testing.assert_allclose(l2(x), [np.sqrt(14), 2.0])
    np.testing.assert_allclose(variance(x), [np.var(x[0]), 0.0])
    np.testing.assert_allclose(std(x), [np.std(x[0]), 0.0])
    assert mean_l2_per_token(x) == pytest.approx((np.sqrt(14) + 2) / 2)
    assert mean_l2_per_token(x, skip_first=True) == pytest.approx(2.0)
    assert rms(torch.tensor([[3.0, 4.0]]))[0] == pytest.approx(np.sqrt(12.5))


# ------------------------------------------------------------------ bad input


@pytest.mark.parametrize(
    "call,exc,words",
    [
        (lambda: normref.rms_norm(np.array([1, 2, 3])), TypeError, "x must be a real floating-point"),
        (lambda: normref.rms_norm(np.array(["a"], dtype=object)), TypeError, "dtype object"),
        (lambda: normref.rms_norm(np.zeros((3, 0))), ValueError, "non-empty last dimension"),
        (lambda: normref.rms_norm(np.float64(2.0)), ValueError, "at least one dimension"),
        (lambda: normref.rms_norm(np.array([1.0, np.nan])), ValueError, "NaN or inf"),
        (lambda: normref.rms_norm(np.array([1.0, np.inf])), ValueError, "NaN or inf"),
        (lambda: normref.rms_norm(np.ones(4), eps=0.0), ValueError, "eps must be a finite number > 0"),
        (lambda: normref.rms_norm(np.ones(4), eps=-1e-6), ValueError, "eps"),
        (lambda: normref.rms_norm(np.ones(4), eps="1e-6"), TypeError, "eps must be a real number"),
        (lambda: normref.rms_norm(np.ones(4), gain=np.ones(3)), ValueError, "gain must have shape (4,)"),
        (lambda: normref.layer_norm(np.ones(4), bias=np.ones(5)), ValueError, "bias must have shape (4,)"),
        (lambda: normref.layer_norm(np.ones(4), gain=np.ones(4, dtype=int)), TypeError, "gain must be a real"),
        (lambda: nnr.rms_norm(torch.ones(2, 4, dtype=torch.int64)), TypeError, "floating-point dtype"),
        (lambda: nnr.rms_norm([1.0, 2.0]), TypeError, "torch.Tensor"),
        (lambda: nnr.rms_norm(torch.ones(2, 0)), ValueError, "non-empty last dimension"),
        (lambda: nnr.rms_norm(torch.ones(4), torch.ones(3)), ValueError, "weight must have shape (4,)"),
        (lambda: nnr.rms_norm(torch.ones(4), eps=0), ValueError, "eps must be a finite number > 0"),
        (lambda: nnr.rms_norm(torch.tensor([1.0, float("nan")])), ValueError, "NaN or inf"),
        (lambda: nnr.rms_norm(torch.tensor([[1.0, 2.0], [float("inf"), 1.0]])), ValueError, "NaN or inf"),
        (lambda: nnr.layer_norm(torch.tensor([1.0, float("inf")])), ValueError, "NaN or inf"),
        (lambda: nnr.layer_norm(torch.ones(4), bias=torch.ones(2)), ValueError, "bias must have shape (4,)"),
        (lambda: nnr.RMSNorm(0), ValueError, "dim must be a positive integer"),
        (lambda: nnr.RMSNorm(8)(torch.ones(2, 4)), ValueError, "last dimension 8"),
        (lambda: nnr.LayerNorm(8, eps=-1), ValueError, "eps"),
    ],
)
def test_bad_input_raises_clear_error(call, exc, words):
    with pytest.raises(exc) as info:
        call()
    assert words in str(info.value)


def test_bad_input_loses_nothing():
    x = np.array([1.0, np.nan, 3.0])
    before = x.copy()
    with pytest.raises(ValueError):
        normref.rms_norm(x)
    np.testing.assert_array_equal(x, before)
