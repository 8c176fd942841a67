"""Layer drop on SmolLM2 (normref.experiments.layer_drop): the cross-entropy, the block swap (on a toy model,
restored even on error), and with the real weights a re-run of a few layers against the cached result."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest
import torch

from normref.experiments import layer_drop as LD


def test_cross_entropy_is_the_mean_next_token_nll():
    rng = np.random.default_rng(0)
    logits, ids = rng.standard_normal((6, 5)), [1, 4, 0, 2, 2, 3]
    logp = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    ref = -np.mean([logp[t, ids[t + 1]] for t in range(5)])  # position t predicts token t+1
    assert LD.cross_entropy(torch.from_numpy(logits), ids) == pytest.approx(ref, rel=1e-12)
    with pytest.raises(ValueError, match="logits must be"):
        LD.cross_entropy(torch.zeros(3, 5), [1, 2])
    with pytest.raises(ValueError, match="logits must be"):
        LD.cross_entropy(torch.zeros(1, 5), [1])


class _Add(torch.nn.Module):
    def __init__(self, v):
        super().__init__()
        self.v = v

    def forward(self, x, *args):
        if self.v is None:
            raise RuntimeError("boom")
        return x + self.v


class _Net(torch.nn.Module):
    def __init__(self, vs):
        super().__init__()
        self.blocks = torch.nn.ModuleList(_Add(v) for v in vs)

    def forward(self, ids):
        x = torch.zeros(1, len(ids), 3, dtype=torch.float64)
        for b in self.blocks:
            x = b(x, None, None)
        return x


def _toy(vs):
    net = _Net(vs)
    # Logits (T, 3) that put x's value on class 0: the loss tells which blocks ran.
    return SimpleNamespace(net=net, forward=lambda ids: (net(ids)[0] * torch.tensor([1.0, 0.0, 0.0], dtype=torch.float64), None))


def test_drop_one_skips_exactly_one_block_and_puts_it_back():
    m = _toy([1.0, 10.0, 100.0])
    blocks = m.net.blocks
    ids = [0, 0, 0]
    def ce(total):  # class 0 has logit `total`, the others 0
        return -(total - math.log(math.exp(total) + 2))
    assert LD.drop_one(m, ids, None) == pytest.approx(ce(111.0))
    assert LD.drop_one(m, ids, 1) == pytest.approx(ce(101.0))
    assert LD.drop_one(m, ids, 2) == pytest.approx(ce(11.0))
    assert m.net.blocks is blocks and "blocks" not in m.net.__dict__
    with pytest.raises(ValueError, match=r"layer must be a block index in \[0, 3\)"):
        LD.drop_one(m, ids, 3)
    with pytest.raises(ValueError, match="layer must be"):
        LD.drop_one(m, ids, True)
    bad = _toy([1.0, None, 3.0])
    with pytest.raises(RuntimeError, match="boom"):
        LD.drop_one(bad, ids, 0)
    assert isinstance(bad.net.blocks, torch.nn.ModuleList) and "blocks" not in bad.net.__dict__


def test_layer_drop_on_the_real_weights(real_models):
    d = LD.layer_drop()
    m = real_models("smollm2-135m")
    ids = m.encode(LD.TEXT)
    assert d["n_tokens"] == len(ids) and d["n_layer"] == 30 == len(d["delta"]) == len(d["stream_l2"])
    # A re-run of the whole model and of a few drops (first, middle, last) agrees with the cached numbers.
    assert LD.drop_one(m, ids, None) == pytest.approx(d["base"], abs=1e-5)
    for i in (0, 14, 29):
        assert LD.drop_one(m, ids, i) == pytest.approx(d["dropped"][i], abs=1e-5)
    assert isinstance(m.net.blocks, torch.nn.ModuleList)
    # The headline, re-derived: the first block costs most; most blocks cost far less than it; the stream
    # grows with depth.
    s = LD.summary(d)
    assert s["max_layer"] == 1 and s["n_small"] >= 20
    assert d["stream_l2"][-1] > 10 * d["stream_l2"][1]


def test_the_layer_drop_figure_draws(real_models):
    import matplotlib.pyplot as plt

    from normref.figures import _style
    from normref.figures.layer_drop import layer_drop_fields, layer_drop_figure

    for lang, theme in (("zh", "dark"), ("en", "light")):
        with _style.context(lang, theme):
            fig = layer_drop_figure(lang, theme)
        assert len(fig.axes) == 2 and len(fig.axes[0].patches) == 30
        plt.close(fig)
    assert layer_drop_fields()["n_layer"] == 30



def test_the_layer_drop_values_share_one_table_per_process(monkeypatch):
    """Every layer_drop.* value reads one table, computed once per process: its split share draws 20,000 random
    splits, and a pass expands the 32 values in both languages."""
    from normref import values
    from normref.values import dropnorm

    split, real = [], dropnorm._split_share
    monkeypatch.setattr(dropnorm, "_split_share", lambda delta: split.append(1) or real(delta))
    monkeypatch.setattr(dropnorm, "_layer_drop", lambda: (
        {"delta": list(np.linspace(0.5, 0.01, 30)), "n_layer": 30, "n_tokens": 10, "stream_l2": list(range(1, 31))},
        {"base": 2.5, "max_delta": 0.5, "max_layer": 1, "top3": [1, 2, 3], "n_small": 4, "small_in_second_half": 3}))
    dropnorm._ld_table.cache_clear()
    try:
        assert values.get("layer_drop.split_share").endswith("%") and values.get("layer_drop.base") == "2.50"
        assert values.get("layer_drop.max_layer") == "1" and len(split) == 1
    finally:
        dropnorm._ld_table.cache_clear()  # the next test reads the real measurement
