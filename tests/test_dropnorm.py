"""The drop-the-norm lab (normref/results/dropnorm-cpu.json): the committed runs are a full run of the current
setting beside the placement lab's Pre-LN, a re-run of their first steps matches them, the refresh command
works, and what the page "Can we drop the norm?" says about them holds."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from dataclasses import asdict
from pathlib import Path

import numpy as np
import pytest

from normref import cache, values
from normref.experiments import dropnorm as dn
from normref.experiments import placement as pl
from normref.results import dropnorm as results
from normref.results.placement import placement_cpu


ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def rep():
    return results.dropnorm_cpu()


def test_committed_lab_is_a_full_run_of_the_placement_labs_setting(rep):
    assert rep["schema"] == dn.SCHEMA
    s = rep["setting"]
    # the placement lab's setting, field for field (its variants aside): same steps, rates, warmup, seeds
    assert s == json.loads(json.dumps(asdict(pl.FULL)))
    assert rep["arms"] == list(dn.TRAINED) and rep["arm_config"] == {a: dn.ARMS[a] for a in dn.TRAINED}
    keys = sorted((r["arm"], r["lr"], r["warmup"], r["seed"]) for r in rep["runs"])
    assert keys == sorted((a, lr, w, sd) for a in dn.TRAINED for lr in s["lrs"] for w in (0, s["warmup"])
                          for sd in s["seeds"])
    for r in rep["runs"]:
        n = (r["diverged_at"] - 1, r["diverged_at"]) if r["diverged_at"] else (s["steps"],)
        assert len(r["losses"]) in n and all(math.isfinite(x) for x in r["losses"])
        assert r["checks"][0]["step"] == 0 and len(r["checks"][-1]["max_logit"]) == s["n_layer"]
        # DyT and Derf have one learned α per norm: two per block and the final one
        assert len(r["alpha_end"]) == (2 * s["n_layer"] + 1 if r["arm"] != "lns" else 0)
    m = rep["machine"]
    assert m["cpu_model"] and m["torch"] and m["date"] and m["torch_threads"] == 1 and rep["seconds"] > 0
    # the same corpus as the placement lab, so its Pre-LN runs are the baseline
    assert rep["corpus"]["sha256"] == placement_cpu()["corpus"]["sha256"]
    assert len(dn.baseline_runs(placement_cpu(), s)) == 4 * len(s["seeds"])
    # at init: every arm and Pre-LN, the placement page's settings
    init = rep["at_init"]
    assert set(init["arms"]) == set(dn.ARMS)
    for a, r in init["arms"].items():
        assert np.asarray(r["grad"]).shape == (len(pl.GRAD["seeds"]), pl.GRAD["n_layer"])
        for depth in pl.STREAM["depths"]:
            assert np.asarray(r["stream"][str(depth)]).shape == (len(pl.STREAM["seeds"]), depth + 1)


def test_committed_lab_is_part_of_the_cache_key():
    assert results.DROPNORM_CPU.read_bytes() in cache._module_source("normref.results.dropnorm")


def test_baseline_needs_the_same_setting():
    other = json.loads(json.dumps(placement_cpu()["setting"]))
    other["steps"] += 1
    with pytest.raises(ValueError, match="setting differs"):
        dn.baseline_runs(placement_cpu(), other)


def test_pre_arm_reproduces_the_placement_labs_runs():
    """This module's training loop is the placement lab's: its "pre" arm gives the committed Pre-LN losses."""
    base = placement_cpu()
    s = pl.setting_of(base)
    old = next(r for r in base["runs"] if (r["variant"], r["lr"], r["warmup"], r["seed"]) == ("pre", max(s.lrs), 0, 1))
    new = dn.train_run(pl.corpus_of(base), s, "pre", max(s.lrs), 0, 1, steps=20)
    assert np.allclose(new["losses"], old["losses"][:20], atol=2e-3)
    assert new["checks"][0]["val_loss"] == pytest.approx(old["checks"][0]["val_loss"], abs=1e-4)


# Re-run the first steps of a few committed runs (as tests/test_placement_lab.py does for its lab).
RERUN = [("dyt1", "lo", "warmup", 0, 30), ("derf", "hi", "none", 1, 15), ("lns", "lo", "none", 2, 20)]


@pytest.mark.parametrize("arm, lr, w, seed, steps", RERUN)
def test_rerun_matches_committed_results(rep, arm, lr, w, seed, steps):
    s = pl.setting_of(rep | {"setting": {**rep["setting"]}})
    lr = sorted(s.lrs)[0 if lr == "lo" else -1]
    warmup = s.warmup if w == "warmup" else 0
    old = next(r for r in rep["runs"] if (r["arm"], r["lr"], r["warmup"], r["seed"]) == (arm, lr, warmup, seed))
    new = dn.train_run(pl.corpus_of(placement_cpu()), s, arm, lr, warmup, seed, steps=steps)
    assert new["checks"][0]["val_loss"] == pytest.approx(old["checks"][0]["val_loss"], abs=1e-4)
    assert np.allclose(new["checks"][0]["max_logit"], old["checks"][0]["max_logit"], atol=1e-2)
    assert np.allclose(new["losses"], old["losses"][:steps], atol=2e-3), (new["losses"][-3:], old["losses"][steps - 3:steps])


def test_at_init_rerun_matches_committed(rep):
    """The at-init numbers of two arms, recomputed with two seeds, equal the committed ones."""
    grad = {**pl.GRAD, "seeds": tuple(pl.GRAD["seeds"][:2])}
    stream = {**pl.STREAM, "depths": (pl.STREAM["depths"][0],), "seeds": tuple(pl.STREAM["seeds"][:2])}
    new = dn.at_init(("lns", "dyt1"), grad, stream)
    for a in ("lns", "dyt1"):
        old = rep["at_init"]["arms"][a]
        assert np.allclose(new["arms"][a]["grad"], np.asarray(old["grad"])[:2], rtol=1e-4)
        d = str(pl.STREAM["depths"][0])
        assert np.allclose(new["arms"][a]["stream"][d], np.asarray(old["stream"][d])[:2], rtol=1e-4)


@pytest.mark.command  # a slow command end to end, in its own process: make test only
def test_refresh_command_writes_a_report(tmp_path, capsys):
    out = tmp_path / "lab.json"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}  # this checkout's normref, whatever the venv installed
    proc = subprocess.run([sys.executable, "-m", "normref", "dropnorm", "--arms", "dyt1", "--steps", "3",
                           "--json", str(out)], capture_output=True, text=True, timeout=300, cwd=tmp_path, env=env)
    assert proc.returncode == 0, proc.stderr
    r = json.loads(out.read_text(encoding="utf-8"))
    assert r["schema"] == dn.SCHEMA and len(r["runs"]) == 2 * 2 * len(pl.FULL.seeds)
    assert all(len(x["losses"]) == 3 for x in r["runs"]) and set(r["at_init"]["arms"]) == {"pre", "dyt1"}
    assert "held-out loss after 3 steps" in proc.stdout and "machine:" in proc.stdout
    from normref.__main__ import main  # a mistake, in this process (tests/test_cli.py runs one in its own)

    with pytest.raises(SystemExit) as bad:
        main(["dropnorm", "--arms", "bogus"])
    err = capsys.readouterr().err
    assert bad.value.code == 2 and "--arms" in err and "'bogus'" in err


def test_bad_input_is_rejected():
    with pytest.raises(ValueError, match="arm must be one of"):
        dn.arm_config("dyt3")
    with pytest.raises(TypeError, match="arm must be a string"):
        dn.model(1, 0)
    with pytest.raises(ValueError, match="arms must name"):
        dn.run_lab(arms=())
    with pytest.raises(TypeError, match="setting must be an LMSetting"):
        dn.run_lab(s={})


def test_arms_are_what_they_say():
    from normref.blocks import ScaledPreLNBlock
    from normref.nn import Derf, DyT

    m = dn.model("dyt2", 0, n_layer=3, d_model=8, n_head=2)
    dyts = [x for x in m.modules() if type(x) is DyT]
    assert len(dyts) == 2 * 3 + 1 and all(float(x.alpha.detach()) == 2.0 for x in dyts)  # the final norm too
    m = dn.model("derf", 0, n_layer=3, d_model=8, n_head=2)
    assert sum(isinstance(x, Derf) for x in m.modules()) == 7
    m = dn.model("lns", 0, n_layer=4, d_model=8, n_head=2)
    assert [b.scale for b in m.blocks] == pytest.approx([1 / math.sqrt(i) for i in range(1, 5)])
    assert all(isinstance(b, ScaledPreLNBlock) for b in m.blocks)


# ------------------------------------------------------------------ the ledger's verdicts, re-derived


def _verdict(claim_id: str) -> str:
    from normsite.ledger import load

    return {c.id: c.verdict for c in load().claims}[claim_id]


def _e():
    s = results.dropnorm_cpu()["setting"]
    lr = {"lo": min(s["lrs"]), "hi": max(s["lrs"])}
    w = {"none": 0, "warmup": s["warmup"]}
    return lambda arm, a, b: results.summary()[(arm, lr[a], w[b])]


SETTINGS = [(a, b) for a in ("lo", "hi") for b in ("none", "warmup")]


def test_pre_ln_equals_pre_rmsnorm_holds():
    """Jiang et al.: exact. The lab-sized model and the page's snippet both agree to rounding error."""
    from normref.values.dropnorm import equivalence_diff, sci

    from support import run_snippet

    diff = equivalence_diff()
    out = run_snippet("pre_ln_to_rmsnorm.py")
    assert "the same function (difference < 1e-10):             True" in out
    derived = "holds" if diff < 1e-10 else "not-reproduced"
    assert derived == _verdict("pre-ln-equals-pre-rmsnorm")
    # the value the page and the ledger print is this number
    assert values.get("dropnorm.equiv_diff") == sci(diff)


