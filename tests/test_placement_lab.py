"""The placement lab: its initialization measurements (build time), the committed training results
(normref/results/placement-cpu.json) and a re-run of their first steps, the refresh command, the
values and the widget data the page draws."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from dataclasses import asdict
from pathlib import Path

import numpy as np
import pytest

from normref import cache, data, figures, values
from normref.blocks import mixln_post_layers
from normref.experiments import placement as pl
from normref.experiments import toll_booth as tb
from normref.results import placement as results

ROOT = Path(__file__).resolve().parent.parent


# ------------------------------------------------------------------ at initialization (what the page says)


@pytest.mark.usefixtures("built_cache")  # reads experiments the build computed (build tier)
def test_grads_post_and_pre_are_the_toll_booth_numbers():
    g, t = pl.grad_per_layer(), tb.grad_per_layer()
    assert np.array_equal(g["post"], t["post"]) and np.array_equal(g["pre"], t["pre"])
    assert set(pl.VARIANTS) <= set(g) and all(g[v].shape == (len(pl.GRAD["seeds"]), pl.GRAD["n_layer"])
                                              for v in pl.VARIANTS)


@pytest.mark.usefixtures("built_cache")  # reads experiments the build computed (build tier)
def test_grads_at_init_per_placement():
    g = pl.grad_per_layer()
    r = {v: pl.grad_ratio(g, v) for v in pl.VARIANTS}
    assert r["post"] < 0.8  # grows towards the output (the toll-booth page)
    assert r["pre"] > 1.5 and r["peri"] > 1.5  # shrinks with depth
    # DeepNorm: flat (measured 1.00) and far smaller (β shrinks the FFN weights it differentiates).
    deep = g["deepnorm"].mean(0)
    assert 0.9 < r["deepnorm"] < 1.1 and deep.max() / deep.min() < 1.1
    assert deep.mean() < 0.3 * g["post"].mean(0).min()
    # The output norm alone: layer 1 gets by far the largest gradient (measured ≈ 10.8); QK-norm tames it.
    assert r["output"] > 2 * r["pre"] and r["output+qk"] < 0.5 * r["output"]
    # Mix-LN: its Post-LN quarter rises, its Pre-LN rest falls.
    m, k = g["mixln"].mean(0), mixln_post_layers(pl.GRAD["n_layer"])
    assert m[k - 1] > m[0] and m[k] > m[-1]
    # QK-norm barely moves Pre-LN's gradients at initialization.
    assert abs(r["pre+qk"] / r["pre"] - 1) < 0.05


def test_detach_control_locates_the_output_norms_lopsided_gradient(built_cache):
    """The output norm's layer 1 gets ≈ 10.8× the last layer's FFN gradient. With every sub-layer's input
    detached the profile is level (layer 1 ÷ last ≈ 0.86, max ÷ min ≈ 1.17): the weights are not the cause.
    Undetached, the stream carries ≈ 40× more gradient at x_0 than at x_L, ≈ 6.4× with QK-norm, ≈ 4.1×
    in Pre-LN. Detached, the stream's gradient is the same at every layer (the residual path only).
    The page's measurement (grad_paths, every variant), read from the build's cache (build tier)."""
    r, g = pl.grad_paths(), pl.grad_per_layer()
    # The same loop as grad_per_layer: the undetached rows are its numbers. grad_paths is committed (computed where
    # its manifest says) and grad_per_layer is computed here: torch's AVX2 kernels against the committed run's
    # AVX-512 ones move them by up to 1.2e-4 relative (Mix-LN; 1e-7 for most variants, on an AMD EPYC with AVX2 only).
    for v in pl.VARIANTS:
        assert np.allclose(r[v]["ffn"], g[v], rtol=1e-3), v
    out, det = pl.spread(r["output"]["ffn"]), pl.spread(r["output"]["ffn_detached"])
    assert out["first_over_last"] > 5 and 0.7 < det["first_over_last"] < 1.2 and det["max_over_min"] < 1.3
    s = {v: pl.stream_grad_ratio(r, v) for v in ("output", "output+qk", "pre")}
    assert s["output"] > 4 * s["output+qk"] and s["output+qk"] > s["pre"] > 2
    for v in ("output", "output+qk", "pre", "peri"):  # no branch in the way: ‖∂L/∂x_l‖ is one number
        st = r[v]["stream_detached"]
        assert np.allclose(st, st[:, -1:], rtol=1e-4), v
    # The page's values are these numbers.
    assert values.get("placement.detach.ratio.output", "en") == values.fmt(det["first_over_last"], 2)
    assert values.get("placement.stream_grad.output_qk", "en") == values.fmt(s["output+qk"], 1)


def test_detach_control_on_a_small_stack_matches_grad_per_layer_and_levels_the_stream():
    """grad_paths in the fast tier, on three layers and one seed: its undetached rows are grad_per_layer's
    numbers, and detached, the stream's gradient is the same at every layer. Then homogeneity, which the
    page's exercise uses: with zero biases and ReLU, LN(f(cx)) = LN(f(x))."""
    small = dict(variants=("output", "pre"), n_layer=3, d_model=16, n_head=2, block_size=8, batch=2, seeds=(0,))
    r, g = pl.grad_paths.uncached(**small), pl.grad_per_layer.uncached(**small)
    for v in small["variants"]:
        assert np.allclose(r[v]["ffn"], g[v], rtol=1e-6), v
        st = r[v]["stream_detached"]
        assert np.allclose(st, st[:, -1:], rtol=1e-4), v
    import torch

    from normref.blocks import OutputNormBlock, TinyConfig, init_weights

    torch.manual_seed(0)
    blk = OutputNormBlock(TinyConfig(placement="output", d_model=16, n_head=2))
    init_weights(blk)
    x = torch.randn(3, 5, 16)
    assert torch.allclose(blk.ln_2(blk.mlp(5 * x)), blk.ln_2(blk.mlp(x)), atol=1e-3)  # up to LN's ε


