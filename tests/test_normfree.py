"""Inside a trained model (normref/experiments/normfree.py, normref/results/normfree-cpu.json): the DyT fit and
the bootstrap are right on cases with known answers, the substitutions put every norm back, the committed report
is a full run of the current texts, and a re-run of a few of its cells on the real weights matches it."""

from __future__ import annotations

import math

import numpy as np
import pytest

from normref.experiments import normfree as nf


def test_fit_dyt_recovers_a_known_alpha_and_scale():
    rng = np.random.default_rng(0)
    x = rng.normal(0, 3.0, (200, 16))
    g = rng.uniform(0.5, 2.0, 16)
    y = 1.7 * np.tanh(0.4 * x)
    f = nf.fit_dyt(x, y, g)
    assert f["alpha"] == pytest.approx(0.4, rel=1e-4) and f["scale"] == pytest.approx(1.7, rel=1e-4)
    assert f["r2"] == pytest.approx(1.0, abs=1e-9) and not f["linear"]


def test_fit_dyt_of_a_linear_map_sits_in_tanhs_linear_range():
    # A norm whose inputs all share one length is a constant scale: the best DyT has a tiny α, s·α the slope.
    x = np.random.default_rng(1).normal(0, 1.0, (100, 8))
    f = nf.fit_dyt(x, 0.25 * x, np.ones(8))
    assert f["linear"] and f["alpha"] * f["scale"] == pytest.approx(0.25, rel=1e-3) and f["r2"] > 0.999999


def test_fit_dyt_refuses_bad_shapes():
    with pytest.raises(ValueError, match="x and xhat must be"):
        nf.fit_dyt(np.ones((3, 4)), np.ones((3, 5)), np.ones(4))
    with pytest.raises(ValueError, match="nothing to fit"):
        nf.fit_dyt(np.ones((3, 4)), np.zeros((3, 4)), np.ones(4))


def test_bootstrap_mean_brackets_the_mean_and_refuses_one_text():
    b = nf.bootstrap_mean([1.0, 2.0, 3.0, 4.0, 10.0])
    assert b["mean"] == 4.0 and b["min"] == 1.0 and b["max"] == 10.0
    assert 1.0 <= b["lo"] < b["mean"] < b["hi"] <= 10.0
    assert nf.bootstrap_mean([2.0, 2.0])["lo"] == nf.bootstrap_mean([2.0, 2.0])["hi"] == 2.0
    with pytest.raises(ValueError, match="one per text"):
        nf.bootstrap_mean([1.0])


def test_the_texts_are_long_enough_distinct_and_labeled():
    d = nf.texts()
    assert len(d["texts"]) >= 8
    words = [len(t["text"].split()) for t in d["texts"]] + [len(d["calibration"].split())]
    assert min(words) >= 200  # 256 tokens and more with SmolLM2's tokenizer (the real-weights test counts them)
    assert len({t["id"] for t in d["texts"]}) == len(d["texts"])
    assert d["calibration"] not in [t["text"] for t in d["texts"]]


def _report(n_texts=8, n_blk=4, seed=0):
    rng = np.random.default_rng(seed)
    texts = []
    for i in range(n_texts):
        base = 3.0 + 0.1 * i
        one = lambda: list(base + rng.uniform(0, 1, 2 * n_blk + 1))  # noqa: E731
        texts.append({"id": f"t{i}", "genre": "g", "base": base, "freeze_one": one(), "freeze_keep0_one": one(),
                      "dyt_one": one(), "dyt_keep0_one": one(), "freeze_all": base + 5, "freeze_keep0_all": base + 1,
                      "dyt_all": base + 4, "dyt_keep0_all": base + 2,
                      # deep blocks cheaper: costs 1, 0.9, then 0.1, 0.05
                      "drop": [base + c for c in (1.0, 0.9, 0.1, 0.05)][:n_blk],
                      "angular": [0.3, 0.2, 0.1, 0.1][:n_blk], "angular_last": [0.3, 0.2, 0.1, 0.1][:n_blk]})
    return {"n_tokens": 256, "model": "toy", "texts": texts}


