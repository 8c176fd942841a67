"""A page's Markdown rendered to HTML once per version of what the rendering reads: a page step, "render".

MkDocs renders every page's Markdown on every build (mkdocs.structure.pages.Page.render): Python-Markdown and
pymdown-extensions, the largest part of a warm MkDocs build in a profile of one (0.9 of its 3.3 s under
cProfile), spent again on pages that did not change, and again on each page under `mkdocs serve` when one page
is edited. With it, a warm `normsite.sitebuild` here went from 2.0 s to 1.67 s (three runs each, AMD EPYC, 2
cores). MkDocs has no cache for it, nor does Material, so
:func:`render` keeps what Page.render leaves on the page in normref's cache (normsite.stepcache, kind "pages"),
keyed by everything it reads:

- the page's Markdown as the hooks left it (on_page_markdown: the directives already expanded), its source
  path and its URL;
- the Markdown extensions and their settings (mkdocs.yml's markdown_extensions), the link validation settings
  and use_directory_urls;
- every file of the site, by source path, URL and inclusion (a link to another page or to an image resolves
  against them, and an excluded or draft target is reported at its own level);
- every file the snippets extension may include (its base_path folders);
- the level MkDocs' page logger logs at (Page.render makes only the records it lets through, and notes the
  links to other pages' anchors only above DEBUG: a quiet or a verbose build must not leave its result to a
  normal one);
- the versions of Python (Python-Markdown parses HTML with the standard library), MkDocs, Python-Markdown,
  pymdown-extensions and Pygments.

What Page.render leaves: the HTML, the table of contents, the title found in the HTML, the anchors the page
holds and the links it makes to anchors of other pages (MkDocs checks those once every page is rendered). What
the rendering logged on its own thread (a link to a missing page, at the level mkdocs.yml's validation gives
it) is kept with it and logged again on a cache hit, so `--strict` fails a warm build as it failed the cold one.

No first-party code runs inside the rendering (mkdocs.yml names no extension of ours), so an edit to normsite
re-renders nothing but through this module's import closure (normsite/__init__.py, render.py, stepcache.py).
A setting that is not plain data is keyed by its name (a function, a class) or its repr (anything else); one
whose repr holds an address would make every build a miss, never a wrong hit.
"""

from __future__ import annotations

import functools
import json
import logging
import sys
import threading
from collections.abc import Callable
from pathlib import Path

from . import stepcache

__all__ = ["render", "LIBS", "STEP"]

STEP = "render"  # the step's name, as the cached call below writes it (tests/test_plan.py reads it there)
LIBS = ("mkdocs", "markdown", "pymdown-extensions", "pygments")
_LOGGERS = ("", "mkdocs")  # the root logger, and MkDocs' own (which does not hand its records to the root)


def _stable(obj) -> str:
    """A setting that is not JSON, written the same way in every process: a function or class by its name, a
    partial by its function and arguments."""
    if isinstance(obj, functools.partial):
        return json.dumps([_stable(obj.func), obj.args, obj.keywords], sort_keys=True, default=_stable)
    if callable(obj) and hasattr(obj, "__qualname__"):
        return f"{getattr(obj, '__module__', '?')}.{obj.__qualname__}"
    return f"{type(obj).__module__}.{type(obj).__qualname__}:{obj!r}"


def _settings(config) -> str:
    return json.dumps({"extensions": [e if isinstance(e, str) else _stable(e) for e in config["markdown_extensions"]],
                       "configs": config["mdx_configs"] or {}, "validation": config["validation"],
                       "use_directory_urls": config["use_directory_urls"]}, sort_keys=True, default=_stable)


def _site_files(files) -> str:
    return stepcache.digest(*(p for f in sorted(files, key=lambda f: f.src_uri)
                              for p in (f.src_uri, f.url, str(getattr(f, "inclusion", "")))))


def _included(config) -> str:
    """The bytes of every file under the snippets extension's base_path folders (relative to the checkout)."""
    folders = (config["mdx_configs"] or {}).get("pymdownx.snippets", {}).get("base_path", [])
    folders = [folders] if isinstance(folders, str) else list(folders)
    root = Path(config.config_file_path).parent
    parts = []
    for folder in folders:
        for f in sorted((root / folder).rglob("*")):
            if f.is_file() and "__pycache__" not in f.parts:
                parts += [f.relative_to(root).as_posix(), f.read_bytes()]
    return stepcache.digest(*parts)


def _toc(items) -> list:
    return [{"title": a.title, "id": a.id, "level": a.level, "children": _toc(a.children)} for a in items]


def _untoc(items, anchor) -> list:
    out = []
    for d in items:
        a = anchor(d["title"], d["id"], d["level"])
        a.children = _untoc(d["children"], anchor)
        out.append(a)
    return out


class _Kept(logging.Handler):
    """The records logged on this thread (not, under `mkdocs serve`, the live-reload server's)."""

    def __init__(self):
        super().__init__(logging.DEBUG)
        self.thread = threading.get_ident()
        self.records: dict[int, logging.LogRecord] = {}

    def emit(self, record):
        if record.thread == self.thread:
            self.records[id(record)] = record  # one record reaches both loggers at most once each


def render(page, config, files, plain: Callable[[object, object], None], lang: str, toc: tuple[type, type]) -> None:
    """Render ``page`` as ``plain(config, files)`` (MkDocs' Page.render, bound to it) would, from the cache when
    nothing it reads changed (see the module's docstring). ``toc``: MkDocs' (AnchorLink, TableOfContents), which
    the hooks hand over (the site layer imports no MkDocs)."""
    inputs = {"markdown": page.markdown, "page": f"{page.file.src_uri} -> {page.file.url}",
              "settings": _settings(config), "site files": _site_files(files), "included files": _included(config),
              "log level": str(logging.getLogger("mkdocs.structure.pages").getEffectiveLevel()),
              "python": sys.version}
    computed = []

    def compute() -> dict:
        kept = _Kept()
        loggers = [logging.getLogger(n) for n in _LOGGERS]
        for lg in loggers:
            lg.addHandler(kept)
        try:
            plain(config, files)
        finally:
            for lg in loggers:
                lg.removeHandler(kept)
        computed.append(True)
        links = page.links_to_anchors
        return {"content": page.content, "toc": _toc(page.toc), "title": page._title_from_render,
                "anchors": sorted(page.present_anchor_ids or ()),
                "links": None if links is None else {f.src_uri: dict(v) for f, v in links.items()},
                "log": [[r.name, r.levelno, r.getMessage()] for r in kept.records.values()]}

    value = stepcache.cached("render", f"{lang}/{page.file.src_uri}", inputs, compute, modules=("normsite.render",),
                             libs=LIBS)
    if computed:
        return  # Page.render set the page, and logged what it found
    anchor, contents = toc
    page.content = value["content"]
    page.toc = contents(_untoc(value["toc"], anchor))
    page._title_from_render = value["title"]
    page.present_anchor_ids = set(value["anchors"])
    if value["links"] is not None:
        page.links_to_anchors = {files.get_file_from_path(src): v for src, v in value["links"].items()}
    for name, level, message in value["log"]:
        logging.getLogger(name).log(level, message)
