"""The experiment results committed with normref (normref/results/committed, normref.results.committed): each
is current (its key is the one the code has now), the cache reads it before its own folder and refuses a file
that is not the one the manifest names, the refresh command writes what reads back, and (build tier) each
committed result is what this machine computes."""

from __future__ import annotations

import json
import pickle

import numpy as np
import pytest

from normref import cache
from normref.results import committed


def test_every_committed_result_is_current():
    """A committed result whose key has changed is never read (the build computes it itself, as slowly as
    without the folder): an edit to an experiment, or to what it imports, refreshes its entry too."""
    stale = [spec for spec, ok in committed.status() if not ok]
    assert not stale, (f"committed results stale since an edit to their code: {stale}; run "
                       f"`python -m normref committed --refresh` and commit normref/results/committed/")


def test_the_committed_results_are_the_slow_experiments_and_name_their_machine():
    m = committed.manifest()
    assert m["schema"] == committed.SCHEMA and len(m["entries"]) >= 5
    for spec, e in m["entries"].items():
        assert (committed.FOLDER / e["file"]).stat().st_size == e["bytes"], spec
        assert {"cpu_model", "cpu_cores", "torch", "date", "python", "platform"} <= set(e["machine"]), spec
        assert e["machine"]["torch_threads"] == 1 and e["cpu_s"] > 0, spec
    files = {p.name for p in committed.FOLDER.iterdir()}
    assert files == {e["file"] for e in m["entries"].values()} | {"manifest.json"}, "a file no entry names"


@pytest.fixture
def folder(tmp_path, monkeypatch):
    """A committed-results folder of the test's own, and an empty cache."""
    d = tmp_path / "committed"
    d.mkdir()
    monkeypatch.setattr(cache, "COMMITTED", d)
    monkeypatch.setattr(cache, "COMMITTED_MANIFEST", d / "manifest.json")
    monkeypatch.setattr(committed, "FOLDER", d)
    monkeypatch.setattr(committed, "MANIFEST", d / "manifest.json")
    monkeypatch.setenv("NORMREF_CACHE", str(tmp_path / "cache"))
    return d


def _commit(d, s: cache.Step, value, spec="normref.experiments.x:y()") -> dict:
    blob = pickle.dumps(value, protocol=4)
    (d / "x.pkl").write_bytes(blob)
    import hashlib

    e = {"name": s.name, "key": s.key, "file": "x.pkl", "sha256": hashlib.sha256(blob).hexdigest(), "bytes": len(blob)}
    (d / "manifest.json").write_text(json.dumps({"schema": committed.SCHEMA, "entries": {spec: e}}), encoding="utf-8")
    return e


def test_a_committed_result_is_read_before_the_cache_and_only_under_its_key(folder):
    s = cache.step_of("data", "test.committed()", inputs={"arguments": "()"}, suffix=".pkl")
    other = cache.step_of("data", "test.committed()", inputs={"arguments": "(1,)"}, suffix=".pkl")
    _commit(folder, s, {"loss": [1.5, 1.25]})
    assert s.cached() and not other.cached()

    def never():
        raise AssertionError("computed a committed result")

    value, hit = cache.step(s, never, lambda r: pickle.dumps(r, protocol=4), pickle.loads)
    assert hit and value == {"loss": [1.5, 1.25]}
    assert not (cache.location() / "data").exists() or not any((cache.location() / "data").iterdir())
    # The refresh command's workers compute what they commit.
    cache.USE_COMMITTED = False
    try:
        assert not s.cached()
    finally:
        cache.USE_COMMITTED = True
    # Another key (other arguments, an edit to the code) is computed, as without the folder.
    assert cache.step(other, lambda: 7, lambda r: pickle.dumps(r), pickle.loads) == (7, False)


def test_a_committed_file_that_is_not_the_manifests_fails_naming_itself(folder):
    s = cache.step_of("data", "test.committed()", suffix=".pkl")
    _commit(folder, s, [1.0])
    (folder / "x.pkl").write_bytes(pickle.dumps([2.0]))
    with pytest.raises(ValueError, match=r"x\.pkl of normref\.experiments\.x:y\(\) is not the file .*SHA-256.*--refresh"):
        cache.get("data", s.key, ".pkl")
    (folder / "x.pkl").unlink()
    with pytest.raises(ValueError, match=r"x\.pkl .* is missing: restore it from git"):
        cache.get("data", s.key, ".pkl")
    (folder / "manifest.json").write_text("[]", encoding="utf-8")
    with pytest.raises(ValueError, match="not a committed-results manifest"):
        cache.has("data", "0" * 64, ".pkl")


