"""The benchmark (schema and bandwidth maths, not timing), normref's threaded
RMSNorm on shapes that span several blocks and threads, the CSS pruner, and the
committed results that the performance page draws."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import normref.nn as nnr
from normref import bench, cache, figures, results, values
from normsite import csstrim

ROOT = Path(__file__).resolve().parent.parent


# ------------------------------------------------------------------ python -m normref bench --quick


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench") / "quick.json"
    p = subprocess.run([sys.executable, "-m", "normref", "bench", "--quick", "--json", str(out)], cwd=ROOT,
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]
    return json.loads(out.read_text()), p.stdout


def _check_report(rep: dict) -> None:
    assert rep["schema"] == bench.SCHEMA
    m = rep["machine"]
    for k in ("cpu_model", "cpu_cores", "torch_threads", "torch", "date", "python"):
        assert m[k], k
    assert m["torch"] == torch.__version__
    groups = {}
    for r in rep["results"]:
        assert r["family"] in bench.FAMILIES and r["norm"] in ("copy", "rms", "ln")
        assert r["rows"] * r["d"] == r["n_elements"]
        t = r["time_s"]
        assert 0 < t["min"] <= t["q1"] <= t["median"] <= t["q3"] <= t["max"]
        # Bytes: explicit terms that add up, and the formula for the mode.
        b = r["bytes"]
        assert b["total"] == sum(v for k, v in b.items() if k != "total")
        n, it, d = r["n_elements"], r["itemsize"], r["d"]
        nparams = {"copy": 0, "rms": 1, "ln": 2}[r["norm"]]
        if r["mode"] == "forward":
            assert b["total"] == 2 * n * it + nparams * d * it
        else:
            assert b["total"] == 4 * n * it + (0 if r["norm"] == "copy" else n * it + 3 * nparams * d * it)
        assert math.isclose(r["gbps"], b["total"] / t["median"] / 1e9, rel_tol=1e-9)
        groups.setdefault((r["device"], r["dtype"], r["mode"], r["d"]), []).append(r)
    for key, rows in groups.items():
        copy = [r for r in rows if r["family"] == "copy"]
        assert len(copy) == 1, key
        assert copy[0]["copy_fraction"] == pytest.approx(1.0)
        for r in rows:
            assert math.isclose(r["copy_fraction"], r["gbps"] / copy[0]["gbps"], rel_tol=1e-9)
    # One ratio per (group, family with both norms), equal to the ratio of medians.
    by = {(r["device"], r["dtype"], r["mode"], r["d"], r["family"], r["norm"]): r for r in rep["results"]}
    assert rep["ratios"]
    for q in rep["ratios"]:
        k = (q["device"], q["dtype"], q["mode"], q["d"], q["family"])
        assert math.isclose(q["rms_over_ln"], by[k + ("rms",)]["time_s"]["median"] / by[k + ("ln",)]["time_s"]["median"])


@pytest.mark.command  # `python -m normref bench --quick` end to end, timing for seconds: make test only. The report's
# schema and bandwidth maths are checked in the fast tier on the committed full run (test_committed_bench_json_…).
def test_quick_bench_json_schema_and_bandwidth_maths(quick):
    rep, stdout = quick
    _check_report(rep)
    assert rep["config"]["dims"] == list(bench.QUICK.dims)
    fams = {r["family"] for r in rep["results"]}
    assert fams == {"copy", "composed", "functional", "module", "normref"}  # quick mode never compiles
    assert any("compiled versions skipped" in n for n in rep["notes"])
    assert {r["dtype"] for r in rep["results"]} >= {"float32"}
    assert {r["mode"] for r in rep["results"]} == {"forward", "forward+backward"}
    assert "RMSNorm time / LayerNorm time" in stdout and "machine:" in stdout


def test_count_bytes_terms_and_bad_mode():
    f = bench.count_bytes("ln", "forward", n=100, d=10, itemsize=4)
    assert f == {"read_x": 400, "write_y": 400, "read_params": 80, "total": 880}
    c = bench.count_bytes("copy", "forward", n=100, d=10, itemsize=2)
    assert c["total"] == 400
    with pytest.raises(ValueError, match="mode must be"):
        bench.count_bytes("rms", "backward", n=1, d=1, itemsize=4)


def test_bad_config_is_rejected():
    with pytest.raises(ValueError, match="multiple of every d"):
        bench.run_bench(bench.BenchConfig(total=1000, dims=(256,)), log=lambda *_: None)
    with pytest.raises(ValueError, match="repeats and warmup"):
        bench.run_bench(bench.BenchConfig(total=1024, dims=(256,), repeats=0), log=lambda *_: None)


def test_pass_counts_match_the_page():
    """Composed RMSNorm: pow, mean, mul, mul (4 reads, 3 writes); composed LayerNorm 12; fused 2."""
    pc = bench.pass_counts()
    assert pc[("copy", "copy")]["passes"] == 2
    assert pc[("composed", "rms")]["passes"] == 7
    assert pc[("composed", "ln")]["passes"] == 12
    assert pc[("functional", "ln")]["passes"] == 2
    assert pc[("functional", "rms")]["passes"] >= 7  # a composite in torch 2.13 on CPU


# ------------------------------------------------------------------ normref RMSNorm across blocks and threads


@pytest.mark.parametrize("dtype,tol", [(torch.float32, 1e-5), (torch.float64, 1e-10)])
def test_threaded_blocks_match_torch(dtype, tol):
    # 4100 rows × 512: several blocks per thread and a ragged last block.
    g = torch.Generator().manual_seed(3)
    x = torch.randn(4100, 512, dtype=dtype, generator=g) * 3
    w = torch.rand(512, dtype=dtype, generator=g) + 0.5
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        y = nnr.rms_norm(x, w, 1e-6)
        assert torch.get_num_threads() == 2  # restored after the threaded walk
        torch.testing.assert_close(y, torch.nn.functional.rms_norm(x, (512,), w, 1e-6), atol=tol, rtol=tol)
        xa, wa = x.clone().requires_grad_(), w.clone().requires_grad_()
        xb, wb = x.clone().requires_grad_(), w.clone().requires_grad_()
        gy = torch.randn(x.shape, dtype=dtype, generator=g)
        nnr.rms_norm(xa, wa, 1e-6).backward(gy)
        torch.nn.functional.rms_norm(xb, (512,), wb, 1e-6).backward(gy)
        torch.testing.assert_close(xa.grad, xb.grad, atol=tol * 10, rtol=tol * 10)
        torch.testing.assert_close(wa.grad, wb.grad, atol=tol * 100, rtol=tol * 10)
    finally:
        torch.set_num_threads(before)


def test_thread_settings_are_left_as_they_were():
    """normref's worker threads run single-threaded ops; nobody else's setting changes."""
    import threading

    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        nnr.rms_norm(torch.randn(4096, 512))
        seen = []
        t = threading.Thread(target=lambda: seen.append(torch.get_num_threads()))
        t.start()
        t.join()
        assert torch.get_num_threads() == 2 and seen == [2]
    finally:
        torch.set_num_threads(before)


def test_threaded_non_contiguous_input_and_nan_check():
    x = torch.randn(512, 3000, generator=torch.Generator().manual_seed(4)).t()  # 3000 × 512, a transposed view
    torch.testing.assert_close(nnr.rms_norm(x), torch.nn.functional.rms_norm(x, (512,), None, 1e-6), atol=1e-5, rtol=1e-5)
    x = x.contiguous()
    x[2999, 7] = float("nan")  # in the last block, walked by the second thread
    with pytest.raises(ValueError, match="NaN or inf"):
        nnr.rms_norm(x)


def test_double_backward_fails_loudly_not_silently():
    """The closed-form backward is not itself differentiated: a second derivative must
    raise, never come back silently wrong."""
    x = torch.randn(4, 8, dtype=torch.float64, requires_grad=True)
    (gx,) = torch.autograd.grad((nnr.rms_norm(x) ** 3).sum(), x, create_graph=True)
    with pytest.raises(RuntimeError):
        gx.sum().backward()


def test_small_tensor_scan_times_all_three_and_restores_settings():
    before_threads, before_small = torch.get_num_threads(), nnr.SMALL_BYTES
    rep = bench.small_tensors(d=256, rows=(1, 2048), threads=1, seconds=0.01, log=lambda *a: None)
    assert torch.get_num_threads() == before_threads and nnr.SMALL_BYTES == before_small
    assert rep["small_bytes"] == nnr.SMALL_BYTES and rep["threads"] == 1
    small, big = rep["sizes"]
    assert small["small_path"] and not big["small_path"]  # 1 KiB and 2 MiB around SMALL_BYTES
    for r in rep["sizes"]:
        assert set(r["median_us"]) == {"torch", "normref", "blocked"} and min(r["median_us"].values()) > 0
        assert r["torch_over_normref"] == pytest.approx(r["median_us"]["torch"] / r["median_us"]["normref"])


@pytest.mark.command  # the command end to end; small_tensors() is tested in process above: make test only
def test_small_command_line_writes_its_json(tmp_path):
    out = tmp_path / "small.json"
    p = subprocess.run([sys.executable, "-m", "normref", "bench", "--small", "--quick", "--dims", "512",
                        "--json", str(out)], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]
    rep = json.loads(out.read_text())
    assert rep["schema"] == bench.SMALL_SCHEMA and rep["machine"]["torch"] == torch.__version__
    assert [r["rows"] for r in rep["scans"][0]["sizes"]] == [1, 4, 16] and rep["scans"][0]["sizes"][0]["d"] == 512
    assert "F.rms_norm" in p.stdout and "machine:" in p.stdout


@pytest.mark.parametrize("kw, words", [({"d": 0}, "d must be"), ({"d": True}, "d must be"),
                                       ({"rows": ()}, "rows must be"), ({"rows": (4, -1)}, "rows must be")])
def test_small_tensor_scan_rejects_bad_sizes(kw, words):
    with pytest.raises(ValueError, match=words):
        bench.small_tensors(**kw, log=lambda *a: None)


def test_committed_small_scan_backs_the_threshold():
    """small-cpu.json was measured with today's SMALL_BYTES, and in it normref (as it dispatches)
    is faster than torch.nn.RMSNorm on the largest tensors and the blocked path loses on one row."""
    rep = results.small_cpu()
    assert rep["schema"] == bench.SMALL_SCHEMA and rep["small_bytes"] == nnr.SMALL_BYTES
    assert results.SMALL_CPU.read_bytes() in cache._module_source("normref.results")
    assert {s["sizes"][0]["d"] for s in rep["scans"]} >= {4096}
    for scan in rep["scans"]:
        assert scan["sizes"][0]["rows"] == 1 and scan["sizes"][0]["torch_over_blocked"] < 1
        assert scan["sizes"][-1]["torch_over_normref"] > 1
        assert [r["small_path"] for r in scan["sizes"]] == [r["mib"] * 2**20 <= nnr.SMALL_BYTES for r in scan["sizes"]]


# ------------------------------------------------------------------ the CSS pruner


def test_prune_css_keeps_what_the_page_uses():
    html = '<div class="a b" id="main" data-x="1"><span class="c">hi</span></div>'
    css = (":root{--used:1px;--chain:var(--used);--unused:2px}"
           ".a .c{margin:var(--chain)}.zzz{color:red}.a:not(.zzz){padding:0}#main{top:0}#other{top:1px}"
           "[data-x]{left:0}[data-y]{left:1px}@media (min-width:10px){.b{color:blue}.nope{color:green}}"
           "@keyframes spin{to{opacity:0}}@keyframes unused{to{opacity:1}}.c{animation:spin 1s}")
    tokens = csstrim.used_tokens(html)
    (out,) = csstrim.prune_css([css], tokens)
    for kept in ("--used", "--chain", ".a .c", ".a:not(.zzz)", "#main", "[data-x]", ".b{color:blue}", "spin"):
        assert kept in out, kept
    for dropped in ("--unused", ".zzz{", "#other", "[data-y]", ".nope", "unused"):
        assert dropped not in out, dropped


def test_trim_html_drops_emptied_styles(tmp_path, monkeypatch):
    monkeypatch.setenv("NORMREF_CACHE", str(tmp_path))
    page = '<style>.x{a:b}</style><style>.unused{a:b}</style><p class="x">t</p>'
    out = csstrim.trim_html(page)
    assert out == '<style>.x{a:b}</style><p class="x">t</p>'
    assert csstrim.trim_html(page) == out  # second time from the cache


# ------------------------------------------------------------------ the committed results


def test_committed_bench_json_is_a_full_run():
    rep = results.bench_cpu()
    _check_report(rep)
    assert rep["config"]["dims"] == list(bench.FULL.dims)
    assert "compiled" in {r["family"] for r in rep["results"]}
    assert {r["mode"] for r in rep["results"]} == {"forward", "forward+backward"}
    assert results.row(rep, family="normref", norm="rms", d=4096)["copy_fraction"] > 0


def test_results_json_is_part_of_the_cache_key():
    src = cache._module_source("normref.results")
    assert results.BENCH_CPU.read_bytes() in src


def test_bench_values_render_in_both_languages():
    names = [n for n in values.names() if n.startswith("bench.")]
    assert "bench.machine" in names
    for lang in ("zh", "en"):
        for n in names:
            assert values.get(n, lang).strip(), n
        table = values.table("bench.implementations", lang)
        assert len({len(r) for r in table.rows}) == 1 and all(r[1].endswith(" ms") for r in table.rows)
    assert values.get("bench.machine", "zh") != values.get("bench.machine", "en")


def test_bench_figures_are_deterministic_and_localised():
    a = figures.render_svg("bench_ratio", "zh", "light")
    assert a == figures.render_svg("bench_ratio", "zh", "light")
    assert a != figures.render_svg("bench_ratio", "en", "light")
    assert "bench_time" in figures.names() and "bench_roofline" in figures.names()
