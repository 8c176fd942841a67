"""``python -m normsite.prepare --plan``: what an edit re-runs, by the key recipe itself (issue U's table)."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from support import ROOT
from normsite import plan


@pytest.fixture(scope="module")
def before():
    return plan._keys_in(ROOT)  # the checkout itself: a copy's keys must equal them (no absolute path)


def _edit(rel: str, old: str, new: str) -> str:
    text = (ROOT / rel).read_text(encoding="utf-8")
    assert old in text, f"{rel} no longer holds {old!r}"
    return text.replace(old, new, 1)


def test_a_copy_of_the_tree_has_the_same_keys(before):
    assert plan.plan({}, ROOT, before=before) == []


def test_a_card_edit_re_runs_the_practice_page_and_the_deck_and_no_figure(before):
    rel = "normsite/content/cards.yml"
    text = (ROOT / rel).read_text(encoding="utf-8")
    m = re.search(r"^\s+en: '?(\w+)", text, re.M)
    got = plan.plan({rel: text[:m.start(1)] + "Edited" + text[m.start(1):]}, ROOT, before=before)
    assert {"directives/practice:practice[en]", "directives/practice:practice[zh]", "pages/anki:practice deck"} <= set(got)
    # and what normsite.content.datasets (cards, glossary, quiz widgets) and the card-count values read; no figure
    assert all(r.startswith(("directives/practice:", "pages/anki:", "directives/data:", "directives/value:practice."))
               for r in got), got


def test_one_chinese_label_re_runs_only_the_values_of_its_section(before):
    """Its section's module (values.sink) and what imports it, by the import closure; no figure; the wheel
    ships the file."""
    from normref import cache, values

    got = plan.plan({"normref/labels.yml": _edit("normref/labels.yml", "values.sink:\n  block: 块\n  position 0: 位置 0",
                                                 "values.sink:\n  block: 块\n  position 0: 位置零")}, ROOT, before=before)
    assert "directives/value:sink.first[zh]" in got and "directives/table:sink.layers[zh]" in got
    for r in got:
        m = re.fullmatch(r"directives/(value|table):(.+)\[(zh|en)\]", r)
        if m:
            assert "normref.values.sink" in cache.closure((values.module_of(m.group(2), *(["table"] if m.group(1) == "table" else [])),)), r
        else:
            assert r in ("wheels/normref", "pages/anki:practice deck") or r.startswith(("directives/ledger:", "directives/practice:")), r


def test_a_comment_in_figures_yml_re_runs_only_the_wheel_that_ships_it(before):
    rel = "normref/figures/figures.yml"
    got = plan.plan({rel: (ROOT / rel).read_text(encoding="utf-8") + "\n# a comment\n"}, ROOT, before=before)
    assert got == ["wheels/normref"]


def test_a_normsite_module_re_runs_only_the_steps_that_import_it(before):
    for rel, expected in (("normsite/mathtex.py", ["pages/math:* (every page)", "pages/nbcode:* (every page)",
                                                    "pages/scrub:* (every page)", "pages/search:* (every page)"]),
                          ("normsite/colab.py", [])):
        got = plan.plan({rel: (ROOT / rel).read_text(encoding="utf-8") + "\n# a comment\n"}, ROOT, before=before)
        assert got == expected, (rel, got)


def test_a_test_file_re_runs_nothing(before):
    rel = "tests/test_ledger.py"
    assert plan.plan({rel: (ROOT / rel).read_text(encoding="utf-8") + "\n# a comment\n"}, ROOT, before=before) == []


def test_the_cli_prints_the_plan_of_an_edit():
    proc = subprocess.run([sys.executable, "-m", "normsite.prepare", "--plan", "tests/test_ledger.py"], cwd=ROOT,
                          capture_output=True, text=True)
    assert proc.returncode == 0 and proc.stdout == "", proc.stderr
    proc = subprocess.run([sys.executable, "-m", "normsite.prepare", "--plan", "/etc/hosts"], cwd=ROOT,
                          capture_output=True, text=True)
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1
