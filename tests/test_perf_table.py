"""CONTRIBUTING.md's performance table is what `make perf` recorded (tools/perf-build.json),
rendered by tools/perf_table.py: never typed, and never out of step with the measurements."""

from __future__ import annotations

import copy
import json
import subprocess
import sys

import pytest

from support import ROOT

sys.path.insert(0, str(ROOT / "tools"))
import perf_table  # noqa: E402


def _data() -> dict:
    return json.loads(perf_table.PERF_JSON.read_text(encoding="utf-8"))


def test_the_contributing_table_is_the_one_rendered_from_the_recorded_measurements():
    doc = perf_table.DOC.read_text(encoding="utf-8")
    assert perf_table.doc_block(doc) == perf_table.render(_data()), \
        "CONTRIBUTING.md's performance table disagrees with tools/perf-build.json: run python tools/perf_table.py"


def test_every_part_names_its_machine_and_commit():
    data = _data()
    assert {"build", "serve"} <= set(data["parts"]), "the build budgets are measured"
    for name, part in data["parts"].items():
        s = part["stamp"]
        assert s["cpu"]["model_name"] and isinstance(s["cpu"]["family"], int) and isinstance(s["cpu"]["model"], int), name
        assert s["commit"] and len(s["load"]) == 3 and s["cores"] >= 1 and s["date"], name
        assert f"family {s['cpu']['family']} model {s['cpu']['model']}" in perf_table.render(data)


def test_the_check_fails_when_the_document_and_json_disagree(tmp_path):
    data = _data()
    doc = tmp_path / "CONTRIBUTING.md"
    doc.write_text(perf_table.rendered_doc(perf_table.DOC.read_text(encoding="utf-8"), data), encoding="utf-8")
    changed = copy.deepcopy(data)
    changed["parts"]["build"]["warm_s"] = [x + 100 for x in changed["parts"]["build"]["warm_s"]]
    for d, want in ((data, 0), (changed, 1)):
        j = tmp_path / "perf.json"
        j.write_text(json.dumps(d), encoding="utf-8")
        p = subprocess.run([sys.executable, str(ROOT / "tools" / "perf_table.py"), "--check", "--json", str(j),
                            "--doc", str(doc)], capture_output=True, text=True)
        assert p.returncode == want, p.stderr
    # A verdict follows the numbers: 100 s more is over the warm budget.
    assert any("warm build" in r[0] and r[3] == "**fails**" for r in perf_table.rows(changed))
    with pytest.raises(ValueError, match="between"):
        perf_table.doc_block("no markers here")


def test_a_serve_run_with_directive_edits_labels_both_rows():
    """The budget row is the prose edit (the prepare pass's manifest reused); an edit adding a value, which
    runs the pass, gets its own row, measured and said to be no budget."""
    data = copy.deepcopy(_data())
    data["parts"]["serve"]["directive_edit_to_served_s"] = [3.0, 2.5, 4.0]
    got = {r[0]: r for r in perf_table.rows(data)}
    prose = [r for k, r in got.items() if k.startswith("edit one page under `make serve`")]
    assert len(prose) == 1 and "a prose edit" in prose[0][0]
    added = [r for k, r in got.items() if "the prepare pass runs" in k]
    assert len(added) == 1 and added[0][1:] == ("3.00 s", "not a budget", "")


def test_the_readme_leaves_the_table_to_contributing():
    """The README is one screen: the table and its markers live in CONTRIBUTING.md only."""
    assert perf_table.BEGIN not in (ROOT / "README.md").read_text(encoding="utf-8")
