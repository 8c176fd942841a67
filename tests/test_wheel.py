"""The reader's wheel (normsite.wheel): normref alone, offline, byte-reproducible, cached by content."""

from __future__ import annotations

import io
import shutil
import zipfile
from pathlib import Path

import pytest

from normsite import SiteError, wheel
from support import ROOT


def _names(data: bytes) -> list[str]:
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        return z.namelist()


def _copy_sources(dest: Path) -> Path:
    for rel in wheel.source_files(ROOT):
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ROOT / rel, dest / rel)
    return dest


def test_wheel_holds_normref_and_nothing_of_the_site(tmp_path, monkeypatch):
    monkeypatch.setenv("NORMREF_CACHE", str(tmp_path / "cache"))
    w = wheel.build()
    assert w.name == wheel.wheel_name() == f"normref-{wheel.project()['version']}-py3-none-any.whl"
    names = _names(w.data)
    assert "normref/__init__.py" in names and "normref/results/bench-cpu.json" in names
    # Every data file normref reads at run time ships with it: the labels, the figure texts, the results.
    data = sorted(p.as_posix() for p in wheel.source_files(ROOT)
                  if p.parts[0] == "normref" and p.suffix not in (".py", ".md"))
    assert {"normref/labels.yml", "normref/figures/figures.yml", "normref/results/placement-cpu.json"} <= set(data), data
    assert not set(data) - set(names), f"data files left out of the wheel: {sorted(set(data) - set(names))}"
    assert not [n for n in names if n.startswith(("normsite", "tests", "docs", "snippets", "hooks"))]
    with zipfile.ZipFile(io.BytesIO(w.data)) as z:
        meta = z.read(f"normref-{wheel.project()['version']}.dist-info/METADATA").decode()
    # Ranges, not the site's exact pins: a reader keeps a working torch >= 2.4.
    assert "Requires-Dist: numpy>=2.0" in meta
    assert "Requires-Dist: PyYAML>=6.0" in meta  # the YAML data above is read by normref itself
    assert "pydantic" not in meta  # the site's schema library, not the reader's
    assert 'Requires-Dist: torch>=2.4; extra == "torch"' in meta
    specs = [ln.split(":", 1)[1].split(";")[0] for ln in meta.splitlines() if ln.startswith("Requires-Dist")]
    assert specs and not [s for s in specs if "==" in s], specs
    # Its long description is a short text of its own for readers, not the repository's README.
    assert wheel.project()["readme"] == wheel.README and wheel.README in map(str, wheel.source_files(ROOT))
    assert "Description-Content-Type: text/markdown" in meta
    assert meta.split("\n\n", 1)[1].strip() == (ROOT / wheel.README).read_text(encoding="utf-8").strip()
    assert "screenshot" not in meta and len(meta.split("\n\n", 1)[1].splitlines()) < 60
    # Its CPU-only torch line is the site's own (requirements.txt's pin, PyTorch's CPU index).
    from normsite import install

    assert install.cpu_torch_line() in meta


def test_two_builds_in_different_folders_give_the_same_bytes_and_honour_source_date_epoch(tmp_path, monkeypatch):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    monkeypatch.setenv("NORMREF_CACHE", str(tmp_path / "c1"))
    a = wheel.build()
    # Another copy of the sources (other paths, other mtimes), another empty cache.
    other = _copy_sources(tmp_path / "clone")
    monkeypatch.setenv("NORMREF_CACHE", str(tmp_path / "c2"))
    b = wheel.build(other)
    assert not a.cached and not b.cached
    assert a.data == b.data and a.sha256 == b.sha256
    with zipfile.ZipFile(io.BytesIO(a.data)) as z:
        stamps = {i.date_time for i in z.infolist()}
        # (setuptools' wheel writer gives RECORD a fixed 0o664 of its own)
        modes = {i.external_attr >> 16 for i in z.infolist() if not i.filename.endswith("/RECORD")}
    assert stamps == {(2023, 11, 14, 22, 13, 20)}, stamps  # 1700000000 in UTC
    assert modes == {0o100644}, modes


def test_warm_build_comes_from_the_cache_and_an_edit_rebuilds(tmp_path, monkeypatch):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    monkeypatch.setenv("NORMREF_CACHE", str(tmp_path / "cache"))
    src = _copy_sources(tmp_path / "src")
    first = wheel.build(src)
    again = wheel.build(src)
    assert not first.cached and again.cached and again.data == first.data
    with open(src / "normref" / "stats.py", "a", encoding="utf-8") as f:
        f.write("\n# an edit\n")
    edited = wheel.build(src)
    assert not edited.cached and edited.data != first.data
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000001")
    assert not wheel.build(src).cached, "another commit time is another wheel"


def test_missing_sources_and_a_bad_epoch_fail_naming_the_problem(tmp_path, monkeypatch):
    with pytest.raises(SiteError, match="missing pyproject.toml"):
        wheel.source_files(tmp_path)
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "yesterday")
    with pytest.raises(SiteError, match="SOURCE_DATE_EPOCH must be a whole number"):
        wheel.epoch()


def test_a_failing_backend_fails_naming_setuptools(tmp_path, monkeypatch):
    monkeypatch.setenv("NORMREF_CACHE", str(tmp_path / "cache"))
    src = _copy_sources(tmp_path / "src")
    (src / "pyproject.toml").write_text("[project]\nname = 'normref'\nversion = '0.1.0'\nlicense = 42\n",
                                        encoding="utf-8")
    with pytest.raises(SiteError, match="packaging normref failed"):
        wheel.build(src)


def test_check_published_finds_a_missing_or_broken_wheel(tmp_path, monkeypatch):
    monkeypatch.setenv("NORMREF_CACHE", str(tmp_path / "cache"))
    w = wheel.build()
    with pytest.raises(SiteError, match=r"no wheels/normref-.*\.whl"):
        wheel.check_published(tmp_path, w.name)
    path = tmp_path / wheel.site_path(w.name)
    path.parent.mkdir()
    path.write_bytes(b"not a zip")
    with pytest.raises(SiteError, match="is not a wheel"):
        wheel.check_published(tmp_path, w.name)
    path.write_bytes(w.data)
    assert wheel.check_published(tmp_path, w.name) == path
