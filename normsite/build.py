"""One language's build of the site, as the MkDocs hooks drive it (but without MkDocs).

``Site`` holds what a build needs across pages (the language, the glossary, the
counts it reports) and has one method per step the hooks call:

    configure      -> this build's site_url and both languages' roots
    generated      -> the files the build adds (figures, .ipynb downloads)
    page_markdown  -> [[ledger]], [[quiz]], the directives and [[glossary]] expanded
    page_html      -> data blocks wrapped, math typeset, assets linked, terms linked
    post_page      -> notebook pages scrubbed, inline CSS trimmed
    report         -> one log line: what was rendered and what came from the cache

NORMREF_NO_GENERATED=1 builds the same pages without the generated work:
figures are neither rendered nor registered (a directive becomes its caption)
and notebooks are converted but not executed. `make perf` compares a warm
build against it, to show that a warm build does no figure or notebook work.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable, Mapping
from pathlib import Path

from normref import cache, figures
from normref import glossary as gl

from . import LANGS, SiteError, ahead, assets, cjk, directives, ledger, mathtex, notebooks, release, stepcache
from . import quiz as site_quiz
from . import glossary as site_glossary

__all__ = ["Site", "no_generated", "nav_titles"]

GLOSSARY_DIRECTIVE = "[[glossary]]"
QUIZ_DIRECTIVE = "[[quiz]]"
ROOT = Path(__file__).resolve().parent.parent  # the repository: docs/, tests/ (the ledger names tests)


def no_generated() -> bool:
    return os.environ.get("NORMREF_NO_GENERATED", "") not in ("", "0")


def nav_titles(items, out: dict | None = None) -> dict[str, str]:
    """{docs path: title} from a MkDocs nav (a list of {title: path or [children]})."""
    out = {} if out is None else out
    for item in items or []:
        if isinstance(item, dict):
            for title, target in item.items():
                if isinstance(target, str):
                    out[target] = title
                else:
                    nav_titles(target, out)
    return out


class Site:
    def __init__(self, lang: str, docs_dir: str | Path, *, generated: bool | None = None,
                 glossary_path: str | Path | None = None):
        if lang not in LANGS:
            raise ValueError(f"lang must be one of {LANGS}, got {lang!r}")
        self.lang, self.docs_dir = lang, Path(docs_dir)
        self.generated_work = not no_generated() if generated is None else generated
        try:
            self.glossary = gl.load(glossary_path or gl.DATA)
            self.glossary_digest = stepcache.digest(Path(glossary_path or gl.DATA).read_bytes())
        except (gl.GlossaryError, FileNotFoundError) as e:
            raise SiteError(f"glossary: {e}") from e
        self.stats = dict(t0=time.perf_counter(), fig_hit=0, fig_miss=0, snip_hit=0, snip_miss=0)
        self.ahead = ahead.Ahead()
        release.default_source_date_epoch()
        cache.STATS.update(hit=0, miss=0)

    # ------------------------------------------------------------ config

    def configure(self, site_url: str | None) -> tuple[str | None, dict]:
        return release.site_urls(self.lang, site_url)

    def jieba_words(self) -> tuple[str, ...]:
        """Word parts Material's search (jieba) must know to segment Chinese as the glossary does."""
        return self.glossary.jieba_parts

    def notebook_cache_dir(self) -> str:
        """mkdocs-jupyter keys its cache by the notebook text alone; a notebook also depends on the
        normref code it imports, so the hash of that code (the import closure of this language's
        notebooks, found from their imports) names the folder: an edit elsewhere in normref
        executes no notebook. One folder per language (or the two builds evict each other's
        entries) and per kind of build (it evicts unused entries)."""
        code = cache.code_hash(notebooks.code_closure(self.docs_dir / "notebooks"))
        d = cache.cache_dir() / "jupyter" / self.lang / code[:16]
        return str(d) + ("" if self.generated_work else "-noexec")

    # ------------------------------------------------------------ files

    def generated(self, sources: Mapping[str, str]) -> list[tuple[str, bytes | str]]:
        """(uri, content) of the files the build adds: each referenced figure in both themes, and
        each jupytext notebook's .ipynb. ``sources``: {docs path: file path} of the build's files.
        An unknown figure raises SiteError naming its pages.

        First, the slow work of both languages (figures, snippets) is done ahead, on every core
        (normsite.ahead); the page loops of this build and the other language's then only read
        the cache."""
        if not self.generated_work:
            return []
        done = self.ahead = ahead.run(ahead.docs_dirs(self.lang, self.docs_dir))
        self.stats.update(fig_miss=len(done.figures_drawn), snip_miss=len(done.snippets_run))
        out: list[tuple[str, bytes | str]] = []
        for name in directives.referenced(self.docs_dir, "figure"):
            for theme in figures.THEMES:
                svg, hit = figures.render_cached(name, self.lang, theme)
                self.stats["fig_hit"] += (name, self.lang, theme) not in done.figures_drawn
                out.append((f"figures/{name}-{theme}.svg", svg))
        for uri, path in sources.items():
            if notebooks.is_notebook(uri) and uri.endswith(".py"):
                out.append((notebooks.ipynb_uri(uri), notebooks.ipynb_text(path)))
        return out

    # ------------------------------------------------------------ pages

    def page_markdown(self, markdown: str, src_uri: str, pages: Iterable[str], nav=None) -> str:
        """``pages``: the docs paths of this build; ``nav``: its nav (the glossary's "explained on" links)."""

        def count(name: str, hit: bool) -> None:
            if name not in self.ahead.snippets_run:  # those are counted as run, in generated()
                self.stats["snip_hit" if hit else "snip_miss"] += 1

        if self.lang == "zh":
            markdown = cjk.join_soft_breaks(markdown)
        # The ledger and the quiz first: the ledger's reasons hold [[value: …]] directives.
        if ledger.DIRECTIVE in markdown:
            from normref import values

            try:
                markdown = ledger.expand(markdown, self.lang, self.docs_dir, ROOT, known_values=values.names())
            except (ledger.LedgerError, FileNotFoundError) as e:
                raise SiteError(f"{src_uri}: {e}") from e
        if QUIZ_DIRECTIVE in markdown:
            markdown = markdown.replace(QUIZ_DIRECTIVE, site_quiz.render_markdown(self.lang))
        markdown = directives.expand(markdown, self.lang, src_uri, generated=self.generated_work, on_snippet=count)
        if GLOSSARY_DIRECTIVE in markdown:
            titles = nav_titles(nav)
            here = {p: titles.get(p, "") for p in pages}
            markdown = markdown.replace(GLOSSARY_DIRECTIVE, site_glossary.render_markdown(self.glossary, self.lang, here))
        return markdown

    def page_html(self, html_text: str, src_uri: str, url: str, glossary_url: str | None) -> str:
        """``glossary_url``: the glossary page's URL in this build, or None when it has none."""
        html_text = assets.wrap_data(html_text)
        # Math and term links are pure functions of the page: cached by content (normsite.stepcache).
        html_text, n_math = stepcache.cached("math", (html_text, src_uri),
                                             lambda: mathtex.typeset(html_text, src_uri), libs=("pykatex",))
        html_text = assets.inject(html_text, url, has_math=n_math > 0)
        # Only prose pages: notebooks carry code output, and the glossary links its own terms explicitly.
        if glossary_url is not None and src_uri != gl.GLOSSARY_PAGE and src_uri.endswith(".md"):
            href = site_glossary.glossary_href(url, glossary_url)
            html_text = stepcache.cached(
                "terms", (html_text, self.lang, href, self.glossary_digest),
                lambda: site_glossary.link_terms(html_text, self.glossary, self.lang, href)[0],
                modules=("normref.glossary",))
        return html_text

    def notebook_downloads(self, src_uri: str) -> dict | None:
        return notebooks.downloads(src_uri)

    def post_page(self, output: str, src_uri: str) -> str:
        return notebooks.scrub_page(output, src_uri)

    # ------------------------------------------------------------ report

    def report(self) -> str:
        """One line: figures drawn by this build (any language: the first build draws both) and this
        build's figures it found cached; the same for snippets; the pool's size and CPU time."""
        s, a = self.stats, self.ahead
        pool = (f"; {len(a.figures_drawn) + len(a.snippets_run)} tasks on {a.workers} workers, {a.cpu_s:.1f} s CPU"
                + (f", {a.requeued} requeued" if a.requeued else "")) if a.workers else ""
        return (f"normref [{self.lang}]: figures {s['fig_miss']} rendered, {s['fig_hit']} from cache; "
                f"snippets {s['snip_miss']} run, {s['snip_hit']} from cache{pool}; {time.perf_counter() - s['t0']:.1f} s")
