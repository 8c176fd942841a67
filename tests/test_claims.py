"""Claim-specific checks: each keeps one verdict of the claim ledger true.

The claim ledger (normsite/content/claims.yml, the "Claim ledger" page) names, for
every claim, the test that keeps its verdict true. Many point at existing
tests; the ones here check the numbers behind verdicts that no other test
pins down. Tests that need real model weights are marked ``models``.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest

from normref.experiments import toll_booth as tb
from normref.results import bench_cpu

ROOT = Path(__file__).resolve().parent.parent


def test_rmsnorm_is_faster_only_when_both_are_composed():
    """'RMSNorm is faster': composed, yes, at every d; as torch 2.13's CPU functions, no."""
    ratios = [r for r in bench_cpu()["ratios"]
              if r["device"] == "cpu" and r["dtype"] == "float32" and r["mode"] == "forward"]
    composed = [r["rms_over_ln"] for r in ratios if r["family"] == "composed"]
    functional = [r["rms_over_ln"] for r in ratios if r["family"] == "functional"]
    assert composed and functional
    assert max(composed) < 1 < min(functional)


def test_paper_savings_table_adds_up():
    """The 7%–64% table on the performance page: each 'time saved' is (LayerNorm − RMSNorm) / LayerNorm."""
    for lang in ("zh", "en"):
        text = (ROOT / "docs" / lang / "performance.md").read_text(encoding="utf-8")
        section = text[text.index("{ #paper-7-64 }"):text.index("{ #gpus }")]
        rows = re.findall(r"^\|[^|\n]*\|[^|\n]*\|\s*([\d.]+)\s*\|\s*([\d.]+)\s*[(（]([\d.]+)%[)）]\s*\|$", section, re.M)
        assert len(rows) == 4, rows
        saved = []
        for ln, rms, pct in rows:
            ln, rms, pct = float(ln), float(rms), float(pct)
            assert 100 * (ln - rms) / ln == pytest.approx(pct, abs=0.06)
            saved.append(pct)
        assert min(saved) < 7 and 63.5 < max(saved) < 64.5


def _final_losses():
    r = tb.warmup_runs()
    return {k: float(np.mean(r[k][-20:])) for k in ("post/none", "post/warmup", "pre/none", "pre/warmup")}, r


def test_warmup_did_not_rescue_post_ln_in_the_toy(built_cache):
    """The toll-booth page's four training runs, read from the build's cache (build tier)."""
    f, _ = _final_losses()
    # Warmup narrows Post-LN's gap to Pre-LN by less than a third, and Post-LN with warmup stays far above Pre-LN.
    # One seed, so the exact losses are fragile: the older check (the two Post-LN losses within 0.2 nats) passed
    # on an Intel Xeon and failed on an AMD EPYC with torch's AVX2 kernels (0.23); the pages quote the losses as values.
    assert f["post/none"] - f["post/warmup"] < (f["post/none"] - f["pre/none"]) / 3
    assert f["post/warmup"] > f["pre/none"] + 0.5
    # The gap between the two Post-LN runs is not asserted: the committed run (AVX-512 kernels) puts it near 0.004,
    # the same code on AVX2 kernels near 0.23; the page says so and quotes no size for it.


def _verdict(claim_id: str) -> str:
    """The verdict the ledger gives a claim: a test derives it from the numbers and compares."""
    from normsite.ledger import load

    return {c.id: c.verdict for c in load().claims}[claim_id]


def _lab():
    from normref.results.placement import placement_cpu, summary

    rep = placement_cpu()
    s = rep["setting"]
    return rep, s, (lambda v, lr, w: summary()[(v, {"lo": min(s["lrs"]), "hi": max(s["lrs"])}[lr],
                                                     {"none": 0, "warmup": s["warmup"]}[w])])


def test_warmup_helps_post_ln_only_a_little_at_the_low_rate_in_the_lab():
    """The placement lab (several seeds, real text): with warmup at the low learning rate Post-LN gets just
    past the letter-frequency baseline, still far behind Pre-LN; at the high rate warmup does not help.
    Helping somewhat, under one condition: 'holds with a condition'."""
    rep, s, e = _lab()
    unigram = rep["corpus"]["unigram_loss"]
    lo_none, lo_warm = e("post", "lo", "none"), e("post", "lo", "warmup")
    hi_none, hi_warm = e("post", "hi", "none")["final"], e("post", "hi", "warmup")["final"]
    helped = lo_warm["final"] < lo_none["final"] - 0.1 and lo_warm["stalled"] == 0
    a_little = lo_warm["final_max"] > unigram - 0.1  # a seed barely past the baseline
    far_behind = lo_warm["final"] > max(e("pre", "lo", w)["final"] for w in ("none", "warmup")) + 0.3
    not_at_high = all(x > unigram - 0.05 for x in (hi_none, hi_warm))
    assert helped and a_little and far_behind and not_at_high
    assert _verdict("warmup-rescues-post-ln") == "condition"


