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


def test_the_cache_command_shows_where_and_how_much_and_clears(tmp_path):
    folder = tmp_path / "c"
    env = dict(os.environ, NORMREF_CACHE=str(folder), PYTHONPATH=str(ROOT))
    run = lambda *a: subprocess.run([sys.executable, "-m", "normref", "cache", *a], cwd=tmp_path, env=env,
                                    capture_output=True, text=True, timeout=60)
    empty = run("--info")
    assert empty.returncode == 0 and empty.stdout.startswith(f"{folder}: 0.0 MB (not made yet)"), empty.stdout
    (folder / "models").mkdir(parents=True)
    (folder / "models" / "w.safetensors").write_bytes(b"\0" * 2_500_000)
    (folder / "figures").mkdir()
    (folder / "figures" / "f.svg").write_bytes(b"\0" * 100_000)
    info = run()  # --info is the default
    lines = info.stdout.splitlines()
    assert lines[0] == f"{folder}: 2.6 MB", lines
    assert lines[1].split() == ["models", "2.5", "MB"] and lines[2].split() == ["figures", "0.1", "MB"], lines
    cleared = run("--clear")
    assert cleared.returncode == 0 and cleared.stdout.strip() == f"cleared {folder} (2.6 MB freed)"
    assert not folder.exists()
