"""The S-curve on SmolLM2's weights (normref.experiments.s_curve): the tanh fit on known curves, bad input,
and, with the real weights, that the data is the model's own norm and what it shows."""

from __future__ import annotations

import numpy as np
import pytest

from normref.experiments import s_curve as S


def test_fit_tanh_recovers_a_known_curve():
    x = np.random.default_rng(0).standard_normal(4000) * 50
    y = 7.0 * np.tanh(0.03 * x)
    f = S.fit_tanh(x, y)
    assert f["a"] == pytest.approx(7.0, rel=1e-4) and f["b"] == pytest.approx(0.03, rel=1e-4)
    assert f["r2_tanh"] > 1 - 1e-9 and f["r2_linear"] < 0.95  # a real S: the line fits it worse


def test_fit_tanh_on_a_line_is_no_better_than_the_line():
    x = np.linspace(-3, 3, 500)
    f = S.fit_tanh(x, 0.4 * x)
    assert f["c"] == pytest.approx(0.4) and f["r2_linear"] == pytest.approx(1.0)
    assert f["r2_tanh"] == pytest.approx(1.0, abs=1e-5)  # tanh can only imitate the line with b → 0
    assert f["b"] * np.abs(x).max() < 0.05


@pytest.mark.parametrize("x, y, match", [
    (np.ones(2), np.ones(2), "same number"),
    (np.ones(5), np.ones(4), "same number"),
    (np.array([1.0, np.nan, 2.0]), np.ones(3), "finite"),
    (np.zeros(4), np.ones(4), "all zeros"),
])
def test_fit_tanh_rejects_bad_input(x, y, match):
    with pytest.raises(ValueError, match=match):
        S.fit_tanh(x, y)


@pytest.mark.parametrize("layers, exc", [(5, TypeError), ("0", TypeError), ((), ValueError), ((30,), ValueError),
                                         ((-1,), ValueError), ((True,), ValueError)])
def test_s_curve_rejects_bad_layers_before_loading_anything(layers, exc):
    with pytest.raises(exc, match="layers must be"):
        S.s_curve(layers)


def test_s_curve_on_the_real_weights(real_models):
    import torch

    d = S.s_curve()
    assert d["model"] == "SmolLM2-135M-Instruct" and d["d"] == 576 and d["n_layer"] == 30
    assert [L["layer"] for L in d["layers"]] == [i + 1 for i in S.LAYERS]
    m = real_models("smollm2-135m")
    assert d["n_tokens"] == len(m.encode(S.TEXT))
    for L in d["layers"]:
        x = np.asarray(L["x"], dtype=np.float64)
        assert x.shape == (d["n_tokens"], 576)
        # "Before the gain" is the model's own norm divided by its gain.
        norm = m.net.blocks[L["layer"] - 1].attn_norm.norm
        with torch.no_grad():
            ref = (norm(torch.from_numpy(x).float()) / norm.weight).double().numpy()
        np.testing.assert_allclose(x / L["rms"][:, None], ref, rtol=2e-4, atol=2e-4)
    by = {L["layer"]: L for L in d["layers"]}
    # What the figure shows, re-derived: at layer 5 the tokens that reach far out are the tokens with a large
    # RMS, and tanh fits the cloud much better than a line, even without position 0 ...
    assert by[5]["corr_peak_rms"] > 0.9
    assert by[5]["fit_rest"]["r2_tanh"] - by[5]["fit_rest"]["r2_linear"] > 0.2
    # ... while at layer 30, without position 0, the cloud is a line (tanh cannot do better),
    assert by[30]["fit_rest"]["r2_tanh"] - by[30]["fit_rest"]["r2_linear"] < 0.01
    # and position 0's RMS there is many times the others': it alone bends the full cloud.
    assert by[30]["pos0_rms_over_median"] > 5
    assert by[30]["fit_all"]["r2_tanh"] - by[30]["fit_all"]["r2_linear"] > 0.2


def test_the_figure_draws_both_rows_in_both_languages(real_models):
    import matplotlib.pyplot as plt

    from normref.figures import _style
    from normref.figures.s_curve import s_curve_fields, s_curve_figure

    for lang, theme in (("zh", "dark"), ("en", "light")):
        with _style.context(lang, theme):
            fig = s_curve_figure(lang, theme)
        axes = fig.axes[:-1]  # the last is the colorbar's
        assert len(fig.axes) == 2 * len(S.LAYERS) + 1
        # each panel's title is its legend's title, above the plot (browser review D3)
        titles = " ".join(a.get_legend().get_title().get_text() for a in axes)
        assert ("第 30 层" in titles) if lang == "zh" else ("layer 30" in titles)
        plt.close(fig)
    f = s_curve_fields()
    assert f["layers"] == "1, 5, 15, 30" and "Q4_1" in f["weights"]
