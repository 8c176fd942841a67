"""The interview quiz: data file (normsite/content/quiz.yml), loader and validator, and its page Markdown (normsite.quiz)."""

from __future__ import annotations

import copy
import re

import pytest
import yaml

from normref import data
from normsite.content import quiz as q
from normsite import quiz as site_quiz


@pytest.fixture(scope="module")
def raw():
    return yaml.safe_load(q.DATA.read_text(encoding="utf-8"))


def test_quiz_loads_from_its_data_file_in_both_languages():
    questions = q.load()
    assert len(questions) >= 5 and [x["id"] for x in questions] == [x["id"] for x in q.QUIZ]
    for lang in q.LANGS:
        for item in q.quiz(lang):
            assert item["prompt"] and item["explain"] and len(item["options"]) >= 3
            assert 0 <= item["answer"] < len(item["options"])
    assert data.get("quiz", "zh")[0]["prompt"] != data.get("quiz", "en")[0]["prompt"]
    with pytest.raises(ValueError, match="lang"):
        q.quiz("fr")


def test_quiz_text_no_longer_says_about_20_layers():
    text = q.DATA.read_text(encoding="utf-8")
    assert "20 layers" not in text and "20 层" not in text
    assert "pre-norm" not in text and "normalise" not in text


@pytest.mark.parametrize("mutate, message", [
    (lambda x: x.update(answer=7), "'answer' must be the index of one of its"),
    (lambda x: x.update(answer=True), "'answer' must be the index"),
    (lambda x: x["prompt"].pop("en"), "'prompt' has no 'en' text"),
    (lambda x: x["options"][0].update(zh=""), "option A: 'option' has no 'zh' text"),
    (lambda x: x.update(options=[{"zh": "一", "en": "one"}]), "'options' must be a list of 2 to"),
    (lambda x: x.update(hint="no"), "unknown key"),
    (lambda x: x.update(id="Not An Id"), "'id' must be lowercase"),
])
def test_validator_names_the_question(raw, mutate, message):
    bad = copy.deepcopy(raw)
    mutate(bad["questions"][0])
    with pytest.raises(q.QuizError, match=re.escape(message)):
        q.parse(bad)


def test_duplicate_ids_and_bad_files_are_rejected(raw, tmp_path):
    bad = copy.deepcopy(raw)
    bad["questions"].append(copy.deepcopy(bad["questions"][0]))
    with pytest.raises(q.QuizError, match="duplicate id"):
        q.parse(bad)
    for junk in (None, [], {"questions": []}, {"other": 1}):
        with pytest.raises(q.QuizError):
            q.parse(junk)
    with pytest.raises(FileNotFoundError):
        q.load(tmp_path / "missing.yml")


@pytest.mark.parametrize("lang", q.LANGS)
def test_site_layer_renders_the_quiz_with_answers_collapsed(lang):
    md = site_quiz.render_markdown(lang)
    items = q.quiz(lang)
    assert md.count('<div class="nr-quiz"') == len(items)
    for n, item in enumerate(items, 1):
        assert f'id="quiz-{item["id"]}"' in md
        assert f"**{n}. " in md
        assert f"    **{q.LETTERS[item['answer']]}.** " in md
    assert md.count("??? question") == len(items)
    with pytest.raises(ValueError, match="lang"):
        site_quiz.render_markdown("fr")


def test_site_layer_escapes_and_checks_its_input():
    one = [{"id": "x", "prompt": "a < b?", "options": ["<yes>", "no"], "answer": 0, "explain": "because <b>"}]
    md = site_quiz.render_markdown("en", one)
    assert "&lt;yes&gt;" in md and "a &lt; b?" in md and "because &lt;b&gt;" in md
    with pytest.raises(ValueError, match="answer"):
        site_quiz.render_markdown("en", [dict(one[0], answer=5)])


def test_normref_does_not_import_the_site_layer():
    import ast
    from pathlib import Path

    src = Path(q.__file__).read_text(encoding="utf-8")
    for node in ast.walk(ast.parse(src)):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names = [a.name for a in node.names] + [getattr(node, "module", "") or ""]
            assert not any(n.startswith("normsite") for n in names)
