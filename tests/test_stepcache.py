"""Cached page steps (normsite.stepcache) and directive expansions: an unchanged input is read back,
a changed one (the page, the glossary, the language) is computed again, never served stale."""

from __future__ import annotations

import shutil

import pytest

from support import ROOT
from normsite.content import glossary as gl
from normsite import stepcache
from normsite.build import Site

PAGE = "<p>RMSNorm keeps the scale and drops the mean.</p>"


@pytest.fixture
def cold(tmp_path, monkeypatch):
    monkeypatch.setenv("NORMREF_CACHE", str(tmp_path / "cache"))
    return tmp_path


def test_a_step_is_computed_once_per_distinct_input(cold):
    calls = []

    def step(inputs):
        return stepcache.cached("terms", "en:formulas.md", inputs, lambda: calls.append(inputs) or f"out {len(calls)}",
                                modules=("normsite.content.glossary",))

    a = ("<p>x</p>", "en", "../glossary/", "digest-1")
    assert step(a) == "out 1" and step(a) == "out 1" and len(calls) == 1  # the second is read back
    for changed in (("<p>y</p>", "en", "../glossary/", "digest-1"),  # the page
                    ("<p>x</p>", "zh", "../glossary/", "digest-1"),  # the language
                    ("<p>x</p>", "en", "../../glossary/", "digest-1"),  # where the glossary is
                    ("<p>x</p>", "en", "../glossary/", "digest-2")):  # the glossary itself
        before = len(calls)
        step(changed)
        assert len(calls) == before + 1, f"stale result for {changed}"
    # Parts are length-prefixed: moving text from one input to the next is another key.
    assert stepcache.digest("ab", "c") != stepcache.digest("a", "bc")


def test_a_glossary_edit_reaches_a_cached_page(cold):
    glossary = cold / "glossary.yml"
    shutil.copy(gl.DATA, glossary)

    def linked():
        site = Site("en", ROOT / "docs" / "en", generated=False, glossary_path=glossary)
        return site.page_html(PAGE, "formulas.md", "formulas/", "glossary/")

    first = linked()
    assert 'class="nr-term"' in first and "#rmsnorm" in first
    assert linked() == first  # read back from the cache
    old = "Divides x by sqrt(mean(x²) + ε) and multiplies element-wise by a learned gain g"
    text = glossary.read_text(encoding="utf-8")
    assert old in text
    glossary.write_text(text.replace(old, "Scales x by its root mean square, then by a learned gain g"),
                        encoding="utf-8")
    second = linked()
    assert "Scales x by its root mean square" in second and old.split(" by ")[0] not in second.split("nr-term")[1]


class _Index:
    """Material's SearchIndex as normsite.searchcache sees it: entries, and a method that indexes a page."""

    def __init__(self):
        self.config, self.entries, self.indexed = {"lang": ["zh"], "separator": "[\\s]+"}, [], []

    def add_entry_from_context(self, page):
        self.indexed.append(page.url)
        self.entries += [{"location": page.url + "#" + i.id, "title": str(i.title), "text": page.content}
                         for i in page.toc]


def _page(content="<p>均方根归一化</p>", url="formulas/", heading="公式"):
    from types import SimpleNamespace

    toc = [SimpleNamespace(id="rms", url="#rms", title=heading, level=2, children=[])]
    return SimpleNamespace(content=content, url=url, title="公式", meta={"description": "x"}, toc=toc)


def test_search_entries_come_from_the_cache_when_the_page_is_unchanged(cold):
    from normsite import searchcache

    prepared = []

    def index_of(*pages, extra=("glossary-1",)):
        idx = _Index()
        searchcache.cache_entries(idx, extra, prepare=lambda: prepared.append(1))
        for p in pages:
            idx.add_entry_from_context(p)
        return idx

    first = index_of(_page(), _page(url="other/"))
    assert first.indexed == ["formulas/", "other/"] and len(prepared) == 2
    again = index_of(_page(), _page(url="other/"))
    assert again.indexed == [] and again.entries == first.entries and len(prepared) == 2  # no plugin work, no jieba
    for changed, why in ((index_of(_page(content="<p>层归一化</p>")), "the HTML"),
                         (index_of(_page(heading="公式与推导")), "the table of contents"),
                         (index_of(_page(), extra=("glossary-2",)), "the glossary (jieba's words)")):
        assert changed.indexed == ["formulas/"], f"stale search entries after a change of {why}"


def test_the_ledger_and_the_cards_are_rechecked_when_an_anchor_moves_not_when_prose_does(tmp_path):
    from normsite import directives

    page = tmp_path / "placement.md"
    page.write_text("# Placement { #top }\n\nSome prose.\n\n## Gradients { #grad }\n\n[[figure: placement_init]]\n",
                    encoding="utf-8")

    def table():
        import os

        os.utime(page, ns=(page.stat().st_atime_ns, page.stat().st_mtime_ns + 1_000_000))  # a new mtime, as an edit
        return directives._anchor_table([page], tmp_path)

    before = table()
    page.write_text(page.read_text(encoding="utf-8").replace("Some prose.", "Other prose."), encoding="utf-8")
    assert table() == before
    page.write_text(page.read_text(encoding="utf-8").replace("{ #grad }", "{ #gradients }"), encoding="utf-8")
    assert table() != before and "gradients" in table()


def test_a_page_step_keys_on_the_modules_it_names_not_on_every_site_file():
    """An edit to a normsite module re-runs only the page steps whose code imports it (no blanket site key);
    no step may be made without naming its code."""
    from normref import cache

    math = cache.closure(("normsite.mathtex",))
    assert "normsite.mathtex" in math and "normsite.colab" not in math and "normsite.content.cards" not in math
    step = stepcache.step_of("math", "en:formulas.md", {"html": "<p>x</p>"}, modules=("normsite.mathtex",))
    assert not any("normsite/" in name for name, _ in step.inputs)  # no file-by-file site layer among the inputs
    with pytest.raises(ValueError, match="modules"):
        stepcache.step_of("math", "en:formulas.md", {"html": "<p>x</p>"}, modules=())


def test_the_ledger_keys_on_the_tests_it_names_defining_them_not_on_their_text(tmp_path):
    from normsite import directives

    (tmp_path / "tests").mkdir()
    test = tmp_path / "tests" / "test_x.py"
    test.write_text("def test_a():\n    assert True\n", encoding="utf-8")
    claims = b"test: tests/test_x.py::test_a\n"

    def table():
        import os

        os.utime(test, ns=(test.stat().st_atime_ns, test.stat().st_mtime_ns + 1_000_000))  # a new mtime, as an edit
        return directives._tests_defined(claims, tmp_path)

    before = table()
    assert "def test_a" in before and str(tmp_path) not in before  # relative: no absolute path in a key
    test.write_text("# a comment\ndef test_a():\n    assert 1 == 1\n", encoding="utf-8")
    assert table() == before
    test.write_text("def test_b():\n    assert True\n", encoding="utf-8")
    assert table() != before
