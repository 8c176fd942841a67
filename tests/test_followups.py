"""The interview page's follow-up answers: the final norm, its gain, attention logits, DeepNorm's constants."""

from __future__ import annotations

import math

import pytest

from normref import values
from normref.experiments import smollm2_batch as sb
from normref.values.followups import DEEPNORM_DEPTHS, deepnorm_decoder


def test_deepnorm_constants_follow_the_torchscale_formula():
    for m in DEEPNORM_DEPTHS:
        a, b = deepnorm_decoder(m)
        assert a == pytest.approx((2 * m) ** 0.25) and b == pytest.approx((8 * m) ** -0.25)
    # Deeper: a larger residual weight, a smaller initialization.
    alphas = [deepnorm_decoder(m)[0] for m in DEEPNORM_DEPTHS]
    assert alphas == sorted(alphas)
    for bad in (0, -3, 2.5, True, "12"):
        with pytest.raises(ValueError, match="n_layers"):
            deepnorm_decoder(bad)


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_deepnorm_table_on_the_interview_page(lang):
    """The page's table has one row per depth in DEEPNORM_DEPTHS, each cell a value computed by normref."""
    import re
    from pathlib import Path

    page = (Path(__file__).resolve().parent.parent / "docs" / lang / "interview.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| (\d+) \| \[\[value: deepnorm\.alpha_(\d+)\]\] \| \[\[value: deepnorm\.beta_(\d+)\]\] \|$", page, re.M)
    assert [int(r[0]) for r in rows] == list(DEEPNORM_DEPTHS)
    assert all(r[0] == r[1] == r[2] for r in rows)
    assert values.get("deepnorm.alpha_1000", lang) == f"{(2000) ** 0.25:.2f}"


@pytest.mark.models
def test_final_norm_and_its_gain_matter():
    """Measured on SmolLM2: without the final norm the softmax saturates and the loss explodes;
    the gain is not a temperature (no single number replaces it)."""
    f = sb.smollm2_batch()["final_norm"]
    h = f["heads"]
    assert h["trained"]["ce"] < 6  # measured ≈ 4.2 nats on these sentences
    assert h["no_final_norm"]["ce"] > 10 * h["trained"]["ce"] and h["no_final_norm"]["top_p"] > 0.9
    assert h["gain_ones"]["ce"] > h["trained"]["ce"] + 2
    assert f["best_scalar"]["ce"] > h["trained"]["ce"] + 2
    assert h["gain_ones"]["vector_l2"] == pytest.approx(math.sqrt(576), rel=1e-4)
    assert f["median_gain"] > 1 and f["stream_l2"] > 100


@pytest.mark.models
def test_attention_logits_grow_although_inputs_are_normalized():
    a = sb.smollm2_batch()["attn_max"]
    assert set(a) == set(sb.ATTN_LAYERS)
    assert max(v["max"] for v in a.values()) > 10  # measured ≈ 19: e^10 > 20,000 between two keys
    assert all(v["median_head"] <= v["max"] for v in a.values())
