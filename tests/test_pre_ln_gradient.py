"""The control experiment of the toll-booth page: why Pre-LN's per-layer gradient falls.

With every branch input detached, the forward pass is unchanged and the stream
gradient is the same at every layer; the per-layer FFN gradient then no longer
falls. These tests keep the page's explanation (and the claim ledger's
verdicts) true.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from normref import values
from normref.experiments import pre_ln_gradient as plg
from normref.experiments import toll_booth as tb


def _slope(y):
    return float(np.polyfit(np.arange(len(y)), y, 1)[0])


# The tests below that check the page's measurement (GRAD's size, 8 seeds: 2 s of CPU) read it from the cache the
# session's build filled (`built_cache`, make test); the everyday tier checks the same code on a small model.


def test_the_setting_is_the_toll_booths_and_detaching_leaves_only_the_identity_path_on_a_small_model():
    """What holds at any size: the as-is FFN rows are the toll-booth experiment's Pre-LN rows, and with the branch
    inputs detached every layer sees the same stream gradient."""
    kw = dict(n_layer=3, d_model=16, n_head=2, vocab_size=8, block_size=5, batch=2, seeds=(0, 1))
    r = plg.pre_ln_gradient_paths.uncached(**kw)
    assert r["ffn"].shape == (2, 3) and r["stream"].shape == r["stream_detached"].shape == (2, 4)
    assert np.allclose(r["ffn"], tb.grad_per_layer.uncached(**kw)["pre"])
    assert np.allclose(r["stream_detached"], r["stream_detached"][:, -1:], rtol=1e-5)
    assert not np.allclose(r["stream"], r["stream"][:, -1:], rtol=1e-5)


def test_pre_ln_falls_slowly_and_post_ln_rises(built_cache):
    """Pre-LN is not flat in our setting: it falls slowly (layer 1 ≈ 2.4× the last), while Post-LN rises."""
    r, g = plg.pre_ln_gradient_paths(), tb.grad_per_layer()
    assert np.allclose(r["ffn"], g["pre"])  # exactly the toll-booth experiment's Pre-LN rows
    pre, post = r["ffn"].mean(0), g["post"].mean(0)
    assert _slope(pre) < 0 and 1.5 < pre[0] / pre[-1] < 4
    assert _slope(post) > 0


def test_detaching_branch_inputs_flattens_the_stream_gradient(built_cache):
    r = plg.pre_ln_gradient_paths()
    L = len(r["layers"])
    assert r["stream"].shape == r["stream_detached"].shape == (len(tb.GRAD["seeds"]), L + 1)
    # As is: the stream gradient is largest at the input (it collects a term from every branch).
    s = r["stream"].mean(0)
    assert np.all(np.diff(s) < 0) and s[0] > 2 * s[-1]
    # Detached: only the identity path is left, so every layer sees the same stream gradient.
    sd = r["stream_detached"]
    assert np.allclose(sd, sd[:, -1:], rtol=1e-5)
    # ... and the per-layer FFN gradient goes flat to rising (measured: last ≈ 1.3 × first), not falling.
    fd = r["ffn_detached"].mean(0)
    assert _slope(fd) >= 0 and fd[-1] >= 0.95 * fd[0]
    assert fd[-1] < 2 * fd[0]  # "flat to rising", not a Post-LN-like growth


def test_ffn_inputs_grow_more_alike_with_depth(built_cache):
    cos = plg.pre_ln_gradient_paths()["ffn_input_cos"].mean(0)
    assert -0.1 < cos[0] < 0.2 and cos[-1] > cos[0] + 0.2


def test_detach_hooks_keep_the_forward_pass():
    torch.manual_seed(0)
    model = tb._model("pre", 0, n_layer=3, d_model=16, n_head=2, vocab_size=8, block_size=5)
    idx = torch.randint(8, (2, 5))
    before, _ = model(idx)
    handles = plg.detach_branch_inputs(model)
    assert len(handles) == 2 * 3
    after, _ = model(idx)
    assert torch.equal(before, after)
    for h in handles:
        h.remove()


def test_bad_seeds_are_rejected():
    with pytest.raises(ValueError, match="seeds"):
        plg.pre_ln_gradient_paths.uncached(seeds=())


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_values_render(lang, built_cache):
    for name in ("pre_ln_grad.detached_growth", "pre_ln_grad.stream_first_over_last",
                 "pre_ln_grad.stream_detached_spread", "pre_ln_grad.ffn_input_cos_first",
                 "pre_ln_grad.ffn_input_cos_last", "pre_ln_grad.sqrt_layers"):
        assert values.get(name, lang)
    assert float(values.get("pre_ln_grad.detached_growth", lang)) > 1
