"""The copy test's constraints file and its switch, without its served site or virtualenvs (tests/test_copy.py is
marked `copy` whole, so its own checks never run in the fast tier)."""

from __future__ import annotations

import ast
import re

from normsite import install
from support import ROOT, copy_venv_env

COPY_TEST = (ROOT / "tests" / "test_copy.py").read_text(encoding="utf-8")


def test_the_constraints_file_holds_torch_at_requirements_pin_unless_unconstrained(tmp_path, monkeypatch):
    pin = re.search(r'^TORCH_PIN = "([^"]+)"', COPY_TEST, re.M).group(1)
    assert pin == install.torch_pin(), "the copy test pins requirements.txt's torch"
    assert 'make_venv(path, tmp, constraints=None if UNCONSTRAINED else TORCH_PIN)' in COPY_TEST
    monkeypatch.setenv("PIP_CONSTRAINT", str(tmp_path / "theirs.txt"))  # this machine's own: never passed on
    env = copy_venv_env(tmp_path / "venv", tmp_path, pin)
    assert (tmp_path / "constraints.txt").read_text(encoding="utf-8") == pin + "\n"
    assert env["PIP_CONSTRAINT"] == str(tmp_path / "constraints.txt")
    assert env["VIRTUAL_ENV"] == str(tmp_path / "venv") and env["PATH"].startswith(str(tmp_path / "venv" / "bin"))
    free = copy_venv_env(tmp_path / "venv", tmp_path / "other", None)
    assert "PIP_CONSTRAINT" not in free and not (tmp_path / "other").exists()


def test_the_unconstrained_switch_is_documented_where_the_copy_test_is():
    doc = ast.get_docstring(ast.parse(COPY_TEST))
    assert 'os.environ.get("NORMREF_COPY_UNCONSTRAINED") == "1"' in COPY_TEST
    for text in (doc, (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")):
        assert "NORMREF_COPY_UNCONSTRAINED=1" in text and "copy-times-unconstrained.json" in text
        assert "PIP_CONFIG_FILE=/dev/null" in text and "toll_booth_gradients or copy_times_are_recorded" in text
