"""The print edition: every chapter of one language on one page (print/), for
reading offline, for printing, and for ``make pdf`` (tools/pdf.py).

``assemble`` takes the chapters in reading order (the hook derives them from
the nav, so a page added later is in the edition with no code change) and
returns one HTML body:

- a contents list, then each chapter in a ``<section>`` that starts on a new
  printed page (the contents and links to a chapter lead to its title);
- every id is prefixed with the chapter's slug (``toll-booth--evidence-2``), so
  the chapters' ids cannot collide, and every link to a page or section that is
  in the edition points inside it; other links (a notebook, a download, a paper)
  are kept, made relative to the print page, and a link to another site is
  marked (``nr-print-ext``), so that paper can show its address;
- figures in the light theme only (the dark variants are dropped, and the
  light ones lose their ``#only-light`` marker, so a dark screen shows them too),
  loaded eagerly (a PDF printer does not scroll to lazy images);
- what only works on screen goes: widgets (their static figure stays), data
  templates, scripts, permalinks, zoom links and glossary tooltips; collapsed
  ``<details>`` (self-test answers) are opened;
- math stays typeset (KaTeX HTML from the build); its stylesheet is linked once.

Chinese text gets a font of its own (``cjk_font``): Chromium writes a PDF's
ToUnicode map from the font's cmap, taking the lowest code point for each glyph,
and Noto Sans CJK draws 一 and the Kangxi radical ⼀ (U+2F00) with one glyph, so
text copied or searched in the PDF came out as 归⼀化 and ⾸⻚; and Chromium
embeds CFF (OpenType) fonts only as Type 3 drawings. So the print page uses a
subset of Noto Sans CJK SC (from the pinned mplfonts package) holding just the
characters of the edition, without the radicals' code points, with TrueType
outlines: the PDF then embeds a named font whose glyphs map back to the right
characters, and the zh edition is set in the Simplified Chinese design (the
system's default CJK font may be the Japanese one).

It knows nothing of MkDocs; only ``cjk_font`` touches the disk (its cache).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import urlsplit

from .printfont import CJK_FONT_PATH, CJK_RANGES, cjk_chars, cjk_font, cjk_font_begun  # noqa: F401  (the edition's font, re-exported)

__all__ = ["Chapter", "assemble", "print_page", "stamp", "slug", "PDF_NAME", "PRINT_PAGE", "pdf_manifest", "cjk_font",
           "cjk_chars", "CJK_RANGES", "CJK_FONT_PATH"]

ID_ATTRS = ("for", "aria-labelledby", "aria-describedby", "aria-controls")
# What only works on screen, taken out of each chapter: these elements, elements of these classes, and
# elements with these attributes (widgets, scripts, permalinks, the edit button).
SCREEN_ONLY = {"tags": ("script", "template", "style"), "classes": ("headerlink", "md-content__button", "nr-widget"),
               "attributes": ("data-nr-widget",)}
PDF_NAME = "normref-{lang}.pdf"  # at the root of the whole site (site/), one per language
PRINT_PAGE = "print.md"  # docs/<lang>/print.md: the print edition's page (not in the nav)
EDITION = "<p>[[print-edition]]</p>"  # where the chapters go: the directive alone in a paragraph


@dataclass(frozen=True)
class Chapter:
    url: str  # the page's URL relative to the site root: "" (home), "toll-booth/", "notebooks/x/"
    title: str  # its title in the nav
    html: str  # its rendered content

    def __post_init__(self):
        for name in ("url", "title", "html"):
            if not isinstance(getattr(self, name), str):
                raise TypeError(f"Chapter.{name} must be a str, got {type(getattr(self, name)).__name__}")


def slug(url: str) -> str:
    """A chapter's id prefix from its URL: "" -> "home", "notebooks/x/" -> "notebooks-x"."""
    s = url.strip("/").removesuffix(".html").replace("/", "-")
    return s or "home"


def _dir(url: str) -> str:
    return url if url.endswith("/") or not url else posixpath.dirname(url) + "/"


def _resolve(ref: str, page_url: str) -> tuple[str, str] | None:
    """A site-relative reference from page ``page_url`` as (site path, fragment); None if it
    leaves the site (a scheme, //host, mailto:, data:)."""
    if not ref or re.match(r"^[a-zA-Z][\w+.-]*:|^//", ref):
        return None
    parts = urlsplit(ref)
    if not parts.path:
        return page_url, parts.fragment
    path = posixpath.normpath(posixpath.join(_dir(page_url), parts.path))
    if path in (".", ""):
        path = ""
    elif ref.split("#")[0].endswith("/") and not path.endswith("/"):
        path += "/"
    path = path.lstrip("/")
    if path.endswith("index.html"):
        path = path[: -len("index.html")]
    return path, parts.fragment


