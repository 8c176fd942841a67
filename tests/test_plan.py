"""``python -m normsite.prepare --plan``: what an edit re-runs, by the key recipe itself (issue U's table)."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from support import ROOT, load_tool
from normsite import plan


@pytest.fixture(scope="module")
def scans(tmp_path_factory):
    """One folder of source scans for this module's key processes (keyed by content: each version of a file is
    parsed once for all of them, as normsite.plan.plans shares one between its edits)."""
    return tmp_path_factory.mktemp("plan-scans")


@pytest.fixture(scope="module")
def before(scans):
    return plan._keys_in(ROOT, scans)  # the checkout itself: a copy's keys must equal them (no absolute path)


@pytest.fixture(scope="module")
def plans(before, scans):
    """What each of normsite.plan.EDITS re-runs (a fresh process in a copy of the tree each, 7 in all): computed
    once, for the tests below and for CONTRIBUTING.md's table. The tests that use it key for seconds, so they run
    in `make test` (marker `command`); the everyday tier plans one edit, the value module's, below."""
    return plan.plans(ROOT, before, scans=scans)


# The table's edits as `make test` checks them: seven key processes, about 6 CPU-s (see `plans`).
TABLE = pytest.mark.command


def test_a_copy_of_the_tree_has_the_same_keys(before, scans):
    assert plan.plan({}, ROOT, before=before, scans=scans) == []


@TABLE
def test_a_card_edit_re_runs_the_practice_page_and_the_deck_and_no_figure(plans):
    got = plans["card"]
    assert {"directives/practice:practice[en]", "directives/practice:practice[zh]", "pages/anki:practice deck"} <= set(got)
    # and what normsite.content.datasets (cards, glossary, quiz widgets) and the card-count values read; no figure
    assert all(r.startswith(("directives/practice:", "pages/anki:", "directives/data:", "directives/value:practice."))
               for r in got), got


def _values_importing(module: str, got: list[str]) -> None:
    """Every value and table in ``got`` imports ``module``; the rest is the wheel, the deck, the ledger and
    the practice page (which show values); no figure."""
    from normref import cache, values

    for r in got:
        m = re.fullmatch(r"directives/(value|table):(.+)\[(zh|en)\]", r)
        if m:
            assert module in cache.closure((values.module_of(m.group(2), *(["table"] if m.group(1) == "table" else [])),)), r
        else:
            assert r in ("wheels/normref", "pages/anki:practice deck") or r.startswith(("directives/ledger:", "directives/practice:")), r


@TABLE
def test_one_chinese_label_re_runs_only_the_values_of_its_section(plans):
    """Its section's module (values.sink) and what imports it, by the import closure; no figure; the wheel
    ships the file."""
    got = plans["label"]
    assert "directives/value:sink.first[zh]" in got and "directives/table:sink.layers[zh]" in got
    _values_importing("normref.values.sink", got)


def test_a_comment_in_a_value_module_re_runs_the_values_that_import_it(before, scans):
    """The everyday tier's one edit (a single key process; `make test` also checks it in the table, below)."""
    edit = next(e for e in plan.EDITS if e.id == "value module")
    got = plan.plan({edit.path: edit.change((ROOT / edit.path).read_text(encoding="utf-8"))}, ROOT, before=before,
                    scans=scans)
    assert "directives/value:worked.x[zh]" in got and "directives/value:worked.x[en]" in got
    _values_importing("normref.values.basics", got)


@TABLE
def test_a_comment_in_figures_yml_re_runs_only_the_wheel_that_ships_it(plans):
    assert plans["figures.yml"] == ["wheels/normref"]


@TABLE
def test_a_normsite_module_re_runs_only_the_steps_that_import_it(plans):
    assert plans["mathtex"] == ["pages/ipynb:* (every page)", "pages/math:* (every page)", "pages/nbcode:* (every page)",
                                "pages/scrub:* (every page)", "pages/search:* (every page)"]
    assert plans["colab"] == []


@TABLE
def test_a_test_file_re_runs_nothing(plans):
    assert plans["test"] == []


@TABLE
def test_the_contributing_table_is_the_one_rendered_from_the_plans(plans):
    plan_table = load_tool("plan_table")
    doc = plan_table.DOC.read_text(encoding="utf-8")
    assert plan_table.doc_block(doc) == plan.table(plans), \
        "CONTRIBUTING.md's table of what an edit re-runs is out of date: run python tools/plan_table.py"


def test_an_edit_that_no_longer_fits_names_the_list_to_update():
    edit = next(e for e in plan.EDITS if e.id == "label")
    with pytest.raises(ValueError, match="normsite.plan.EDITS"):
        edit.change("labels: {}\n")


@pytest.mark.command  # the command end to end (3 processes, 4 s); plan() itself is tested above: make test only
def test_the_cli_prints_the_plan_of_an_edit():
    proc = subprocess.run([sys.executable, "-m", "normsite.prepare", "--plan", "tests/test_ledger.py"], cwd=ROOT,
                          capture_output=True, text=True)
    assert proc.returncode == 0 and proc.stdout == "", proc.stderr
    proc = subprocess.run([sys.executable, "-m", "normsite.prepare", "--plan", "/etc/hosts"], cwd=ROOT,
                          capture_output=True, text=True)
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1


def test_page_steps_are_the_ones_the_build_caches():
    """normsite.plan.PAGE_STEPS (what --plan reports for the page steps of every page) names each step the build
    caches and the modules it keys on, as the code that makes them says: every ``stepcache.cached(NAME, ...,
    modules=(...))`` call in normsite, and the CSS pruner's own ``cache.step_of("csstrim", ...)``. The Anki deck is
    reported with the practice page's expansions instead."""
    import ast

    found: dict[str, tuple] = {}
    for f in sorted((ROOT / "normsite").glob("*.py")):
        for n in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
            if (not isinstance(n, ast.Call) or not isinstance(n.func, ast.Attribute) or not n.args
                    or not isinstance(n.args[0], ast.Constant)):
                continue
            owner, kw = getattr(n.func.value, "id", None), {k.arg: k.value for k in n.keywords}
            if (owner, n.func.attr) == ("stepcache", "cached"):
                found[ast.literal_eval(n.args[0])] = ast.literal_eval(kw["modules"])
            elif (owner, n.func.attr) == ("cache", "step_of") and ast.literal_eval(n.args[0]) == "csstrim":
                found["csstrim"] = ast.literal_eval(kw["code"])
    assert found.pop("anki") == ("normsite.practice",)
    assert found == dict(plan.PAGE_STEPS)
