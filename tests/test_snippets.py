"""Every snippet runs as a reader would run it, and the worked example prints what the page states."""

from __future__ import annotations

import numpy as np
import pytest

import normref
from support import ROOT, run_snippet, snippet_loads_models

SNIPPETS = sorted((ROOT / "snippets").glob("*.py"))
# A snippet that loads real weights runs in its own test, which asks for the models (marker `models`).
PLAIN = [p for p in SNIPPETS if not snippet_loads_models(p)]
MODELS = [p for p in SNIPPETS if snippet_loads_models(p)]


def _check(path):
    src = path.read_text(encoding="utf-8")
    assert src.lstrip().startswith('"""'), f"{path.name} must start with a one-paragraph docstring"
    assert run_snippet(path).strip(), f"{path.name} prints nothing; a snippet prints what the page shows"


def test_there_are_snippets():
    assert any(p.name == "worked_example.py" for p in SNIPPETS)
    assert set(PLAIN) | set(MODELS) == set(SNIPPETS) and PLAIN


@pytest.mark.parametrize("path", PLAIN, ids=[p.name for p in PLAIN])
def test_snippet_runs_and_has_docstring(path):
    _check(path)


@pytest.mark.parametrize("path", MODELS, ids=[p.name for p in MODELS])
def test_model_snippet_runs_and_has_docstring(path, real_models):
    _check(path)


def test_worked_example_prints_normrefs_numbers():
    out = run_snippet("worked_example.py")
    y = normref.rms_norm(np.array([2.0, -1.0, 3.0, 0.0]))
    assert f"RMS(x)    = {round(float(np.sqrt(3.5 + 1e-6)), 4)}" in out
    assert str(np.round(y, 4)) in out
    assert "agrees with by-hand : True" in out