def _relative(path: str, from_url: str) -> str:
    rel = posixpath.relpath(path or ".", _dir(from_url).rstrip("/") or ".")
    return rel + ("/" if path.endswith("/") and not rel.endswith("/") else "")


_H1_ID = re.compile(r"""<h1\b[^>]*?\sid=(?:"([^"]+)"|'([^']+)'|([^\s>"']+))""")


def chapter_tops(chapters: list[Chapter]) -> dict[str, str]:
    """{chapter URL: the print page's anchor of its title} (its first <h1> with an id, else an anchor the
    chapter gets): what a link to a chapter points at. From the HTML's text, so that a chapter's own work
    (:func:`chapter_html`) depends on the other chapters only through this small table."""
    out = {}
    for c in chapters:
        s = slug(c.url)
        m = _H1_ID.search(c.html)
        out[c.url] = f"{s}--{next(g for g in m.groups() if g)}" if m else f"{s}--__{s}"
    return out


# A chapter is parsed and written back by Lexbor (selectolax), an HTML5 parser in C: as a fragment, the way a
# browser parses the page the chapter came from. BeautifulSoup's html.parser took about a second for each of the
# long chapters, most of a cold print edition's time and of a value edit's rebuild.
# What only works on screen (SCREEN_ONLY), as one CSS selector.
_SCREEN_ONLY_CSS = ", ".join([*SCREEN_ONLY["tags"], *(f".{c}" for c in SCREEN_ONLY["classes"]),
                              *(f"[{a}]" for a in SCREEN_ONLY["attributes"])])


def _classes(el) -> list[str]:
    return (el.attrs.get("class") or "").split()


def _drop_screen_only(tree) -> tuple[bool, list]:
    """Take out of a chapter's tree what only works on screen (widgets, scripts, permalinks, zoom links, dark
    figures, lazy loading, glossary tooltips) and open its <details>; (whether it linked KaTeX's stylesheet,
    the elements left, in document order)."""
    math = False
    for el in tree.css(_SCREEN_ONLY_CSS):
        el.decompose()
    for el in tree.css("link"):
        math = math or "katex" in (el.attrs.get("href") or "")
        el.decompose()
    for el in tree.css('img[src*="#only-dark"]'):
        el.decompose()
    for el in tree.css("a.nr-zoom"):
        el.unwrap()
    for el in tree.css("img[src]"):
        el.attrs["src"] = el.attrs["src"].split("#only-light")[0]
        if el.attrs.get("loading") == "lazy":
            del el.attrs["loading"]
    for el in tree.css("details"):
        el.attrs["open"] = ""
    for el in tree.css("a.nr-term[title]"):
        del el.attrs["title"]
    return math, tree.css("*")


def _prefix_ids(els: list, s: str) -> None:
    """Every id of a chapter's elements ``els``, and every reference to one (ID_ATTRS), prefixed with its slug
    ``s``."""
    for el in els:
        attrs = el.attrs
        if "id" in attrs:
            attrs["id"] = f"{s}--{attrs['id']}"
        for a in ID_ATTRS:
            if a in attrs:
                attrs[a] = " ".join(f"{s}--{v}" for v in str(attrs[a]).split())


def _retarget(els: list, page_url: str, print_url: str, inside: dict[str, str], tops: dict[str, str]) -> None:
    """Each href and src of the chapter's elements ``els``, from the page at ``page_url``: into the edition when
    it names a chapter (``inside``: {its URL: its slug}; its title, or the section's prefixed id), else relative
    to ``print_url``; a link to another site is marked."""
    for el in els:
        attrs = el.attrs
        attr = "href" if "href" in attrs else "src" if "src" in attrs else None
        if attr is None:
            continue
        ref = attrs[attr] or ""
        target = _resolve(ref, page_url)
        if target is None:
            if attr == "href" and re.match(r"https?://", ref):
                attrs["class"] = " ".join(_classes(el) + ["nr-print-ext"])  # paper shows its address (print.css)
            continue
        path, frag = target
        if attr == "href" and path in inside:
            attrs[attr] = f"#{inside[path]}--{frag}" if frag else f"#{tops[path]}"
        else:
            attrs[attr] = _relative(path, print_url) + (f"#{frag}" if frag else "")