@pytest.mark.usefixtures("built_cache")  # reads experiments the build computed (build tier)
@pytest.mark.parametrize("n_layer", pl.STREAM["depths"])
def test_stream_lengths_per_placement(n_layer):
    r = pl.stream_lengths(n_layer)
    d = r["d"]
    rel = {v: r[v].mean(0) / r[v].mean(0)[0] for v in pl.VARIANTS}
    assert r["pre"].mean(0)[0] == pytest.approx(d, rel=0.05)  # E‖x_0‖² = d
    for v in ("post", "deepnorm"):  # every layer ends with an LN (gain 1): ‖x‖² = d exactly
        assert np.allclose(r[v].mean(0)[1:], d, rtol=1e-3), v
    b = tb.lemma2_bounds(d, r["layers"])
    pre = r["pre"].mean(0)
    assert np.all(pre[1:] > 0.95 * b["pre_lo"][1:]) and np.all(pre[1:] < 1.05 * b["pre_hi"][1:])
    # Output norms add a normalized vector (‖·‖² = d) per sub-layer, two per layer, nearly orthogonal to
    # the stream: E‖x_l‖² ≈ (1 + 2l) d, faster than Pre-LN's Lemma 2 growth.
    for v in ("peri", "output", "peri+qk", "output+qk"):
        assert rel[v][-1] > 1.15 * rel["pre"][-1], v
        assert 1.6 < np.mean(np.diff(rel[v])) < 2.4, v
    # Mix-LN: flat through its Post-LN quarter, then Pre-LN growth.
    k = mixln_post_layers(n_layer)
    assert np.allclose(rel["mixln"][1:k + 1], 1, atol=0.05) and rel["mixln"][-1] > 2
    assert pl.stream_growth(r, "pre") == pytest.approx(math.sqrt(rel["pre"][-1]))


def test_lab_measurements_reject_bad_input():
    with pytest.raises(ValueError, match="variant must be one of"):
        pl.parse_variant("pre+rms")
    with pytest.raises(TypeError, match="variant must be a string"):
        pl.parse_variant(3)
    with pytest.raises(ValueError, match="variants must name"):
        pl.grad_per_layer.uncached(variants=())
    with pytest.raises(ValueError, match="warmup must be"):
        pl.LMSetting(warmup=0)
    with pytest.raises(ValueError, match="lrs must be"):
        pl.LMSetting(lrs=(1,))
    with pytest.raises(ValueError, match="at least"):
        pl.Corpus("too short")
    with pytest.raises(ValueError, match="jobs must be"):
        pl.run_lab(pl.QUICK, jobs=0)
    with pytest.raises(TypeError, match="LMSetting"):
        pl.run_lab({"steps": 3})


def test_variant_names():
    assert pl.variant_name("output+qk", "en") == "output norm + QK-norm (OLMo 2-style)"
    assert pl.variant_name("peri+qk", "zh") == "Peri-LN + QK-norm（Gemma 3 式）"
    assert pl.variant_name("pre", "zh") == "Pre-LN"


# ------------------------------------------------------------------ the committed lab


@pytest.fixture(scope="module")
def rep():
    return results.placement_cpu()