def test_dyt_matches_normalized_is_derived_from_the_lab():
    """DyT "can match or exceed" normalized models: at our scale, compare each setting's best DyT start with
    Pre-LN. It matches in a setting if its mean held-out loss is within 0.02 nats of Pre-LN's or lower. Matches
    in every setting: holds; in none: not reproduced; in some: holds with a condition."""
    e = _e()
    gaps = [min(e(a, *x)["final"] for a in ("dyt0.5", "dyt1", "dyt2")) - e("pre", *x)["final"] for x in SETTINGS]
    matches = [math.isfinite(g) and g <= 0.02 for g in gaps]
    derived = "holds" if all(matches) else "not-reproduced" if not any(matches) else "condition"
    assert derived == _verdict("dyt-matches-normalized"), gaps
    # what the page says: the smallest start is the best one wherever a start trained, a larger start is worse,
    # and every start stalls at the high rate without warmup, where Pre-LN trains
    for x in SETTINGS:
        if e("dyt0.5", *x)["stalled"] == 0:
            assert e("dyt0.5", *x)["final"] < e("dyt1", *x)["final"] < e("dyt2", *x)["final"], x
    n = len(results.dropnorm_cpu()["setting"]["seeds"])
    assert all(e(a, "hi", "none")["stalled"] == n for a in ("dyt0.5", "dyt1", "dyt2", "derf"))
    assert e("pre", "hi", "none")["stalled"] == 0
    # Derf is no better than DyT's best start by more than 0.02 in any setting
    assert all(e("derf", *x)["final"] >= e("dyt0.5", *x)["final"] - 0.02 for x in SETTINGS)


