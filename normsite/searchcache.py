"""The search index's per-page work, cached by content.

Material's search plugin parses every page's HTML into sections and, for
Chinese, segments each section's text with jieba: about two seconds of each
warm build, spent again on pages that did not change. :func:`cache_entries`
wraps the plugin's index (duck-typed: an object with ``entries`` and
``add_entry_from_context(page)``, so this module needs no MkDocs import) so that
a page's entries come from normref's cache (normsite.stepcache, kind "pages")
when everything they are made from is unchanged: the page's HTML, URL, title,
metadata and table of contents, the index's settings, the words the build
taught jieba (``extra``: the glossary's digest), the site layer's code and the
versions of jieba and Material. A miss runs the plugin's own code, so the
entries (and the search_index.json written from them) are the same either way.

The plugin reads the page with each formula as one readable copy
(normsite.mathtex.for_search), not KaTeX's three (MathML, TeX source, HTML):
a preview shows x<sub>l+1</sub>, not "xl+1x_{l+1}xl+1". Text a reader never sees
is left out too: mkdocs-jupyter's hidden clipboard copy of each code cell (the
code was indexed twice, once outside <pre>) and its "Copied!" notice.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable

from . import mathtex, stepcache

__all__ = ["cache_entries", "page_inputs", "search_html"]

_HIDDEN = re.compile(r'<div class="clipboard-copy-txt"[^>]*>.*?</div>|<span class="notice" hidden[^>]*>.*?</span>', re.S)


def search_html(content: str) -> str:
    """The HTML the search plugin indexes for a page: each formula once, readably; nothing hidden."""
    return mathtex.for_search(_HIDDEN.sub("", content or ""))


def _toc(items) -> list:
    return [[getattr(i, "id", None), getattr(i, "url", None), str(getattr(i, "title", "")), getattr(i, "level", None),
             _toc(getattr(i, "children", None) or [])] for i in items or []]


def page_inputs(page) -> tuple[str, ...]:
    """What the plugin reads of a page: its HTML, URL, title, metadata and table of contents."""
    return (page.content or "", page.url, str(page.title), json.dumps(page.meta, sort_keys=True, default=str),
            json.dumps(_toc(page.toc), default=str))


def cache_entries(index, extra: tuple = (), prepare: Callable[[], None] = lambda: None) -> None:
    """Make ``index.add_entry_from_context`` read a page's entries from the cache when they are there.
    ``prepare()`` runs before the plugin's own code indexes a page (the build teaches jieba its words there)."""
    add = index.add_entry_from_context
    settings = json.dumps(getattr(index, "config", {}), sort_keys=True, default=str)
    lang = "+".join(map(str, (getattr(index, "config", {}) or {}).get("lang") or ["?"]))  # the step's name: per build

    def add_cached(page) -> None:
        def compute() -> list:
            prepare()
            before = len(index.entries)
            content = page.content
            page.content = search_html(content)
            try:
                add(page)
            finally:
                page.content = content
            new = index.entries[before:]
            del index.entries[before:]
            return new

        content, url, title, meta, toc = page_inputs(page)
        inputs = {"search settings": settings, **{f"extra {i}": e for i, e in enumerate(extra)},
                  "html": content, "url": url, "title": title, "metadata": meta, "table of contents": toc}
        # the code: this module's, and the glossary's word parts taught to jieba (normsite.glossary, by the build's
        # prepare callback; the glossary's own digest is among ``extra``)
        index.entries.extend(stepcache.cached("search", f"{lang}:{page.url}", inputs, compute,
                                              modules=("normsite.searchcache", "normsite.glossary"),
                                              libs=("jieba", "mkdocs-material")))

    index.add_entry_from_context = add_cached
