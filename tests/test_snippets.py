"""Every snippet runs as a reader would run it, and the worked example prints what the page states."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import normref

ROOT = Path(__file__).resolve().parent.parent
SNIPPETS = sorted((ROOT / "snippets").glob("*.py"))


def run(path: Path) -> str:
    env = dict(os.environ, PYTHONPATH=str(ROOT), MPLBACKEND="Agg")
    p = subprocess.run([sys.executable, str(path)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, f"{path.name} failed:\n{p.stderr[-3000:]}"
    return p.stdout


def test_there_are_snippets():
    assert any(p.name == "worked_example.py" for p in SNIPPETS)


@pytest.mark.parametrize("path", SNIPPETS, ids=[p.name for p in SNIPPETS])
def test_snippet_runs_and_has_docstring(path):
    src = path.read_text(encoding="utf-8")
    assert src.lstrip().startswith('"""'), f"{path.name} must start with a one-paragraph docstring"
    assert run(path).strip(), f"{path.name} prints nothing; a snippet prints what the page shows"


def test_worked_example_prints_normrefs_numbers():
    out = run(ROOT / "snippets" / "worked_example.py")
    y = normref.rms_norm(np.array([2.0, -1.0, 3.0, 0.0]))
    assert f"RMS(x)    = {round(float(np.sqrt(3.5 + 1e-6)), 4)}" in out
    assert str(np.round(y, 4)) in out
    assert "agrees with by-hand : True" in out