def test_summarize_reads_costs_against_each_texts_base():
    s = nf.summarize(_report())
    assert s["n_texts"] == 8 and s["base"]["mean"] == pytest.approx(3.35)
    assert s["freeze_all"]["mean"] == pytest.approx(5.0) and s["freeze_keep0_all"]["lo"] == pytest.approx(1.0)
    assert s["drop"]["mean"] == pytest.approx([1.0, 0.9, 0.1, 0.05])
    h = s["halves"]
    assert h["first_median"]["mean"] == pytest.approx(0.95) and h["second_median"]["mean"] == pytest.approx(0.075)
    assert h["texts_deep_cheaper"] == 8 and h["cheapest_k"] == 4 and h["cheapest_deep"]["mean"] == 2
    assert h["angular_first"]["mean"] == pytest.approx(0.25) and h["angular_second"]["mean"] == pytest.approx(0.1)
    assert "freeze every norm" in nf.format_summary(_report())


# ------------------------------------------------------------------ on the real weights


def test_every_text_is_long_enough_for_the_tokenizer(real_models):
    m = real_models(nf.MODEL)
    for t in [nf.texts()["calibration"]] + [t["text"] for t in nf.texts()["texts"]]:
        assert len(m.encode(t)) >= nf.N_TOKENS


def test_a_norm_swapped_in_and_resumed_from_its_block_equals_the_whole_forward(real_models):
    """The measurement's two shortcuts on the real weights: a one-at-a-time variant starts from the stream
    cached at its block's input, and every substituted norm is put back afterwards."""
    import torch

    m = real_models(nf.MODEL)
    net = m.net
    ids = nf._tokens(m, nf.texts()["texts"][0]["text"])
    sites = nf.norm_sites(net)
    assert len(sites) == 2 * len(net.blocks) + 1 and sites[-1][0] == "final_norm"
    with torch.no_grad():
        xs, cos, sin = nf._streams(net, ids)
        base = nf._ce_from(net, xs[0], 0, cos, sin, ids)
        logits, _ = m.forward(ids)
        from normref.experiments.layer_drop import cross_entropy

        assert base == pytest.approx(cross_entropy(logits, ids), abs=1e-5)
        j = 7  # block 4's norm before the MLP (from 1)
        _, mod = sites[j]
        frozen = nf._Frozen(mod.norm, 0.5, False)
        with nf._substituted(net, {mod: frozen}):
            resumed = nf._ce_from(net, xs[3], 3, cos, sin, ids)
            whole = nf._ce_from(net, xs[0], 0, cos, sin, ids)
        assert resumed == pytest.approx(whole, abs=1e-5) and resumed != pytest.approx(base, abs=1e-3)
        assert all("norm" not in mod.__dict__ for _, mod in sites)
        assert nf._ce_from(net, xs[0], 0, cos, sin, ids) == pytest.approx(base, abs=1e-6)
        # a dropped block, resumed from its input, equals layer_drop's way of dropping it
        from normref.experiments.layer_drop import drop_one

        assert nf._ce_from(net, xs[7], 7, cos, sin, ids, skip=7) == pytest.approx(drop_one(m, ids, 7), abs=1e-5)


# ------------------------------------------------------------------ on the real weights


@pytest.fixture(scope="module")
def rep():
    from normref.results.normfree import normfree_cpu

    return normfree_cpu()


def test_committed_report_is_a_full_run_of_the_current_texts(rep):
    assert rep["schema"] == nf.SCHEMA and rep["n_tokens"] == nf.N_TOKENS
    d = nf.texts()
    assert [t["id"] for t in rep["texts"]] == [t["id"] for t in d["texts"]]
    n_norm = len(rep["sites"])
    assert n_norm == 61 and rep["sites"][0] == "blk.0.attn_norm" and rep["sites"][-1] == "final_norm"
    assert [c["site"] for c in rep["calibration"]] == rep["sites"]
    for t in rep["texts"]:
        for k in ("freeze_one", "freeze_keep0_one", "dyt_one", "dyt_keep0_one"):
            assert len(t[k]) == n_norm and all(math.isfinite(v) for v in t[k])
        assert len(t["drop"]) == len(t["angular"]) == len(t["angular_last"]) == 30
        assert all(0 <= a <= 1 for a in t["angular"])
    m = rep["machine"]
    assert m["cpu_model"] and m["torch"] and m["date"] and rep["seconds"] > 0 and m["processes"] >= 1