def test_olmo2_neither_alone_is_not_reproduced_in_the_lab():
    """OLMo 2: "In isolation, neither of these changes yield good results, but together they improve ...".
    In the lab the output norm alone never stalls or diverges and matches Pre-LN at the high rate, and QK-norm
    alone improves Pre-LN there: "neither alone" is not reproduced (only "together is best" is)."""
    rep, s, e = _lab()
    settings = [(lr, w) for lr in ("lo", "hi") for w in ("none", "warmup")]
    output_alone_trains = all(e("output", *x)["stalled"] == 0 and e("output", *x)["diverged"] == 0 for x in settings)
    as_good_as_pre = e("output", "hi", "none")["final"] <= e("pre", "hi", "none")["final"] + 0.02
    qk_alone_helps = e("pre+qk", "hi", "none")["final"] < e("pre", "hi", "none")["final"] - 0.05
    together_best = e("output+qk", "hi", "none")["final"] == min(e(v, "hi", "none")["final"] for v in s["variants"])
    assert together_best
    derived = "not-reproduced" if (output_alone_trains and as_good_as_pre and qk_alone_helps) else "holds"
    assert derived == _verdict("olmo2-neither-alone")


def test_deepnorm_trains_at_the_low_rate_and_stalls_at_the_high_one():
    """DeepNorm: best of all layouts at the low rate without warmup, but most seeds stall at the high rate with
    and without warmup: it stabilizes Post-LN under a condition (the learning rate)."""
    rep, s, e = _lab()
    n = len(s["seeds"])
    best_low = e("deepnorm", "lo", "none")["final"] == min(e(v, "lo", "none")["final"] for v in s["variants"])
    beats_post = e("deepnorm", "lo", "none")["final"] < e("post", "lo", "none")["final"] - 0.3
    stalls_high = e("deepnorm", "hi", "none")["stalled"] > n / 2 and e("deepnorm", "hi", "warmup")["stalled"] > n / 2
    derived = "condition" if (best_low and beats_post and stalls_high) else ("holds" if best_low else "corrected")
    assert derived == _verdict("deepnorm-stabilizes-post-ln")


