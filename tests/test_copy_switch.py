"""The copy test's switches, without its served site or virtualenvs (tests/test_copy.py is marked `copy` whole)."""

from __future__ import annotations

from support import ROOT

import test_copy


def test_the_constraints_file_holds_torch_at_requirements_pin_unless_unconstrained(tmp_path, monkeypatch):
    from normsite import install

    assert test_copy.TORCH_PIN == install.torch_pin(), "the constraints file pins requirements.txt's torch"
    monkeypatch.setenv("PIP_CONSTRAINT", str(tmp_path / "theirs.txt"))  # this machine's own: never passed on
    env = test_copy.venv_env(tmp_path / "venv", tmp_path, unconstrained=False)
    assert (tmp_path / "constraints.txt").read_text(encoding="utf-8") == test_copy.TORCH_PIN + "\n"
    assert env["PIP_CONSTRAINT"] == str(tmp_path / "constraints.txt")
    assert env["VIRTUAL_ENV"] == str(tmp_path / "venv") and env["PATH"].startswith(str(tmp_path / "venv" / "bin"))
    free = test_copy.venv_env(tmp_path / "venv", tmp_path / "other", unconstrained=True)
    assert "PIP_CONSTRAINT" not in free and not (tmp_path / "other").exists()


def test_the_unconstrained_switch_is_documented_where_the_copy_test_is():
    for text in (test_copy.__doc__, (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")):
        assert "NORMREF_COPY_UNCONSTRAINED=1" in text and "copy-times-unconstrained.json" in text
        assert "PIP_CONFIG_FILE=/dev/null" in text and 'toll_booth_gradients or copy_times_are_recorded' in text