def test_a_rerun_of_a_few_cells_matches_the_committed_report(rep, real_models):
    import torch

    m = real_models(nf.MODEL)
    # the calibration: the frozen constant and the DyT fit of two norms
    calib = nf.calibrate(m)
    for j in (0, 31, 60):
        for k in ("inv_rms", "alpha", "scale"):
            # A DyT fit that ends at its bound (alpha 1e-7, where tanh is linear and only alpha × scale is fixed)
            # moves alpha and scale by 4e-4 of themselves, in opposite directions, on other CPU kernels (AVX2
            # against the committed run's AVX-512): their product is held as tightly as the rest.
            loose = k in ("alpha", "scale") and calib[j]["alpha"] < 1e-6
            assert calib[j][k] == pytest.approx(rep["calibration"][j][k], rel=1e-3 if loose else 1e-4), (j, k)
        got, want = calib[j]["alpha"] * calib[j]["scale"], rep["calibration"][j]["alpha"] * rep["calibration"][j]["scale"]
        assert got == pytest.approx(want, rel=1e-4), (j, "alpha × scale")
    t = nf.texts()["texts"][0]
    ids = nf._tokens(m, t["text"])
    assert len(ids) == nf.N_TOKENS
    r = rep["texts"][0]
    net = m.net
    sites = nf.norm_sites(net)
    with torch.no_grad():
        xs, cos, sin = nf._streams(net, ids)
        assert nf._ce_from(net, xs[0], 0, cos, sin, ids) == pytest.approx(r["base"], abs=1e-4)
        # a block dropped, resumed from its input, equals the committed cost
        assert nf._ce_from(net, xs[7], 7, cos, sin, ids, skip=7) == pytest.approx(r["drop"][7], abs=1e-4)
        # one norm frozen (block 3's FFN norm), resumed from its block, and the same from the start
        j = 7
        _, mod = sites[j]
        frozen = nf._Frozen(mod.norm, rep["calibration"][j]["inv_rms"], False)
        with nf._substituted(net, {mod: frozen}):
            resumed = nf._ce_from(net, xs[3], 3, cos, sin, ids)
            whole = nf._ce_from(net, xs[0], 0, cos, sin, ids)
        assert resumed == pytest.approx(whole, abs=1e-5) == pytest.approx(r["freeze_one"][j], abs=1e-4)
        # every norm put back
        assert all("norm" not in mod.__dict__ for _, mod in sites)
        assert nf._ce_from(net, xs[0], 0, cos, sin, ids) == pytest.approx(r["base"], abs=1e-4)
        # all DyT with position 0 kept
        subs = {mod: nf._DyT(mod.norm, c["alpha"], c["scale"], True) for (_, mod), c in zip(sites, rep["calibration"])}
        # A network this far from working (hundreds of nats) amplifies the CPU kernels' last digits: 612.6 on AVX2
        # against the committed 624.8 (AVX-512); on the committed kernels it agrees to 1e-3.
        with nf._substituted(net, subs):
            assert nf._ce_from(net, xs[0], 0, cos, sin, ids) == pytest.approx(r["dyt_keep0_all"], rel=0.05)