def test_refresh_commits_what_the_call_computes_and_the_cache_reads_it_back(folder):
    spec = "normref.experiments.toll_booth:stream_norms()"  # under a second, and it needs nothing first
    data = committed.refresh([spec], jobs=1, log=lambda *a: None, fresh=False)
    e = data["entries"][spec]
    s = committed.step_for(spec)
    assert e["key"] == s.key and e["name"] == s.name and (folder / e["file"]).is_file()
    assert e["machine"]["torch_threads"] == 1 and e["versions"] == cache.versions_hash(s.libs)
    assert committed.status() == [(spec, True)]
    # Read back under the same key, in a cache that never computed it.
    from normref.experiments.toll_booth import stream_norms

    before = dict(cache.STATS)
    got = stream_norms()
    assert cache.STATS.get("committed", 0) == before.get("committed", 0) + 1
    assert pickle.dumps(got, protocol=4) == (folder / e["file"]).read_bytes()


def test_the_command_lists_and_refuses_what_it_cannot_do(capsys):
    from normref.__main__ import main

    assert main(["committed"]) == 0
    out = capsys.readouterr().out
    assert all(f"current  {spec}" in out for spec in committed.specs())
    assert committed.resolve("layer_drop") == "normref.experiments.layer_drop:layer_drop()"
    for argv, says in ((["committed", "normref.experiments.sink:sink()"], "NAME goes with --refresh"),
                       (["committed", "--refresh", "summary"], "NAME must be a committed result's function (toy_training, "),
                       (["committed", "--refresh", "normref.experiments.sink:summary()"], "@cache.memo experiment"),
                       (["committed", "--refresh", "sink()"], "NAME must be a committed result's function"),
                       (["committed", "--refresh", "normref.experiments.sink:summary"], "an experiment is 'normref.module:function"),
                       (["committed", "--refresh", "--jobs", "0"], "--jobs must be a positive integer")):
        with pytest.raises(SystemExit) as e:
            main(argv)
        assert e.value.code == 2 and says in capsys.readouterr().err, argv


def _close(a, b, path="result") -> list[str]:
    """Where two results differ beyond float rounding between machines: nested dicts, lists and arrays, compared
    to 1e-3 relative (the toy trainings run a few hundred steps; a CPU's other kernels round differently)."""
    if isinstance(a, dict) and isinstance(b, dict):
        if set(a) != set(b):
            return [f"{path}: keys {sorted(set(a) ^ set(b), key=str)}"]
        return [d for k in a for d in _close(a[k], b[k], f"{path}[{k!r}]")]
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)) and not all(
            isinstance(x, (int, float)) for x in (*a, *b)):
        if len(a) != len(b):
            return [f"{path}: {len(a)} items against {len(b)}"]
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in _close(x, y, f"{path}[{i}]")]
    if isinstance(a, (int, float, list, tuple, np.ndarray, np.generic)) and not isinstance(a, bool):
        x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
        ok = x.shape == y.shape and np.allclose(x, y, rtol=1e-3, atol=1e-6, equal_nan=True)
        return [] if ok else [f"{path}: {x.ravel()[:4]} against {y.ravel()[:4]}"]
    return [] if a == b else [f"{path}: {a!r} against {b!r}"]


@pytest.mark.models
def test_each_committed_result_is_what_this_machine_computes(tmp_path, monkeypatch):
    """The committed results were computed on the machine the manifest names; this one computes each again (a
    process per core, an empty cache) and compares, so a page's numbers are what any machine of the kind gets.

    "Of the kind" includes torch's set of CPU kernels: a one-seed training run drifts apart on another set (the
    toll-booth page's Post-LN runs do; tests/test_toll_booth.py shows it). So the runs use the committed set
    (ATEN_CPU_CAPABILITY, inherited by the fresh processes) where this CPU has it; where it has not (an AVX2-only
    CPU against AVX-512 results), a result that differs is reported as a skip naming it, not as a failure."""
    import torch

    monkeypatch.setattr(committed, "FOLDER", tmp_path / "again")
    monkeypatch.setattr(committed, "MANIFEST", tmp_path / "again" / "manifest.json")
    entries = json.loads(cache.COMMITTED_MANIFEST.read_text(encoding="utf-8"))["entries"]
    old = {spec: pickle.loads((cache.COMMITTED / e["file"]).read_bytes()) for spec, e in entries.items()}
    order, here = ("DEFAULT", "AVX2", "AVX512"), torch.backends.cpu.get_cpu_capability()
    wanted = {e["machine"]["cpu_capability"] for e in entries.values()}
    same = len(wanted) == 1 and wanted <= set(order) and here in order and order.index(*wanted) <= order.index(here)
    if same:
        monkeypatch.setenv("ATEN_CPU_CAPABILITY", next(iter(wanted)).lower())
    new = committed.refresh(list(entries), log=lambda *a: None)["entries"]
    differ = []
    for spec, e in new.items():
        assert e["key"] == entries[spec]["key"], spec
        got = pickle.loads((tmp_path / "again" / e["file"]).read_bytes())
        if same or e["machine"]["cpu_capability"] == entries[spec]["machine"]["cpu_capability"]:
            assert not _close(got, old[spec]), (spec, _close(got, old[spec])[:5])
        elif _close(got, old[spec]):
            differ.append(spec)
    if differ:
        pytest.skip(f"torch's {here} kernels here, {', '.join(sorted(wanted))} for the committed results: "
                    f"{', '.join(differ)} differ")