def chapter_html(c: Chapter, print_url: str, tops: dict[str, str]) -> tuple[str, bool]:
    """One chapter made part of the print page at ``print_url``: (its <section>, whether it has math).
    ``tops``: :func:`chapter_tops` of all chapters (a link to another chapter goes to its title)."""
    from selectolax.lexbor import LexborHTMLParser

    inside = {u: slug(u) for u in tops}
    s = inside[c.url]
    tree = LexborHTMLParser(c.html, is_fragment=True)
    # A chapter is reached at its title (chapter_tops), or at an anchor of its own when no title has an id. The
    # <section> itself carries no id: Material names each code block after its closest ancestor with an id
    # (__code_<id>), so an id there would give every code block of the chapter the same one.
    anchor = f'<a id="{s}--__{s}"></a>' if tops[c.url] == f"{s}--__{s}" else ""
    math, els = _drop_screen_only(tree)
    _prefix_ids(els, s)
    _retarget(els, c.url, print_url, inside, tops)
    return (f'<section class="nr-print-chapter" data-nr-chapter="{s}" aria-label="{_esc(c.title)}">\n'
            f'{anchor}{tree.html or ""}\n</section>'), math


def assemble(chapters: list[Chapter], print_url: str, *, katex_css: str | None = None,
             each: Callable[[Chapter, str, dict, Callable[[], tuple[str, bool]]], tuple[str, bool]] | None = None) -> str:
    """One HTML body holding ``chapters`` in order, for the page at ``print_url``: the
    contents list (``<ol class="nr-print-contents">``), then the chapters (:func:`chapter_html`).

    ``katex_css`` is the site path of KaTeX's stylesheet, linked once when a chapter
    has math. ``each(chapter, print_url, tops, compute)``: how a chapter's work is done (the build
    caches it per chapter, so that one page's edit re-does one chapter); by default ``compute()``.
    Raises ValueError for an empty list or two chapters with one URL.
    """
    if not chapters:
        raise ValueError("chapters must not be empty: the print edition needs at least one page")
    urls = [c.url for c in chapters]
    if len(set(urls)) != len(urls):
        raise ValueError(f"chapters must have distinct URLs, got {urls}")
    tops = chapter_tops(chapters)
    toc = ['<ol class="nr-print-contents">'] + [f'<li><a href="#{tops[c.url]}">{_esc(c.title)}</a></li>' for c in chapters]
    toc.append("</ol>")
    out, math = [], False
    for c in chapters:
        def compute(c=c) -> tuple[str, bool]:
            return chapter_html(c, print_url, tops)

        section, has_math = each(c, print_url, tops, compute) if each else compute()
        out.append(section)
        math = math or bool(has_math)
    head = []
    if math and katex_css:
        head.append(f'<link rel="stylesheet" href="{_relative(katex_css, print_url)}">')
    return "\n".join(head + ["".join(toc)] + out)


def stamp(markdown: str) -> str:
    """[[print-date]] -> the build's date (SOURCE_DATE_EPOCH: the commit's time, so two builds agree)."""
    import os
    import time

    t = time.gmtime(int(os.environ.get("SOURCE_DATE_EPOCH") or time.time()))
    return markdown.replace("[[print-date]]", time.strftime("%Y-%m-%d", t))


def print_page(content: str, url: str, pages, each=None) -> str:
    """The print page (its HTML, whole or its content) with [[print-edition]] replaced by its
    stylesheet and the PDF link's script (relative: any sub-path), then the chapters: the
    Markdown pages among ``pages`` ((docs path, url, title, content) in reading order), itself
    and notebooks left out. ``each``: see :func:`assemble`."""
    if EDITION not in content:
        raise ValueError("[[print-edition]] must stand alone in a paragraph")
    chapters = [Chapter(u, t or "", c or "") for src, u, t, c in pages if src.endswith(".md") and src != PRINT_PAGE]
    body = assemble(chapters, url, katex_css="assets/katex/katex.min.css", each=each)
    links = (f'<link rel="stylesheet" href="{_relative("assets/stylesheets/print.css", url)}">\n'
             f'<script src="{_relative("assets/javascripts/pdf-link.js", url)}" defer></script>\n')
    return content.replace(EDITION, links + body)


def _esc(s: str) -> str:
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


def pdf_manifest(lang: str, pdf_url: str | None) -> str:
    """print/pdf.json: where this language's PDF is, relative to print/ (null: not built).
    The build writes it with null; ``make pdf`` rewrites it once the PDF exists, and the
    pages show their PDF link only then (a link to a missing file would be a broken link)."""
    import json

    if lang not in ("zh", "en"):
        raise ValueError(f"lang must be 'zh' or 'en', got {lang!r}")
    return json.dumps({"lang": lang, "pdf": pdf_url}) + "\n"