def test_committed_lab_is_a_full_run_of_the_current_setting(rep):
    assert rep["schema"] == pl.SCHEMA
    s = rep["setting"]
    # The figures' captions and the page describe pl.FULL: the committed run must be that run.
    assert s == json.loads(json.dumps(asdict(pl.FULL)))
    assert len(s["seeds"]) >= 3 and set(s["variants"]) == set(pl.VARIANTS) and len(s["lrs"]) == 2
    keys = sorted((r["variant"], r["lr"], r["warmup"], r["seed"]) for r in rep["runs"])
    assert keys == sorted((r["variant"], r["lr"], r["warmup"], r["seed"]) for r in pl.FULL.runs())
    for r in rep["runs"]:
        # A run stops at the step whose training loss (or held-out loss) is not finite.
        n = (r["diverged_at"] - 1, r["diverged_at"]) if r["diverged_at"] else (s["steps"],)
        assert len(r["losses"]) in n and all(math.isfinite(x) for x in r["losses"])
        assert r["checks"][0]["step"] == 0 and len(r["checks"][-1]["max_logit"]) == s["n_layer"]
    m = rep["machine"]
    assert m["cpu_model"] and m["torch"] and m["date"] and m["torch_threads"] == 1
    c = rep["corpus"]
    assert pl.corpus_of(rep).sha256 == c["sha256"] and c["chars"] == len(c["text"])
    assert all(f.startswith("docs/en/") for f in c["files"])
    assert 0 < c["unigram_loss"] < rep["uniform_loss"] == pytest.approx(math.log(c["vocab"]))


def test_committed_lab_is_part_of_the_cache_key():
    assert results.PLACEMENT_CPU.read_bytes() in cache._module_source("normref.results.placement")
    for name in ("placement_training", "placement_logits"):
        assert "normref.results.placement" in cache.closure(figures.get(name).modules)


# Re-run the first steps of a few committed runs: a change to the model, the data pipeline or the
# optimizer shows up here, and says that the committed results need a refresh. Different CPUs may
# round a matmul differently, so the comparison allows small drift (same machine: bit-identical).
RERUN = [("pre", "lo", "warmup", 0, 40), ("output", "hi", "none", 1, 15), ("peri+qk", "lo", "none", 2, 25)]


@pytest.mark.parametrize("variant, lr, w, seed, steps", RERUN)
def test_rerun_matches_committed_results(rep, variant, lr, w, seed, steps):
    s = pl.setting_of(rep)
    lr = sorted(s.lrs)[0 if lr == "lo" else -1]
    warmup = s.warmup if w == "warmup" else 0
    old = next(r for r in rep["runs"] if (r["variant"], r["lr"], r["warmup"], r["seed"]) == (variant, lr, warmup, seed))
    new = pl.train_run(pl.corpus_of(rep), s, variant, lr, warmup, seed, steps=steps)
    assert new["checks"][0]["val_loss"] == pytest.approx(old["checks"][0]["val_loss"], abs=1e-4)
    assert np.allclose(new["checks"][0]["max_logit"], old["checks"][0]["max_logit"], atol=1e-2)
    assert np.allclose(new["losses"], old["losses"][:steps], atol=2e-3), (new["losses"][-3:], old["losses"][steps - 3:steps])


