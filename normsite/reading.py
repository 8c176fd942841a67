"""Reading aids: zoomable figures, glossary entries that search finds first, the
term pairs for side-by-side reading (对照阅读).

Everything here rewrites rendered HTML or produces small files; it knows nothing
of MkDocs (normsite.build calls it; hooks/normref_site.py hands it the build).

Zoomable figures. The images of each figure (the light and the dark variant of a
``[[figure: …]]``) are wrapped in one link to the full-size SVG: without
JavaScript that link opens the picture on its own; with it, site.js opens it in
GLightbox on the first click (loading GLightbox then, and only then). GLightbox
comes from the pinned ``mkdocs-glightbox`` package, but not through its MkDocs
plugin: the plugin re-serialises every page with Lexbor (on this site that
re-cut the search index's sections and changed every page's bytes) and links
GLightbox's 70 KB from every page's head, which the page-weight budget cannot
carry. So we copy its two files and do the wrapping ourselves (a regex on our
own figure markup).

Search. Material indexes a glossary entry as a section: its heading is the
section's title (boosted 1000× over body text), the rest is text. A reader who
types an alias or the other language's name only hit the entry's body, where
every entry that mentions the word competes with it. ``index_term_forms`` adds
every name and alias of the term to its heading, in a ``hidden`` span: search
indexes it as title text, while readers and screen readers see the heading as
before (the visible entry lists the same names). The table of contents is made
from the Markdown before this runs, so it is unchanged. That alone does not
make an entry the first result for its own name: Lunr ORs prefix terms and
knows no exact match ("RMS" also matches RMSNorm's heading, "RMSNorm" matches
Pre-RMSNorm's). So the site runs its own search worker, Material's own plus one
rule: a query equal to a glossary name or alias puts that entry first.
Material lets a site bring its own worker (the "search" entry of each page's
config); ``search_worker`` writes ours as normsite/search_names.js followed by
Material's worker, unchanged, in one file (so a page fetches one worker script,
as before, 1.6 KB longer), named like Material's with ``nr-search.`` for
``search.``; overrides/main.html makes every page's config (404.html's too) name it.
"""

from __future__ import annotations

import html
import json
import re
from importlib import resources

__all__ = ["glightbox_files", "zoomable_figures", "index_term_forms", "term_pairs_json", "search_worker",
           "ZOOM_CLASS", "FORMS_SEP", "SEARCH_WORKER_PREFIX"]

ZOOM_CLASS = "nr-zoom"

# ---------------------------------------------------------------- zoomable figures

_FIGURE = re.compile(r'(<figure\b[^>]*\bclass="[^"]*\bnr-figure\b[^"]*"[^>]*>)(.*?)(</figure>)', re.S)
_IMGS = re.compile(r'<img\b[^>]*>(?:\s*<img\b[^>]*>)*')  # a figure's images, one after another
_SRC = re.compile(r'\bsrc="([^"]+)"')


_PLYR = re.compile(rb'https://cdn\.plyr\.io/[^"\']*')


def glightbox_files() -> dict[str, bytes]:
    """GLightbox's script and stylesheet from the installed mkdocs-glightbox package,
    keyed by the site path they are served at.

    GLightbox's defaults name a CDN for Plyr, its video player, fetched only for a video
    slide. We show images only, and the site names no other host: the defaults are
    emptied (ValueError if they are not where they were, say after an upgrade)."""
    pkg = resources.files("mkdocs_glightbox") / "glightbox"
    js, n = _PLYR.subn(b"", (pkg / "glightbox.min.js").read_bytes())
    if n != 2:
        raise ValueError(f"glightbox.min.js: expected Plyr's two CDN defaults (css, js), found {n}")
    return {
        "assets/javascripts/glightbox.min.js": js,
        "assets/stylesheets/glightbox.min.css": (pkg / "glightbox.min.css").read_bytes(),
    }


