"""The test tiers stay honest: markers follow cost, helpers live in one place, the cache is the session's.

`make test-fast` deselects the tests marked build, browser, models, copy or command;
conftest.py sets the first three from the fixtures a test uses. These tests keep that true:
a small pytest session of its own shows the markers being earned (and a wrong
hand-written one refused), no test file imports another, and this session's
cache is a temporary folder, not the developer's .cache.
"""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from support import ROOT

TESTS = ROOT / "tests"
# What `make test-fast` deselects (copy: written on test_copy.py and test_wheel_install.py; command: on the tests that
# run a slow normref command end to end, in a process of its own).
FAST = ("build", "browser", "models", "copy", "command")


def _test_files() -> list[Path]:
    return sorted(TESTS.glob("*.py"))


def _imported_modules(path: Path) -> set[str]:
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out.add(node.module.split(".")[0])
    return out


def test_no_test_file_imports_another_test_file_or_conftest():
    local = {p.stem for p in _test_files()}
    bad = {}
    for p in _test_files():
        wrong = {m for m in _imported_modules(p) & local if m.startswith("test_") or m == "conftest"}
        if wrong:
            bad[p.name] = sorted(wrong)
    assert not bad, f"shared helpers belong in tests/support.py (fixtures in conftest.py): {bad}"


def test_test_files_build_sites_only_through_fixtures():
    """A test that builds asks for `site_builder` (or the session's site), so conftest marks it `build`."""
    bad = []
    for p in _test_files():
        if p.name in ("support.py", "conftest.py"):
            continue
        tree = ast.parse(p.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and any(a.name == "build_site" for a in node.names):
                bad.append(f"{p.name}:{node.lineno} imports build_site")
            if isinstance(node, (ast.List, ast.Tuple)):
                words = {e.value for e in node.elts if isinstance(e, ast.Constant)}
                if {"mkdocs", "build"} <= words:
                    bad.append(f"{p.name}:{node.lineno} runs mkdocs build itself")
    assert not bad, bad


CASE = '''
import pytest


def test_reads_the_site(site):
    pass


def test_uses_a_tab(clean_tab):
    pass


def test_builds_its_own(site_builder):
    pass


def test_runs_a_model(real_models):
    pass


def test_plain():
    pass


@pytest.mark.parametrize("x", [1, 2])
def test_plain_parametrized(x):
    pass
'''


# Prints each collected test with the tier markers conftest gave it.
SHOW = """
def pytest_collection_finish(session):
    for item in session.items:
        marks = sorted(m.name for m in item.iter_markers() if m.name in ("build", "browser", "models"))
        print("MARKS", item.name, ",".join(marks) or "-")
"""


def _mini_session(tmp_path: Path, body: str, args=()) -> subprocess.CompletedProcess:
    """`pytest --collect-only` in a folder holding this suite's conftest.py and support.py and one test file."""
    for name in ("conftest.py", "support.py"):
        shutil.copy(TESTS / name, tmp_path / name)
    (tmp_path / "show_marks.py").write_text(SHOW, encoding="utf-8")
    (tmp_path / "pytest.ini").write_text("[pytest]\naddopts = --strict-markers -p no:cacheprovider\nmarkers =\n"
                                         + "".join(f"  {m}: x\n" for m in FAST), encoding="utf-8")
    (tmp_path / "test_case.py").write_text(body, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "NORMREF_TEST"))}
    return subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "show_marks", *args], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120, env=dict(env, PYTHONPATH=f"{tmp_path}:{ROOT}"))


def test_markers_follow_the_fixtures(tmp_path):
    proc = _mini_session(tmp_path, CASE)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    got = dict(line.split()[1:] for line in proc.stdout.splitlines() if line.startswith("MARKS "))
    assert got == {"test_reads_the_site": "build", "test_uses_a_tab": "browser,build",
                   "test_builds_its_own": "build", "test_runs_a_model": "models", "test_plain": "-",
                   "test_plain_parametrized[1]": "-", "test_plain_parametrized[2]": "-"}, proc.stdout


def test_a_hand_written_build_marker_that_the_fixtures_do_not_earn_is_refused(tmp_path):
    body = "import pytest\n\n\n@pytest.mark.build\ndef test_hook_unit():\n    pass\n\n\n" \
           "@pytest.mark.build\ndef test_reads_the_site(site):\n    pass\n"
    proc = _mini_session(tmp_path, body)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert "test_hook_unit: marked 'build' but uses none of" in out
    assert "test_reads_the_site: marked" not in out  # a marker the fixtures earn may also be written


def test_browser_and_models_may_be_written_for_a_cost_paid_in_a_subprocess(tmp_path):
    body = "import pytest\n\n\n@pytest.mark.browser\ndef test_prints_with_chromium(site):\n    pass\n\n\n" \
           "@pytest.mark.models\ndef test_runs_the_cli():\n    pass\n"
    proc = _mini_session(tmp_path, body)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    got = dict(line.split()[1:] for line in proc.stdout.splitlines() if line.startswith("MARKS "))
    assert got == {"test_prints_with_chromium": "browser,build", "test_runs_the_cli": "models"}


def test_this_session_computes_into_its_own_cache():
    from normref import cache

    got = cache.cache_dir().resolve()
    assert got == Path(os.environ["NORMREF_CACHE"]).resolve()
    if not os.environ.get("NORMREF_TEST_CACHE"):
        assert not got.is_relative_to(ROOT), f"the tests compute into {got}, inside the checkout"
        assert got.name.startswith("normref-test-cache-")


def _pytest_args(target: str) -> list[str]:
    """The arguments `make TARGET` passes to pytest (its recipe as make would run it: `make -n`)."""
    import shlex

    out = subprocess.run(["make", "-n", target], cwd=ROOT, capture_output=True, text=True, timeout=60).stdout
    line = next(ln for ln in out.splitlines() if " -m pytest" in ln)
    return shlex.split(line.split(" -m pytest", 1)[1])


def test_the_fast_tier_runs_only_the_cheap_tests_and_the_full_suite_all(tmp_path):
    # What `make test-fast` and `make test` would run, collected in a small session of their own:
    # the fast tier keeps the plain tests and drops every one that builds, browses or loads models.
    plain = {"test_plain": "-", "test_plain_parametrized[1]": "-", "test_plain_parametrized[2]": "-"}
    body = (CASE + "\n\n@pytest.mark.copy\ndef test_copied_into_a_fresh_venv():\n    pass\n"
            "\n\n@pytest.mark.command\ndef test_runs_a_refresh_command():\n    pass\n")
    for target, want in (("test-fast", plain), ("test", None)):
        args = [a for a in _pytest_args(target) if a not in ("-n", "2", "--dist", "loadscope", "worksteal")]  # no workers
        proc = _mini_session(tmp_path, body, args)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        got = dict(line.split()[1:] for line in proc.stdout.splitlines() if line.startswith("MARKS "))
        if want is not None:
            assert got == want, (target, args, got)
        else:
            assert len(got) == 9, (target, args, got)
