"""normref.moe: LatentMoE with and without K3's RMSNorm before W↑ (eq. 11)."""

from __future__ import annotations

import re

import pytest
import torch
import torch.nn.functional as F

from normref.moe import LatentMoE, LatentMoEConfig

SMALL = dict(d_model=16, d_latent=8, n_experts=6, top_k=2, d_expert=12, n_shared=2, d_shared=20)


def make(seed=0, **kw):
    torch.manual_seed(seed)
    return LatentMoE(LatentMoEConfig(**{**SMALL, **kw}))


@pytest.mark.parametrize("normalize", [True, False])
@pytest.mark.parametrize("shape", [(5, 16), (2, 7, 16), (1, 1, 3, 16)])
def test_shapes(normalize, shape):
    m = make(normalize_latent=normalize)
    x = torch.randn(*shape)
    y, aux = m(x, return_aux=True)
    T = x.numel() // 16
    assert y.shape == x.shape
    assert aux.u.shape == aux.u_in.shape == (T, 8)
    assert aux.weights.shape == aux.indices.shape == (T, 2)
    assert aux.routed.shape == aux.shared.shape == (T, 16)
    torch.testing.assert_close(y.reshape(T, 16), aux.routed + aux.shared)
    torch.testing.assert_close(m(x), y)  # return_aux does not change the output


@pytest.mark.parametrize("temperature", [0.1, 1.0, 10.0])
def test_routing_weights_sum_to_one(temperature):
    _, aux = make(temperature=temperature)(torch.randn(50, 16), return_aux=True)
    assert (aux.weights > 0).all()
    torch.testing.assert_close(aux.weights.sum(-1), torch.ones(50))
    assert (aux.indices[:, 0] != aux.indices[:, 1]).all()  # k distinct experts per token


