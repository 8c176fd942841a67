"""The README is one screen, and every command and path it shows exists (issue V, item 5).

What it names is read from its code spans and code blocks: `make X` is a Makefile target, `python -m normref X`
a subcommand, `python tools/X.py` a script that knows the options shown, a repository path a file or folder
(build outputs and caches aside), a relative link a file. CONTRIBUTING.md's `make` targets are checked too.
"""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from support import ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")
# What a build, a set-up or a reader's machine makes: named in the README, never committed.
MADE = ("site/", "site-figures/", ".venv", ".cache/", "~/", "test-artifacts/", "print/")


def _code(text: str) -> list[str]:
    """The text of every code span and every line of every fenced code block (comments dropped)."""
    blocks = re.findall(r"^```[^\n]*\n(.*?)^```", text, re.M | re.S)
    lines = [ln.split("#", 1)[0].strip() for b in blocks for ln in b.splitlines()]
    rest = re.sub(r"^```[^\n]*\n.*?^```", "", text, flags=re.M | re.S)
    spans = [" ".join(s.split()) for s in re.findall(r"`([^`\n]+(?:\n[^`\n]+)?)`", rest)]
    return [x for x in lines + spans if x]


def _make_targets() -> set[str]:
    return set(re.findall(r"^([A-Za-z][\w-]*):", (ROOT / "Makefile").read_text(encoding="utf-8"), re.M))


def test_the_readme_is_one_screen():
    n = len(README.splitlines())
    assert n <= 120, f"README.md has {n} lines; the rest belongs in CONTRIBUTING.md"
    assert (ROOT / "CONTRIBUTING.md").is_file()


@pytest.mark.parametrize("doc", ["README.md", "CONTRIBUTING.md"])
def test_every_make_target_shown_exists(doc):
    shown = {m.group(1) for c in _code((ROOT / doc).read_text(encoding="utf-8"))
             for m in re.finditer(r"(?:^|\s)make ([a-z][\w-]*)", c)}
    assert shown and not shown - _make_targets(), f"{doc} shows make targets the Makefile lacks: {shown - _make_targets()}"


def test_every_normref_command_shown_exists():
    shown = sorted({m.group(1) for c in _code(README) if (m := re.search(r"python -m normref (\w+)", c))})
    assert shown, "the README shows no normref command"
    for sub in shown:
        p = subprocess.run([sys.executable, "-m", "normref", sub, "--help"], capture_output=True, text=True,
                           cwd=ROOT, timeout=120)
        assert p.returncode == 0, f"python -m normref {sub}: {p.stdout}{p.stderr}"
    for c in _code(README):
        for sub, opts in re.findall(r"python -m normref (\w+)((?: --[\w-]+)+)", c):
            usage = subprocess.run([sys.executable, "-m", "normref", sub, "--help"], capture_output=True, text=True,
                                   cwd=ROOT, timeout=120).stdout
            for opt in opts.split():
                assert opt in usage, f"python -m normref {sub} has no {opt}"


def test_every_tool_and_option_shown_exists():
    tools = [(m.group(1), m.group(2)) for c in _code(README) if (m := re.search(r"(tools/[\w-]+\.py)(.*)", c))]
    assert tools, "the README names no tool"
    for path, args in tools:
        assert (ROOT / path).is_file(), path
        source = (ROOT / path).read_text(encoding="utf-8")
        for opt in re.findall(r"--[\w-]+", args):
            assert f'"{opt}"' in source, f"{path} has no option {opt}"


def test_every_path_and_link_shown_exists():
    path = re.compile(r"\.?[\w-]+(?:/[\w.-]+)*/?|[\w.-]+\.(?:txt|cff|md|yml|toml|py|png|json)")
    paths = {c for c in _code(README) if path.fullmatch(c) and ("/" in c or path.fullmatch(c).group().count("."))}
    paths = {p for p in paths if not p.startswith(MADE) and not re.fullmatch(r"[a-z_]+(?:\.[a-z_]+)+", p)
             or p.endswith((".txt", ".cff", ".md", ".yml", ".toml", ".py", ".png", ".json"))}
    assert {"normref/", "requirements.txt", ".ci/run"} <= paths, sorted(paths)
    missing = sorted(p for p in paths if not (ROOT / p).exists())
    assert not missing, f"README.md names paths that do not exist: {missing}"
    links = re.findall(r"\]\((?!https?:|#)([^)\s]+)\)", README)
    assert links and not [x for x in links if not (ROOT / x).exists()], links