def test_qk_norm_bounds_logits_by_the_trained_gains():
    """QK-norm bounds the logits by √d_h times the gains: far below the logits without it after training at the
    high rate, in every pairing, but above √d_h, since the gains train. Bounded, with a condition."""
    rep, s, e = _lab()
    bound = math.sqrt(s["d_model"] // s["n_head"])
    lower, above_init_bound = [], []
    for base in ("pre", "peri", "output"):
        for w in ("none", "warmup"):
            with_qk, without = max(e(base + "+qk", "hi", w)["max_logit"]), max(e(base, "hi", w)["max_logit"])
            lower.append(with_qk < without / 5)
            above_init_bound.append(with_qk > bound)
    derived = "condition" if all(lower) and any(above_init_bound) else ("holds" if all(lower) else "corrected")
    assert derived == _verdict("qk-norm-bounds-logits")


@pytest.mark.usefixtures("built_cache")  # reads experiments the build computed (build tier)
def test_mixln_is_less_even_than_pre_ln_by_max_over_min_and_cv():
    """Layer 1 ÷ last makes Mix-LN look more even than Pre-LN; max ÷ min and the CV across layers, which see
    its peak, say the opposite: the claim is corrected."""
    from normref.experiments import placement as pl

    g = pl.grad_per_layer()
    mix, pre = pl.spread(g["mixln"]), pl.spread(g["pre"])
    assert mix["first_over_last"] < pre["first_over_last"]  # what the old sentence read
    less_even = mix["max_over_min"] > pre["max_over_min"] and mix["cv"] > pre["cv"]
    derived = "corrected" if less_even else "holds"
    assert derived == _verdict("mixln-gradients-more-even")


def test_pre_ln_trains_without_warmup_in_the_toy(built_cache):
    """The toll-booth page's four training runs, read from the build's cache (build tier)."""
    f, r = _final_losses()
    assert f["pre/none"] < r["entropy"] + 0.5 < r["uniform"]
    assert f["pre/none"] <= f["pre/warmup"] + 0.2


@pytest.mark.usefixtures("built_cache")  # reads experiments the build computed (build tier)
def test_last_layer_ratio_is_of_order_sqrt_l():
    """Theorem 1's bounds differ by the order √L; the measured last-layer ratio is of that order."""
    g = tb.grad_per_layer()
    ratio = g["post"].mean(0)[-1] / g["pre"].mean(0)[-1]
    root = math.sqrt(len(g["layers"]))
    assert root / 2 < ratio < 2 * root


# ---------------------------------------------------------------- real models (cached measurement)


def _smol(pl="en"):
    from normref.experiments.models import run

    return run("smollm2-135m", pl)


@pytest.mark.models
def test_sub_layer_input_is_sqrt_d_only_before_the_gain():
    from normref.models.measurement import layer_rows

    doc = _smol()
    sqrt_d = doc["sqrt_d"]
    for L in doc["layers"]:
        for n in L["norms"]:
            assert max(abs(v - sqrt_d) for v in n["pre_gain"]["l2_tokens"]) < 1e-3 * sqrt_d
    rows = layer_rows(doc)
    # After the gain the block inputs are far shorter than √d (measured 1.2–9.6 against 24).
    assert max(max(r["n1_post"], r["n2_post"]) for r in rows) < 0.5 * sqrt_d


def _model_dependent(refuted_in_smollm2: bool) -> str:
    """The lesson's numbers are Qwen3.5-0.8B's, which this site does not measure (its measured models are
    normref.experiments.models.MODEL_IDS): refuted in SmolLM2 and unchecked in Qwen3.5 is 'depends on the
    model'; refuted in both would be 'corrected'."""
    from normref.experiments.models import MODEL_IDS

    qwen_checked = any(m.startswith("qwen3.5") or m.startswith("qwen3_5") for m in MODEL_IDS)
    if not refuted_in_smollm2:
        return "holds"
    return "corrected" if qwen_checked else "model-dependent"


@pytest.mark.models
def test_trained_gains_are_not_near_one():
    doc = _smol()
    meds = [n["gain"]["median"] for L in doc["layers"][1:] for n in L["norms"]]
    far = max(meds) < 0.6 and doc["final"]["norms"][0]["gain"]["median"] > 1.3  # measured 0.16–0.41 and 1.78
    assert sum(w < 0 for g in doc["gains"].values() for w in g["weight"]) > 0
    assert _model_dependent(far) == _verdict("gains-stay-near-one")


@pytest.mark.models
def test_stream_grows_by_hundreds_not_ten():
    from normref.experiments.models import summary

    hundreds = all(summary("smollm2-135m", pl)["growth"] > 100 for pl in ("zh", "en"))  # measured ≈ 265 and 297
    assert _model_dependent(hundreds) == _verdict("stream-grows-about-ten-times")


@pytest.mark.models
def test_position_0_plateau_ends_before_the_last_layer():
    from normref.models.measurement import layer_rows
    from normref.values.position0 import plateau

    for pl in ("zh", "en"):
        first, last, peak = plateau(pl)
        rows = layer_rows(_smol(pl))
        assert first >= 1 and last < len(rows) - 1  # not "from layer 12 on": it ends before the last layer
        assert rows[last + 1]["pos0"] < 0.6 * peak
        assert _smol(pl)["final"]["stream_in"]["l2_tokens"][0] < 0.5 * peak


@pytest.mark.models
def test_batch_statistic_fluctuation_is_the_size_of_sampling_noise():
    """PowerNorm's "large fluctuations": the measured CV of a feature's batch variance is what i.i.d. sampling
    gives for any data, √(2/n) for n Gaussian values, within a factor 1.5 at both batch sizes (measured
    29% and 7% against 25% and 8.8%). The fluctuation is real for small batches, but nothing here shows it
    is NLP-specific: 'holds with a condition'."""
    from normref.values import batchnorm as bn

    ratios = []
    for b in bn._sizes():
        r = bn._bn(b)
        ratios.append(r["var_cv"] / math.sqrt(2 / r["tokens_per_batch"]))
    sampling_noise = all(1 / 1.5 < x < 1.5 for x in ratios)
    derived = "condition" if sampling_noise else "holds"
    assert derived == _verdict("batchnorm-statistics-fluctuate")