def zoomable_figures(content: str) -> tuple[str, int]:
    """Wrap the images of each ``<figure class="nr-figure">`` (its light and dark variants) in
    one link to the light variant's file.

    One link for both: the theme hides one image and the link shows the other, so no
    invisible link takes the keyboard's focus (and no stylesheet rule is needed on every
    page for it); zoom.js opens the image the theme shows. Without JavaScript the link
    opens the light SVG. Returns the new HTML and the number of figures wrapped; a figure
    whose images are already inside a link is left alone.
    """
    if not isinstance(content, str):
        raise TypeError(f"content must be a str of HTML, got {type(content).__name__}")
    count = 0

    def wrap_figure(m: re.Match) -> str:
        nonlocal count
        body = m.group(2)
        run = _IMGS.search(body)
        if run is None or re.search(r"<a\b[^>]*>\s*$", body[:run.start()]):
            return m.group(0)
        srcs = _SRC.findall(run.group(0))
        if not srcs:
            return m.group(0)
        light = next((x for x in srcs if "#only-light" in x), srcs[0])
        count += 1
        return (m.group(1) + body[:run.start()] + f'<a class="{ZOOM_CLASS}" href="{light}">' + run.group(0) + "</a>"
                + body[run.end():] + m.group(3))

    return _FIGURE.sub(wrap_figure, content), count


# ---------------------------------------------------------------- search: the entry's own names

FORMS_SEP = " \u00b7 "  # " · ": the visible heading never contains it (a test checks)
_ENTRY = re.compile(r'(<h([1-6])\b[^>]*\bid="([^"]+)"[^>]*>)(.*?)(<a class="headerlink"|</h\2>)', re.S)
_CLASS_TERM = re.compile(r'\bclass="[^"]*\bnr-gloss-term\b')


def index_term_forms(content: str, glossary, lang: str) -> tuple[str, int]:
    """Put every name and alias of each glossary entry into its heading, hidden.

    ``content`` is the rendered glossary page; entries are the headings with class
    ``nr-gloss-term`` whose id is a term id. The span holds every form, each after
    ``FORMS_SEP`` (the search worker splits the indexed title there). Returns the
    new HTML and the number of headings changed.
    """
    if lang not in ("zh", "en"):
        raise ValueError(f"lang must be 'zh' or 'en', got {lang!r}")
    terms = {t.id: t for t in glossary.terms}
    sep = FORMS_SEP
    changed = 0

    def add(m: re.Match) -> str:
        nonlocal changed
        open_tag, _, tid, inner, end = m.groups()
        term = terms.get(tid)
        if term is None or not _CLASS_TERM.search(open_tag):
            return m.group(0)
        # Every form, the visible ones too: the search worker reads the names from here.
        extra = term.forms()
        changed += 1
        span = f'<span class="nr-gloss-forms" hidden>{sep}{html.escape(sep.join(extra), quote=False)}</span>'
        return open_tag + inner + span + end

    return _ENTRY.sub(add, content), changed


# ---------------------------------------------------------------- side by side: term pairs


def term_pairs_json(glossary) -> str:
    """``{id: {"zh": name, "en": name}}`` for every term, as compact JSON (read by pair.js,
    which shows the pair, e.g. 残差流 / residual stream, in glossary tooltips)."""
    return json.dumps({t.id: {"zh": t.name["zh"], "en": t.name["en"]} for t in glossary.terms},
                      ensure_ascii=False, separators=(",", ":"), sort_keys=True)


# ---------------------------------------------------------------- search: the worker

SEARCH_WORKER_PREFIX = "nr-search."  # nr-search.HASH.min.js beside Material's search.HASH.min.js (it loads ../lunr)


def search_worker(material_worker: str) -> str:
    """Our search worker: the rule in normsite/search_names.js, then Material's worker."""
    if "addEventListener" not in material_worker or "postMessage" not in material_worker:
        raise ValueError("material_worker does not look like Material's search worker (no message handling)")
    rule = resources.files("normsite").joinpath("search_names.js").read_text(encoding="utf-8")
    return rule + "\n" + material_worker