def test_lns_fixes_it_is_derived_from_the_lab():
    """LayerNorm Scaling "fixes" the curse of depth, which is about deep layers. The lab's stacks are too shallow
    to have a deep half to rescue, so the verdict is 'not checkable here' whatever the losses say (issue T). The
    page's separate observation is checked too: better than Pre-LN by more than 0.02 nats at the high learning
    rate, within 0.02 at the low one."""
    e = _e()
    assert results.dropnorm_cpu()["setting"]["n_layer"] <= 12
    assert _verdict("layernorm-scaling-fixes-it") == "not-checkable"
    gaps = {x: e("lns", *x)["final"] - e("pre", *x)["final"] for x in SETTINGS}
    # the condition the page states: better at the high rate, within 0.02 of Pre-LN at the low one
    assert all(gaps[("hi", w)] < -0.02 for w in ("none", "warmup"))
    assert all(abs(gaps[("lo", w)]) <= 0.02 for w in ("none", "warmup"))
    # at init it cuts the stream's growth and makes the gradient profile steeper (layer 1 over the last)
    rep = results.dropnorm_cpu()
    pre, lns = dn.init_profile(rep, "pre"), dn.init_profile(rep, "lns")
    deep = max(pl.STREAM["depths"])
    assert lns["growth"][deep] < pre["growth"][deep] / 2
    assert lns["first_over_last"] > pre["first_over_last"]


@pytest.mark.models
def test_one_text_leans_the_papers_way():
    """The curse-of-depth section's one-text result, as the page states it: on SmolLM2's one text (one block
    dropped at a time) the deep half is judged cheaper when its median cost is lower and it holds more blocks
    under at least two of three fixed cut-offs (issue T), and the last two blocks are costlier than the deep
    half's median by far. The ledger's verdict rests on eight texts instead (tests/test_normfree.py), where
    the lean is gone; the page says so."""
    from normref.experiments.layer_drop import layer_drop
    from normref.values.dropnorm import CUTS

    delta = np.asarray(layer_drop()["delta"])
    L = len(delta)
    first, second = delta[:L // 2], delta[L // 2:]
    assert np.median(second) < np.median(first)
    assert sum((second < c).sum() > (first < c).sum() for c in CUTS.values()) >= 2
    assert delta[-1] > 4 * np.median(second) and delta[-2] > 4 * np.median(second)
