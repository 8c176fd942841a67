"""normsite.content.schema, the one validation layer of the data files, and normref._imports, the one import scanner."""

from __future__ import annotations

import ast

import pytest
import yaml

from normsite.content import glossary as gl
from normsite.content import schema
from normref._imports import imported
from normsite.content import quiz as q
from normsite import ledger as L


class _Entry(schema.Model):
    id: schema.Slug
    name: schema.Text
    tags: schema.Strings
    options: list[schema.Text]


def _problems(items, names=None):
    errors: list[str] = []
    ok = schema.validate_entries(_Entry, items, schema.entry_name("entry"), errors, names)
    return ok, errors


def test_each_problem_names_the_entry_the_field_and_what_was_expected():
    good = {"id": "a", "name": {"zh": "甲", "en": " a\n b "}, "options": []}
    ok, errors = _problems([good,
                            {"id": "b", "name": {"zh": "乙"}, "options": []},
                            {"id": "Bad id", "name": {"zh": "丙", "en": "c"}, "options": []},
                            {"id": "d", "name": {"zh": "丁", "en": "d"}, "options": [], "colour": 1},
                            {"id": "e", "name": {"zh": "戊", "en": "e"}, "tags": [""], "options": []},
                            "f"])
    assert [k for k, _ in ok] == [0] and ok[0][1].name == {"zh": "甲", "en": "a b"} and ok[0][1].tags == ()
    assert errors == [
        "entry 'b': 'name' has no 'en' text (both languages are required)",
        "entry 'Bad id': 'id' must be lowercase letters/digits joined by hyphens (it is the anchor), got 'Bad id'",
        "entry 'd': unknown key(s) ['colour']; expected only id, name, tags, options",
        "entry 'e': 'tags' must be a list of non-empty strings, got ['']",
        "entry #6: expected a mapping with the keys id, name, tags, options, got str",
    ]


def test_a_missing_key_is_checked_as_none_and_list_items_can_be_named():
    _, errors = _problems([{"id": "a", "options": [{"zh": "一", "en": "one"}, {"zh": "二"}]}],
                          {"options": lambda i, _: f"option {'AB'[i]}"})
    assert errors == ["entry 'a': 'name' must be a mapping with 'zh' and 'en' text, got NoneType",
                      "entry 'a', option B: 'option' has no 'en' text (both languages are required)"]


def test_pydantic_own_messages_say_what_was_given():
    class Plain(schema.Model):
        n: int

    errors: list[str] = []
    assert schema.validate(Plain, {"n": "many"}, "file.yml", {}, errors) is None
    assert errors == ["file.yml: 'n' input should be a valid integer, unable to parse string as an integer, got 'many'"]


@pytest.mark.parametrize("loader, error", [(gl.load, gl.GlossaryError), (q.load, q.QuizError), (L.load, L.LedgerError)])
def test_every_loader_names_the_file_and_raises_a_value_error(tmp_path, loader, error):
    path = tmp_path / "data.yml"
    path.write_text(yaml.safe_dump({"unexpected": 1}), encoding="utf-8")
    with pytest.raises(error) as e:
        loader(path)
    assert isinstance(e.value, ValueError) and str(path) in str(e.value) and "unknown key(s) ['unexpected']" in str(e.value)


def test_the_import_scanner_resolves_relative_imports_and_asks_what_is_a_module():
    tree = ast.parse("import a.b\nfrom . import sib, name\nfrom ..up import thing\n"
                     "try:\n    import t1\nexcept ImportError:\n    import t2\n"
                     "def f():\n    import lazy\n")
    assert imported(tree, "p.q.m", False) == {"a", "a.b", "p.q", "p.q.sib", "p.q.name", "p.up", "p.up.thing",
                                              "t1", "t2", "lazy"}
    assert imported(tree, "p.q.m", False, is_module=lambda m: m == "p.q.sib") == {
        "a", "a.b", "p.q.sib", "p.q", "p.up", "t1", "t2", "lazy"}
    # What runs on import: the module body and its if/try/with bodies, not functions or except handlers.
    assert imported(tree, "p.q.m", False, top_level_only=True) == {
        "a", "a.b", "p.q", "p.q.sib", "p.q.name", "p.up", "p.up.thing", "t1"}
    assert imported(ast.parse("from . import x\n"), "p", True) == {"p", "p.x"}


def test_the_committed_figure_texts_pass_the_schema_and_normrefs_checks_against_the_figures(built_cache):
    """figure_texts.check: the schema, then normref's checks, which fill every figure's texts: the layer-drop
    and S-curve captions' fields are measured on real weights, read here from the build's cache (build tier;
    tests/test_figures.py fills the others in the fast tier)."""
    from normsite.content import figure_texts

    figure_texts.check()


def test_the_site_validates_normrefs_figure_texts_whole(tmp_path):
    """normref reads figures.yml with plain checks (its wheel has no pydantic); the site validates the file
    whole with its schema (normsite.content.figure_texts) in the prepare pass and here."""
    from normref import figures
    from normsite.content import figure_texts

    figure_texts.load()  # the committed file, by the schema (normref's checks against the figures: below)
    path = tmp_path / "figures.yml"
    path.write_text(yaml.safe_dump({"figures": {"x": {"alt": {"zh": "图", "en": "a"}, "caption": {"zh": "图"},
                                                      "credit": "me"}}}, allow_unicode=True), encoding="utf-8")
    with pytest.raises(figures.FigureTextError) as e:
        figure_texts.load(path)
    assert "figures.yml: figure 'x': unknown key(s) ['credit']; expected only alt, caption" in str(e.value)
    # normref's own reading of the same file fails too, naming the file, the figure and the key.
    with pytest.raises(figures.FigureTextError, match=r"figures\.yml: figure 'x': expected a mapping with the keys alt, caption"):
        figures.texts(path)