def test_normalized_u_has_rms_one_before_gain():
    m = make(normalize_latent=True)
    with torch.no_grad():
        m.norm.weight.copy_(torch.rand(8) * 3 + 0.5)  # a non-trivial gain, as after training
        x = torch.randn(40, 16) * torch.logspace(0, 2, 40)[:, None]  # tokens of very different size (tiny ones would meet ε)
        _, aux = m(x, return_aux=True)
    u_hat = aux.u_in / m.norm.weight  # undo the gain
    rms_hat = u_hat.square().mean(-1).sqrt()
    ms = aux.u.square().mean(-1)
    # Exactly sqrt(ms / (ms + eps)): 1, up to ε, for every token whatever its size.
    torch.testing.assert_close(rms_hat, (ms / (ms + 1e-6)).sqrt(), rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(rms_hat, torch.ones(40), rtol=0, atol=0.01)
    # ...while u itself varies from token to token, and without the norm W↑ sees u as is
    assert aux.u.norm(dim=-1).std() > 0.1 * aux.u.norm(dim=-1).mean()
    m_off = make(normalize_latent=False)
    _, aux_off = m_off(x, return_aux=True)
    assert aux_off.u_in is aux_off.u


def test_gradients_reach_selected_experts_only():
    m = make(n_experts=8, top_k=2)
    x = torch.randn(3, 16)
    y, aux = m(x, return_aux=True)
    y.square().sum().backward()
    chosen = set(aux.indices.flatten().tolist())
    assert 0 < len(chosen) < 8  # 3 tokens × 2 experts cannot cover all 8
    for e, expert in enumerate(m.experts):
        grads = [p.grad for p in expert.parameters()]
        if e in chosen:
            assert all(g is not None and g.abs().sum() > 0 for g in grads), f"expert {e} chosen but no gradient"
        else:
            assert all(g is None or not g.any() for g in grads), f"expert {e} not chosen but got a gradient"
    for p in (m.router.weight, m.down.weight, m.up.weight, m.norm.weight, *m.shared.parameters()):
        assert p.grad is not None and p.grad.abs().sum() > 0


@pytest.mark.parametrize("normalize", [True, False])
def test_dense_reference_when_every_expert_is_chosen(normalize):
    m = make(n_experts=5, top_k=5, temperature=0.7, normalize_latent=normalize)
    x = torch.randn(2, 9, 16)
    y = m(x)
    # Dense reference, written independently: every expert on every token, softmax over all.
    xf = x.reshape(-1, 16)
    p = F.softmax(m.router(xf) / 0.7, dim=-1)  # (T, N)
    z = m.down(xf)
    outs = torch.stack([ex(z) for ex in m.experts], dim=1)  # (T, N, ℓ)
    u = (p[..., None] * outs).sum(1)
    if normalize:
        u = u / u.square().mean(-1, keepdim=True).add(1e-6).sqrt()
    ref = m.up(u) + sum(s(xf) for s in m.shared)
    torch.testing.assert_close(y.reshape(-1, 16), ref, rtol=1e-5, atol=1e-5)


def test_no_shared_experts():
    m = make(n_shared=0)
    y, aux = m(torch.randn(4, 16), return_aux=True)
    assert not aux.shared.any()
    torch.testing.assert_close(y, aux.routed)


@pytest.mark.parametrize(
    "kw, exc, words",
    [
        (dict(top_k=7), ValueError, "top_k"),
        (dict(top_k=0), ValueError, "top_k"),
        (dict(d_latent=0), ValueError, "d_latent"),
        (dict(d_latent=-3), ValueError, "d_latent"),
        (dict(d_model=0), ValueError, "d_model"),
        (dict(n_shared=-1), ValueError, "n_shared"),
        (dict(temperature=0.0), ValueError, "temperature"),
        (dict(d_latent=8.0), TypeError, "d_latent"),
        (dict(normalize_latent=1), TypeError, "normalize_latent"),
    ],
)
def test_bad_config(kw, exc, words):
    with pytest.raises(exc, match=words):
        LatentMoEConfig(**{**SMALL, **kw})


def test_bad_input():
    m = make()
    with pytest.raises(ValueError, match="d_model=16"):
        m(torch.randn(4, 15))
    with pytest.raises(ValueError, match="d_model"):
        m(torch.tensor(1.0))
    with pytest.raises(TypeError, match="floating-point"):
        m(torch.ones(4, 16, dtype=torch.long))
    with pytest.raises(TypeError, match="floating-point"):
        m([[0.0] * 16])
    with pytest.raises(TypeError, match="LatentMoEConfig"):
        LatentMoE(dict(SMALL))


# ----------------------------------------------------------------------------- experiments and the page
# These protect what the page says in words (orderings, not numbers: the numbers are inserted by the build).


@pytest.mark.usefixtures("built_cache")  # reads experiments the build computed (build tier)
def test_u_spread_supports_the_page():
    from normref.experiments.moe import u_spread

    r = u_spread()
    b = r["base_run"]
    assert b["cv_u_normed"] < 0.01  # RMSNorm(u) has the same length for every token, up to ε
    assert b["cv_routed_norm"] < b["cv_shared"] < b["cv_routed_raw"]  # "steadier than the shared branch"
    for sw in r["sweeps"].values():
        for run in sw["runs"]:
            assert run["cv_routed_norm"] < run["cv_u"]
    sigma = dict(zip(r["sweeps"]["expert_spread"]["values"], r["sweeps"]["expert_spread"]["runs"]))
    assert sigma[0.0]["cv_u"] < sigma[1.0]["cv_u"]  # unequal experts widen the spread
    tau = dict(zip(r["sweeps"]["temperature"]["values"], r["sweeps"]["temperature"]["runs"]))
    assert tau[max(tau)]["cv_u"] < tau[min(tau)]["cv_u"]  # sharper routing widens it
    assert b["ratio_raw"] < 1 < b["ratio_norm"]  # the initialization effect the page warns about


def test_toy_training_supports_the_page(built_cache):
    """At the page's size: 12 training runs, which the build computes for the page (read here from its cache)."""
    import numpy as np

    from normref.experiments.moe import toy_training

    r = toy_training()
    lr0 = r["lrs"][0]
    curve = {n: np.mean([x["val"] for x in r["runs"] if x["lr"] == lr0 and x["normalize"] == n], axis=0)
             for n in (False, True)}
    assert (curve[True][1:] < curve[False][1:]).all()  # "stays below" at the smaller learning rate
    for x in r["runs"]:
        assert np.isfinite(x["val"]).all() and x["val"][-1] < r["predict_mean_mse"]  # nothing blew up, all learnt


def test_toy_training_on_a_small_setting_is_deterministic_and_finite():
    """The training code in the fast tier: one seed, one learning rate, a few steps; both variants from the
    same weights, evaluated every eval_every steps, the same numbers on a second run."""
    import numpy as np

    from normref.experiments.moe import ToyConfig, toy_training

    cfg = ToyConfig(steps=6, batch=16, n_val=32, eval_every=3)
    r = toy_training.uncached(seeds=(0,), lrs=(1e-2,), cfg=cfg)
    assert [(x["lr"], x["seed"], x["normalize"]) for x in r["runs"]] == [(1e-2, 0, False), (1e-2, 0, True)]
    for x in r["runs"]:
        assert x["steps"] == [0, 3, 6] and np.isfinite(x["val"]).all()
    assert r["cfg"]["steps"] == 6 and r["predict_mean_mse"] > 0
    assert toy_training.uncached(seeds=(0,), lrs=(1e-2,), cfg=cfg) == r


def test_experiment_bad_input():
    from normref.experiments.moe import toy_training, u_spread

    with pytest.raises(ValueError, match="n_tokens"):
        u_spread.uncached(n_tokens=0)
    with pytest.raises(ValueError, match="lrs"):
        toy_training.uncached(lrs=(-1.0,))
    with pytest.raises(ValueError, match="seeds"):
        toy_training.uncached(seeds=())


def test_page_states_what_normref_computes(site):
    from normref import values

    from support import lang_root

    for lang in ("zh", "en"):
        html = (lang_root(site, lang) / "k3-latentmoe" / "index.html").read_text(encoding="utf-8")
        for name in ("moe.cv_u", "moe.cv_u_normed", "moe.cv_routed_raw", "moe.cv_routed_norm", "moe.cv_shared",
                     "moe.train.change0", "moe.train.wins0", "moe.train.change1", "moe.train.wins1"):
            assert values.get(name, lang) in html, (lang, name)
        for fig in ("moe_block", "moe_u_dist", "moe_u_cv", "moe_training"):
            assert fig in html, (lang, fig)
        # Glossary links may wrap words of the quote; compare the text without tags.
        text = re.sub(r"<[^>]+>", "", html)
        assert "whose scale can vary with the selected experts and their routing weights" in text
        assert "[[" not in html
