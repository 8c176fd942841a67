"""A page's Markdown rendered once per version of what the rendering reads (normsite.render): a cache hit leaves
the page as MkDocs' own Page.render leaves it, logs again what the rendering logged (so --strict still fails),
and an edit to the page, a page added to or removed from the site (its links resolve against the file list), or
an edit to an included snippet renders it again."""

from __future__ import annotations

import logging

import pytest

from normsite import render, stepcache


@pytest.fixture()
def site(tmp_path, monkeypatch):
    from mkdocs.config import load_config

    monkeypatch.setenv("NORMREF_CACHE", str(tmp_path / "cache"))
    (tmp_path / "docs").mkdir()
    (tmp_path / "snips").mkdir()
    (tmp_path / "snips" / "x.py").write_text("print('x')\n", encoding="utf-8")
    (tmp_path / "docs" / "a.md").write_text("# Title A\n\n## Part one\n\nSee [b](b.md#part) and [gone](missing.md).\n\n"
                                            "```python\n--8<-- \"x.py\"\n```\n", encoding="utf-8")
    (tmp_path / "docs" / "b.md").write_text("# B\n\n## Part\n", encoding="utf-8")
    (tmp_path / "mkdocs.yml").write_text("site_name: t\nmarkdown_extensions:\n  - toc:\n      permalink: true\n"
                                         "  - pymdownx.snippets:\n      base_path: [snips]\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)  # pymdownx.snippets reads base_path from the working folder, as MkDocs runs it
    return tmp_path, load_config(str(tmp_path / "mkdocs.yml"))


def _page(root, config, names=("a.md", "b.md")):
    from mkdocs.structure.files import File, Files
    from mkdocs.structure.pages import Page

    files = Files([File(n, config.docs_dir, config.site_dir, config.use_directory_urls) for n in names])
    page = Page(None, files.get_file_from_path("a.md"), config)
    page.read_source(config)
    return page, files


def _toc():
    from mkdocs.structure.toc import AnchorLink, TableOfContents

    return AnchorLink, TableOfContents


_TOC = _toc()


def _state(page) -> tuple:
    links = {f.src_uri: v for f, v in (page.links_to_anchors or {}).items()}
    return page.content, str(page.toc), page._title_from_render, page.present_anchor_ids, links


def test_a_hit_leaves_the_page_as_page_render_does_and_logs_again(site, caplog):
    root, config = site
    plain, files = _page(root, config)
    with caplog.at_level(logging.WARNING):
        plain.render(config, files)
    want = [r.getMessage() for r in caplog.records if "missing.md" in r.getMessage()]
    assert want and "print('x')" in plain.content  # the snippet was included
    stepcache.STATS.clear()
    for attempt in ("computed", "from the cache"):
        caplog.clear()
        page, files = _page(root, config)
        with caplog.at_level(logging.WARNING):
            render.render(page, config, files, page.render, "en", _TOC)
        assert _state(page) == _state(plain), attempt
        assert [r.getMessage() for r in caplog.records if "missing.md" in r.getMessage()] == want, attempt
        assert [r.levelno for r in caplog.records if "missing.md" in r.getMessage()] == [logging.WARNING], attempt
    assert stepcache.STATS[render.STEP] == [1, 1]


@pytest.mark.parametrize("edit", ["page", "another page", "snippet"])
def test_what_the_rendering_reads_renders_it_again(site, edit):
    root, config = site
    page, files = _page(root, config)
    render.render(page, config, files, page.render, "en", _TOC)
    if edit == "page":
        (root / "docs" / "a.md").write_text("# Title A\n\nChanged.\n", encoding="utf-8")
        names = ("a.md", "b.md")
    elif edit == "another page":  # a page the links resolve against goes
        names = ("a.md",)
    else:
        (root / "snips" / "x.py").write_text("print('y')\n", encoding="utf-8")
        names = ("a.md", "b.md")
    stepcache.STATS.clear()
    page, files = _page(root, config, names)
    render.render(page, config, files, page.render, "en", _TOC)
    assert stepcache.STATS[render.STEP] == [1, 0], edit


def test_a_quiet_builds_render_is_not_a_normal_builds(site, caplog):
    """A render computed while MkDocs logs only errors (mkdocs build -q) kept no warning: a build at the default
    level renders the page again, and so still reports the broken link (--strict fails on it)."""
    root, config = site
    pages = logging.getLogger("mkdocs.structure.pages")
    before = pages.level
    pages.setLevel(logging.ERROR)
    try:
        page, files = _page(root, config)
        render.render(page, config, files, page.render, "en", _TOC)
    finally:
        pages.setLevel(before)
    stepcache.STATS.clear()
    caplog.clear()
    page, files = _page(root, config)
    with caplog.at_level(logging.WARNING):
        render.render(page, config, files, page.render, "en", _TOC)
    assert stepcache.STATS[render.STEP] == [1, 0]
    assert any("missing.md" in r.getMessage() for r in caplog.records)
