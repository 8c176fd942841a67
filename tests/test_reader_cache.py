"""Where normref caches for a reader: the platform's user cache folder outside a clone, announced once;
``.cache/normref`` in a clone's root; ``$NORMREF_CACHE`` above both; and ``python -m normref cache``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from normref import cache
from support import ROOT


def _py(code: str, cwd: Path, home: Path, **env):
    full = {k: v for k, v in os.environ.items() if k not in ("NORMREF_CACHE", "XDG_CACHE_HOME")}
    full.update(HOME=str(home), PYTHONPATH=str(ROOT), **env)
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, env=full, capture_output=True, text=True, timeout=120)


WHERE = "from normref import cache; print(cache.cache_dir())"


def test_outside_a_clone_the_cache_is_the_readers_and_its_first_use_says_where(tmp_path):
    home, work = tmp_path / "home", tmp_path / "work"
    work.mkdir()
    first = _py(WHERE, work, home)
    want = home / ".cache" / "normref"
    assert first.returncode == 0 and first.stdout.strip() == str(want), first.stderr
    assert want.is_dir() and not (work / ".cache").exists(), "nothing written in the reader's current folder"
    note = first.stderr.strip().splitlines()
    assert len(note) == 1 and str(want) in note[0] and "python -m normref cache --info" in note[0], note
    again = _py(WHERE, work, home)
    assert again.stdout.strip() == str(want) and again.stderr == "", "announced only the first time"


def test_xdg_cache_home_and_normref_cache_choose_the_folder(tmp_path):
    home, work = tmp_path / "home", tmp_path / "work"
    work.mkdir()
    xdg = _py(WHERE, work, home, XDG_CACHE_HOME=str(tmp_path / "xdg"))
    assert xdg.stdout.strip() == str(tmp_path / "xdg" / "normref")
    relative = _py(WHERE, work, home, XDG_CACHE_HOME="rel")  # the XDG rule: a relative path is ignored
    assert relative.stdout.strip() == str(home / ".cache" / "normref")
    given = _py(WHERE, work, home, NORMREF_CACHE=str(tmp_path / "mine"))
    assert given.stdout.strip() == str(tmp_path / "mine") and given.stderr == ""


def test_in_a_clones_root_the_cache_stays_dot_cache_normref(tmp_path):
    p = _py(WHERE, ROOT, tmp_path / "home")
    assert p.stdout.strip() == ".cache/normref" and p.stderr == ""
    assert not (tmp_path / "home").exists()


@pytest.mark.parametrize("platform,env,want", [
    ("darwin", {}, "Library/Caches/normref"),
    ("win32", {"LOCALAPPDATA": "/x/AppData/Local"}, "/x/AppData/Local/normref"),
    ("linux", {"XDG_CACHE_HOME": "/xdg"}, "/xdg/normref"),
])
def test_user_cache_dir_follows_the_platforms_rule(monkeypatch, tmp_path, platform, env, want):
    monkeypatch.setattr(sys, "platform", platform)
    monkeypatch.setenv("HOME", str(tmp_path))
    for k in ("LOCALAPPDATA", "XDG_CACHE_HOME"):
        monkeypatch.delenv(k, raising=False)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    got = cache.user_cache_dir().as_posix()
    assert got == want if want.startswith("/") else got == f"{tmp_path.as_posix()}/{want}"


def _cache_cmd(tmp_path, *args, home=None, **env):
    full = {k: v for k, v in os.environ.items() if k not in ("NORMREF_CACHE", "XDG_CACHE_HOME")}
    full.update(PYTHONPATH=str(ROOT), **env)
    if home is not None:
        full["HOME"] = str(home)
    return subprocess.run([sys.executable, "-m", "normref", "cache", *args], cwd=tmp_path, env=full,
                          capture_output=True, text=True, timeout=60)


def _normref_writes(folder: Path, *kinds: str) -> None:
    """Entries written the way normref writes them (cache.put), in a fresh process."""
    code = "; ".join(["from normref import cache"] + [f"cache.put({k!r}, 'k', b'x' * 100_000, '.bin')" for k in kinds])
    p = subprocess.run([sys.executable, "-c", code], env=dict(os.environ, NORMREF_CACHE=str(folder), PYTHONPATH=str(ROOT)),
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr


def test_the_cache_command_shows_where_and_how_much_and_clears(tmp_path):
    folder = tmp_path / "c"
    run = lambda *a: _cache_cmd(tmp_path, *a, NORMREF_CACHE=str(folder))
    empty = run("--info")
    assert empty.returncode == 0 and empty.stdout.startswith(f"{folder}: 0.0 MB (not made yet)"), empty.stdout
    assert not folder.exists(), "--info made the folder it reports on"
    _normref_writes(folder, "models", "figures")
    (folder / "models" / "w.safetensors").write_bytes(b"\0" * 2_400_000)
    info = run()  # --info is the default
    lines = info.stdout.splitlines()
    assert lines[0] == f"{folder}: 2.6 MB", lines
    assert lines[1].split() == ["models", "2.5", "MB"] and lines[2].split() == ["figures", "0.1", "MB"], lines
    assert len(lines) == 3, "the marker is not listed"
    cleared = run("--clear")
    assert cleared.returncode == 0 and cleared.stdout.strip() == f"cleared {folder} (2.6 MB freed)", cleared.stdout
    assert not folder.exists()
    again = run("--clear")
    assert again.returncode == 0 and "nothing to clear" in again.stdout and not folder.exists()


def test_normref_marks_the_cache_folder_it_makes_and_records_its_entries(tmp_path):
    folder = tmp_path / "c"
    _normref_writes(folder, "figures", "data")
    tag = (folder / cache.MARKER).read_text(encoding="utf-8")
    assert tag.startswith("Signature: 8a477f597d28d172789f06886806bc55"), "a cache directory tag (bford.info/cachedir)"
    assert cache.made_by_normref(folder) and cache.recorded_entries(folder) == {"figures", "data"}
    _normref_writes(folder, "figures", "snippets")  # a second process adds only what is new
    again = (folder / cache.MARKER).read_text(encoding="utf-8")
    assert again.count("entry: figures") == 1 and cache.recorded_entries(folder) == {"figures", "data", "snippets"}


def test_a_stray_file_in_normrefs_cache_survives_clear(tmp_path):
    folder = tmp_path / "c"
    _normref_writes(folder, "figures")
    (folder / "mystuff").mkdir()
    (folder / "mystuff" / "notes.txt").write_text("important")
    (folder / "figures" / "k.bin").write_bytes(b"y")
    cleared = _cache_cmd(tmp_path, "--clear", NORMREF_CACHE=str(folder))
    assert cleared.returncode == 0, cleared.stderr
    assert "left 1 entry normref did not make: mystuff" in cleared.stdout, cleared.stdout
    assert (folder / "mystuff" / "notes.txt").read_text() == "important"
    assert not (folder / "figures").exists() and cache.made_by_normref(folder), "the marker stays with the folder"


def test_a_folder_normref_did_not_make_is_refused_and_untouched(tmp_path):
    folder = tmp_path / "dotcache"
    (folder / "mystuff").mkdir(parents=True)
    (folder / "mystuff" / "notes.txt").write_text("important")
    _normref_writes(folder, "figures")  # NORMREF_CACHE=~/.cache: normref uses the folder, but never marks it
    assert not (folder / cache.MARKER).exists()
    before = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*"))
    refused = _cache_cmd(tmp_path, "--clear", NORMREF_CACHE=str(folder))
    assert refused.returncode == 2 and refused.stdout == "", refused
    err = refused.stderr.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("python -m normref cache: error: ") and str(folder) in err[0], err
    assert "Traceback" not in refused.stderr
    assert sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*")) == before


def test_a_marker_another_program_wrote_is_not_normrefs(tmp_path):
    folder = tmp_path / "c"
    folder.mkdir()
    (folder / cache.MARKER).write_text("Signature: 8a477f597d28d172789f06886806bc55\n# made by another tool\n")
    _normref_writes(folder, "figures")
    assert "figures" not in (folder / cache.MARKER).read_text(), "normref never writes into another program's tag"
    assert _cache_cmd(tmp_path, "--clear", NORMREF_CACHE=str(folder)).returncode == 2
    assert (folder / "figures").is_dir()


def test_a_cache_from_before_the_marker_in_the_default_folder_is_adopted(tmp_path):
    home = tmp_path / "home"
    old = home / ".cache" / "normref"
    (old / "models").mkdir(parents=True)
    (old / "models" / "w.bin").write_bytes(b"x")
    _py("from normref import cache; cache.put('figures', 'k', b'x')", tmp_path, home)
    assert cache.recorded_entries(old) == {"models", "figures"}
    cleared = _cache_cmd(tmp_path, "--clear", home=home)
    assert cleared.returncode == 0 and not old.exists(), cleared
    # ...by --clear too, when nothing wrote to it since.
    (old / "models").mkdir(parents=True)
    cleared = _cache_cmd(tmp_path, "--clear", home=home)
    assert cleared.returncode == 0 and not old.exists(), cleared


@pytest.mark.parametrize("args", [(), ("--info",), ("--clear",)])
def test_info_and_clear_create_nothing_in_a_fresh_home(tmp_path, args):
    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    work.mkdir()
    p = _cache_cmd(work, *args, home=home)
    assert p.returncode == 0 and p.stderr == "", p
    assert str(home / ".cache" / "normref") in p.stdout
    assert list(home.iterdir()) == [] and list(work.iterdir()) == [], "nothing made, nothing announced"


def test_the_help_says_what_clear_deletes_and_what_it_does_with_a_cache_from_before_the_marker(tmp_path):
    p = _cache_cmd(tmp_path, "--help")
    text = " ".join(p.stdout.split())
    assert p.returncode == 0 and p.stderr == "", p
    for words in (f"writes a marker, {cache.MARKER}", "deletes those entries and nothing else",
                  "refuses (status 2) a folder without the marker", "Neither --info nor --clear creates it",
                  "default folders (the two above, named for normref) are adopted whole",
                  "a folder NORMREF_CACHE names is never adopted once it holds anything"):
        assert words in text, (words, text)
    refused = _cache_cmd(tmp_path, "--clear", NORMREF_CACHE=str(tmp_path))  # holds the folder made by pytest
    assert refused.returncode == 2 and "yours to delete by hand" in refused.stderr, refused