@pytest.mark.models
@pytest.mark.command  # the first text's all-DyT cost on torch's other CPU kernels, a process each: make test only
def test_the_all_dyt_cost_moves_by_several_percent_between_cpu_kernels(rep, real_models):
    """The drop-norm page (#fitted-dyt) gives the all-DyT costs to two figures only: on torch's other CPU kernels
    the first text's cross-entropy moves by up to several percent, while the intact model's moves by less than a
    millionth of a nat. Measured on an AVX2-only CPU against the committed AVX-512 run: 1.5% to 7.3%, and 3.8% to
    5.9% between its own portable and AVX2 kernels (the same matrix library), so the kernels alone move it. Held
    here: more than 0.5% on some kernel set (a shift a million times the intact model's) and under 10% on every
    one."""
    import json
    import os
    import subprocess
    import sys
    from pathlib import Path

    real_models(nf.MODEL)  # the converted weights, for the processes below
    code = ("import json, torch; torch.set_num_threads(1); from normref.experiments import normfree as nf; "
            "from normref.models import load; from normref.results.normfree import normfree_cpu; "
            "rep = normfree_cpu(); m = load(nf.MODEL); net = m.net; sites = nf.norm_sites(net); "
            "ids = nf._tokens(m, nf.texts()['texts'][0]['text']); out = [torch.backends.cpu.get_cpu_capability()]\n"
            "with torch.no_grad():\n"
            "    xs, cos, sin = nf._streams(net, ids)\n"
            "    out.append(nf._ce_from(net, xs[0], 0, cos, sin, ids))\n"
            "    for keep in (False, True):\n"
            "        subs = {mod: nf._DyT(mod.norm, c['alpha'], c['scale'], keep)"
            " for (_, mod), c in zip(sites, rep['calibration'])}\n"
            "        with nf._substituted(net, subs):\n"
            "            out.append(nf._ce_from(net, xs[0], 0, cos, sin, ids))\n"
            "print(json.dumps(out))")
    root = Path(__file__).resolve().parent.parent
    ran = rep["machine"]["cpu_capability"].lower()
    want = np.array([rep["texts"][0]["dyt_all"], rep["texts"][0]["dyt_keep0_all"]])
    base = rep["texts"][0]["base"]
    shifts = {}
    for other in ("default", "avx2"):
        if other == ran:
            continue
        proc = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=600,
                              env={**os.environ, "ATEN_CPU_CAPABILITY": other, "OMP_NUM_THREADS": "1",
                                   "PYTHONPATH": str(root)})
        assert proc.returncode == 0, proc.stderr[-2000:]
        used, intact, *got = json.loads(proc.stdout.strip().splitlines()[-1])
        assert abs(intact - base) < 1e-6, (used, intact, base)  # the intact model: less than a millionth of a nat
        if used.lower() != ran:
            shifts[used] = np.abs(np.array(got) / want - 1)
    if not shifts:
        pytest.skip(f"torch ran only the committed run's {ran} kernels here")
    assert max(float(s.max()) for s in shifts.values()) > 0.005, shifts
    assert all(float(s.max()) < 0.10 for s in shifts.values()), shifts


# ------------------------------------------------------------------ the ledger's verdicts, from the committed run


def _verdict(claim_id: str) -> str:
    from normsite.ledger import load

    return {c.id: c.verdict for c in load().claims}[claim_id]


def test_deep_layers_contribute_little_is_derived_from_eight_texts(rep):
    """Sun et al.: deep Pre-LN layers contribute little. Over the texts, the deep half is judged cheaper to drop
    only when the 95% interval of its per-text median cost minus the first half's lies below zero and, on
    average, more than half of the cheapest blocks are deep (the interval's low end above half). Then one model
    says at most 'depends on the model'; otherwise 'not reproduced here' (issue T's rule). The page's other
    measure, the angular distance, is checked for the direction the page states."""
    h = nf.summarize(rep)["halves"]
    deep_cheaper = h["second_minus_first"]["hi"] < 0 and h["cheapest_deep"]["lo"] > h["cheapest_k"] / 2
    derived = "model-dependent" if deep_cheaper else "not-reproduced"
    assert derived == _verdict("deep-pre-ln-layers-contribute-little")
    # the page: the deep half turns the stream a little more, not less
    assert h["angular_second_minus_first"]["lo"] > 0


def test_a_trained_norm_is_removable_only_with_fine_tuning(rep):
    """Heimersheim; Baroni et al.: LayerNorm can be removed from a trained model, fine-tuning while it goes
    (their evidence). Without fine-tuning, SmolLM2 with every norm frozen must break (the stream overflows, or
    the cost exceeds one nat), with and without position 0 kept: then the verdict is 'holds with a condition',
    the fine-tuning. Were the frozen model fine without training, the claim would simply hold."""
    s = nf.summarize(rep)

    def broken(e):
        return e["overflowed"] == s["n_texts"] or ("mean" in e and e["lo"] > 1.0)

    derived = "condition" if broken(s["freeze_all"]) and broken(s["freeze_keep0_all"]) else "holds"
    assert derived == _verdict("trained-norm-removable")
    # the page: position 0 carries most of one norm's freeze cost
    one, keep0 = np.asarray(s["freeze_one"]["mean"])[:-1], np.asarray(s["freeze_keep0_one"]["mean"])[:-1]
    assert keep0.sum() < 0.5 * one.sum() and np.median(keep0) < np.median(one)