@pytest.mark.command  # a slow command end to end, in its own process: make test only
def test_refresh_command_writes_a_report(tmp_path, capsys):
    out = tmp_path / "lab.json"
    proc = subprocess.run([sys.executable, "-m", "normref", "placement", "--quick", "--variants", "pre,output+qk",
                           "--steps", "4", "--json", str(out), "--root", str(ROOT)],
                          capture_output=True, text=True, timeout=240, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    rep = json.loads(out.read_text(encoding="utf-8"))
    assert rep["schema"] == pl.SCHEMA and len(rep["runs"]) == 2 * 2 * 2
    assert all(len(r["losses"]) == 4 for r in rep["runs"])
    assert "held-out loss after 4 steps" in proc.stdout and "machine:" in proc.stdout
    from normref.__main__ import main  # a mistake, in this process (tests/test_cli.py runs one in its own)

    with pytest.raises(SystemExit) as bad:
        main(["placement", "--quick", "--root", str(tmp_path)])
    assert bad.value.code != 0 and "docs/en" in capsys.readouterr().err


# ------------------------------------------------------------------ what the page states from it


def test_page_claims_hold_in_the_committed_lab(rep):
    """What the placement page says in words about the committed lab (the numbers come from values)."""
    summ = results.summary()
    s = rep["setting"]
    n = len(s["seeds"])
    lo, hi, W = min(s["lrs"]), max(s["lrs"]), s["warmup"]
    e = lambda v, lr, w: summ[(v, lr, w)]  # noqa: E731
    # QK-norm: the largest logit after training at the high rate falls by far in each pairing, and the
    # output norm without it is the largest of all.
    for base in ("pre", "peri", "output"):
        for w in (0, W):
            with_qk, without = e(base + "+qk", hi, w)["max_logit"], e(base, hi, w)["max_logit"]
            assert max(without) > 5 * max(with_qk), (base, w)
            # "In every layout, QK-norm also lowered the held-out loss at that rate"
            assert e(base + "+qk", hi, w)["final"] < e(base, hi, w)["final"], (base, w)
    assert max(e("output", hi, 0)["max_logit"]) > max(e("pre", hi, 0)["max_logit"])
    lows = sorted(s["variants"], key=lambda v: e(v, hi, 0)["final"])[:2]
    assert all(v.endswith("+qk") for v in lows), lows  # "the two lowest losses there belong to QK-norm variants"
    # Post-LN: stalled without warmup or at the high rate; got past the letter frequencies only at the low
    # rate with warmup.
    assert e("post", lo, 0)["stalled"] == n and e("post", hi, 0)["stalled"] == n and e("post", hi, W)["stalled"] == n
    assert e("post", lo, W)["stalled"] == 0 and e("post", lo, W)["final"] < e("post", lo, 0)["final"]
    # DeepNorm rescues Post-LN at the low rate (best of that column) but stalls at the high one.
    assert e("deepnorm", lo, 0)["final"] == min(e(v, lo, 0)["final"] for v in s["variants"])
    assert e("deepnorm", hi, 0)["stalled"] >= 2
    # Pre-LN trains without warmup at both rates; warmup helps it at the high rate.
    assert all(e("pre", lr, 0)["stalled"] == 0 for lr in s["lrs"]) and e("pre", hi, W)["final"] < e("pre", hi, 0)["final"]
    # Peri-LN beats Pre-LN at the high rate without warmup; the output norm trails with QK-norm's help missing.
    assert e("peri", hi, 0)["final"] < e("pre", hi, 0)["final"]
    # Mix-LN: near Pre-LN at the low rate, depends on warmup at the high rate.
    assert abs(e("mixln", lo, 0)["final"] - e("pre", lo, 0)["final"]) < 0.1
    assert e("mixln", hi, 0)["stalled"] == n and e("mixln", hi, W)["stalled"] == 0
    # "Stalling, not blowing up, is how these small models fail."
    total = lambda f: sum(x[f] for x in summ.values())  # noqa: E731
    assert total("diverged") < total("stalled")


# ------------------------------------------------------------------ values and widget data


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_values_and_table(built_cache, lang):
    """Every placement value the page shows (the detach control's among them, grad_paths at the page's size),
    read from the build's cache (build tier)."""
    names = [n for n in values.names() if n.startswith("placement.")]
    assert len(names) > 60
    for n in names:
        assert values.get(n, lang).strip(), n
    table = values.table("placement.by_layout", lang)
    assert len(table.columns) == 9 and len(table.rows) == len(pl.VARIANTS)
    assert [row[0] for row in table.rows] == [pl.variant_name(v, lang) for v in pl.VARIANTS]
    assert all(cell.strip() for row in table.rows for cell in row)
    assert values.get("placement.grad_ratio.output_qk", lang) == values.fmt(pl.grad_ratio(pl.grad_per_layer(), "output+qk"), 2)
    # the gradient profile's max ÷ min (third column) is normref's, from the same per-layer means
    assert [row[2] for row in table.rows] == [values.fmt(pl.spread(pl.grad_per_layer()[v])["max_over_min"], 2)
                                             for v in pl.VARIANTS]
    # the QK-norm section's table: each pair at the high rate, the largest logit far lower with QK-norm
    qk = values.table("placement.qk_pairs", lang)
    assert len(qk.columns) == 5 and [row[0] for row in qk.rows] == [pl.variant_name(v, lang) for v in ("pre", "peri", "output")]
    for row in qk.rows:
        assert float(row[2]) < float(row[1]) / 5 and float(row[4]) < float(row[3])


@pytest.mark.usefixtures("built_cache")  # reads experiments the build computed (build tier)
def test_widget_data_is_what_the_figures_draw():
    d = data.get("placement_lab", "en")
    json.loads(data.to_json(d))
    g = pl.grad_per_layer()
    summ = results.summary()
    rep = results.placement_cpu()
    for v in pl.VARIANTS:
        assert np.allclose(d["grad"]["mean"][v], g[v].mean(0), atol=1e-4)
        for n in pl.STREAM["depths"]:
            r = pl.stream_lengths(n)
            assert np.allclose(d["stream"][str(n)]["length"][v], np.sqrt(r[v].mean(0) / r[v].mean(0)[0]), atol=1e-4)
        for st in d["loss"]["settings"]:
            curve = summ[(v, st["lr"], st["warmup"])]["curve"]
            got = d["loss"]["curves"][v][st["key"]]
            k = 10
            smooth = np.convolve(curve, np.ones(k) / k, mode="valid")  # the figure's moving average
            idx = np.array(got["steps"]) - k
            assert np.allclose(got["loss"], smooth[idx], atol=1e-4)
            assert got["steps"][-1] == rep["setting"]["steps"]
    assert d["names"]["output+qk"] == pl.variant_name("output+qk", "en")
    assert data.get("placement_lab", "zh")["names"]["output"] == "输出端归一化"
