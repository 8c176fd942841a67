"""One language's build of the site, as the MkDocs hooks drive it (but without MkDocs).

``Site`` holds what a build needs across pages (the language, the glossary, the
counts it reports) and has one method per step the hooks call (MkDocs' config and pages duck-typed: this
module imports no MkDocs):

    from_config    -> this build's Site, and MkDocs' config set from it (configure, plugins, the theme's files)
    configure      -> this build's site_url and both languages' roots; its repository links
    plugins        -> mkdocs-jupyter's HTML cache folder; the search index's per-page cache
    generated      -> the files the build adds (the normref wheel, figures, .ipynb and .py downloads;
                      the reading aids': GLightbox, the term pairs, our search worker, print/pdf.json);
                      ``executed`` then maps each notebook page to the executed .ipynb (the prepare
                      pass ran it, normsite.nbexec) that mkdocs-jupyter renders
    page_markdown  -> an install block next to each snippet; the directives ([[figure: …]], [[value: …]],
                      [[ledger]], [[quiz]]…) substituted from the prepare pass's manifest; [[glossary]]
    page_html      -> data blocks wrapped, math typeset, assets linked, terms linked, figures made
                      zoomable, glossary headings given every name (search); notebook pages with
                      the wheel's address and heading ids that match their contents
    page_context   -> a notebook page's downloads and description, for overrides/main.html
    finish_page    -> post_page, then cite (the two below)
    post_page      -> notebook pages scrubbed, inline CSS trimmed; the print page gets every
                      chapter of the nav (normsite.printed: each page's HTML is kept from
                      page_html, and every page has its HTML before any reaches post_page)
                      and its CJK font is written to site_dir
    cite           -> the "cite this page" block at the end of each page (normsite.cite)
    post_build     -> the downloads filled in, the wheel checked
    report         -> one log line: what was rendered and what came from the cache

What normref computes comes from one place: the prepare pass (normsite.prepare), a fresh
process that generated() starts in the Chinese build (the English build reuses its manifest
when the inputs are unchanged). This process substitutes, and imports no torch, no
matplotlib and no normref registry (the report line says which of those it has imported).

What a reader takes home (the wheel, install lines, notebooks, Colab and
repository links) is normsite.takehome.TakeHome's part, called from here.

NORMREF_NO_GENERATED=1 builds the same pages without the generated work:
figures are neither rendered nor registered (a directive becomes its caption)
and notebooks are converted but not executed. `make perf` compares a warm
build against it, to show that a warm build does no figure or notebook work.
"""

from __future__ import annotations

import json
import os
import posixpath
import time
from collections.abc import Iterable, Mapping
from pathlib import Path

from normref import cache
from .content import glossary as gl

from . import LANGS, SiteError, ahead, assets, cjk, directives, mathtex, notebooks, prepare, printed
from . import cite, reading, release, searchcache, stepcache, themefiles
from . import glossary as site_glossary
from .takehome import TakeHome

__all__ = ["Site", "no_generated", "nav_titles"]

GLOSSARY_DIRECTIVE = "[[glossary]]"
ROOT = Path(__file__).resolve().parent.parent  # the repository: docs/, tests/ (the ledger names tests)


no_generated = prepare.no_generated


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
    def __init__(self, lang: str, docs_dir: str | Path, site_dir: str | Path | None = None, *,
                 generated: bool | None = None, glossary_path: str | Path | None = None, rebuild: bool = False):
        if lang not in LANGS:
            raise ValueError(f"lang must be one of {LANGS}, got {lang!r}")
        self.lang, self.docs_dir = lang, Path(docs_dir)
        self._font = None  # the print edition's CJK font: (where it goes, the function that gives its bytes)
        self.rebuild = rebuild  # a rebuild under `mkdocs serve` (the prepare pass, as every build, runs only when what it reads changed)
        self.site_dir = Path(site_dir) if site_dir is not None else None
        self.reading_order: dict[str, str] = {}  # {docs path: nav title}, in the nav's order
        self.rendered: dict[str, tuple[str, str]] = {}  # {docs path: (url, HTML)} of Markdown pages
        self.generated_work = not no_generated() if generated is None else generated
        try:
            self.glossary = gl.load(glossary_path or gl.DATA)
            self.glossary_digest = stepcache.digest(Path(glossary_path or gl.DATA).read_bytes())
        except (gl.GlossaryError, FileNotFoundError) as e:
            raise SiteError(f"glossary: {e}") from e
        self.stats = dict(t0=time.perf_counter(), fig_hit=0, fig_miss=0, snip_hit=0, snip_miss=0)
        self.takehome = TakeHome(lang, self.docs_dir)
        self.repository: dict = {"edit_uri": None, "repo_name": None}
        self._jieba_taught = False
        self.executed: dict[str, str] = {}  # {notebook page's docs path: its executed .ipynb} (generated())
        self.manifest: dict | None = None  # the prepare pass's (generated()); None: pages expand in this process
        self.prepare_log = ""
        self.roots: dict | None = None  # configure(): {lang: root URL}
        self.nb_counts = (0, 0)  # (executed, from cache) by the prepare pass: both languages' notebooks
        self.provenance: cite.Provenance | None = None  # what the site is built from (cite())
        self.cite_texts: dict | None = None  # the citation block's words (cite())
        release.default_source_date_epoch()
        cache.STATS.update(hit=0, miss=0)
        stepcache.STATS.clear()
        del cache.WHY[:]  # this build's "why re-run" lines (a serve rebuild starts a new list)

    # ------------------------------------------------------------ config

    @classmethod
    def from_config(cls, config, *, rebuild: bool = False) -> Site:
        """This build's Site, from MkDocs' config (duck-typed), which it then sets: site_url, both languages' roots
        (``extra.nr_i18n``), the repository links, the preference scope both builds share (Material's
        ``extra.scope``), the plugins this build drives (:meth:`plugins`) and the theme's file listing
        (normsite.themefiles). ``rebuild``: a rebuild under `mkdocs serve`."""
        lang = "zh" if str(config.theme["language"]).startswith("zh") else "en"
        site = cls(lang, config.docs_dir, config.site_dir, rebuild=rebuild)
        config.site_url, config.extra["nr_i18n"] = site.configure(config.site_url, config.repo_url,
                                                                  config.extra.get("repo_branch"))
        config.edit_uri, config.repo_name = site.repository["edit_uri"], site.repository["repo_name"]  # None: no repo
        config.extra["scope"] = site.scope
        site.plugins(config.plugins)  # after theirs: MkDocs runs the hooks' on_config last
        themefiles.list_without_dot_folders(config.theme)
        return site

    def configure(self, site_url: str | None, repo_url: str | None = None,
                  repo_branch: str | None = None) -> tuple[str | None, dict]:
        """(site_url, nr_i18n); ``self.repository`` then holds this build's edit_uri and repo_name, and
        ``self.scope`` the preference scope both builds share (release.preference_scope)."""
        site_url, i18n = release.site_urls(self.lang, site_url)
        self.scope = release.preference_scope(i18n["roots"])
        self.roots = i18n["roots"]  # the practice page's Anki deck (made by the prepare pass) links there
        self.repository = self.takehome.configure(i18n["roots"]["zh"], repo_url, repo_branch)
        return site_url, i18n

    def teach_jieba(self) -> None:
        """Material's search segments Chinese with jieba: teach it the glossary's word parts. Called
        before the first page the search index has to segment (plugins()), not at configure: loading
        jieba's dictionary costs half a second per build, and a warm build reads every page's search
        entries from the cache (normsite.searchcache) without segmenting anything."""
        if not self._jieba_taught:
            site_glossary.taught(self.jieba_words())
            self._jieba_taught = True

    def jieba_words(self) -> tuple[str, ...]:
        """Word parts Material's search (jieba) must know to segment Chinese as the glossary does."""
        return self.glossary.jieba_parts

    def plugins(self, plugins: Mapping[str, object]) -> None:
        """Set up the plugins this build drives (duck-typed, by their MkDocs names): mkdocs-jupyter's
        cache folder; the search index's per-page cache (normsite.searchcache). SiteError if
        mkdocs-jupyter would execute notebooks itself: normsite.nbexec executes them."""
        if (nb := plugins.get("mkdocs-jupyter")) is not None:
            if nb.config.get("execute") or nb.config.get("include_source"):
                raise SiteError("mkdocs.yml: mkdocs-jupyter must have execute: false and include_source: false "
                                "(normsite.nbexec executes the notebooks; the build adds each NAME.py download)")
            nb.config["cache_dir"] = self.notebook_cache_dir()
        index = getattr(plugins.get("material/search") or plugins.get("search"), "search_index", None)
        if index is None:
            self.teach_jieba()
        else:  # the glossary's jieba words segment the text: its digest is part of each page's key
            searchcache.cache_entries(index, (self.glossary_digest,), prepare=self.teach_jieba)

    def notebook_cache_dir(self) -> str:
        """mkdocs-jupyter's cache of the HTML it converts a notebook into. Its key is the file's bytes,
        and the file is an executed notebook (normsite.nbexec), itself keyed by everything it depends
        on: so the key is complete. One folder per language (the plugin evicts the entries a build did
        not use, so two builds sharing one would evict each other's) and per kind of build."""
        d = cache.folder("jupyter-html").resolve() / self.lang
        return str(d) + ("" if self.generated_work else "-noexec")

    def template_cache(self):
        """Jinja's own bytecode cache for the theme's templates (jinja2.FileSystemBytecodeCache), in the
        normref cache: MkDocs makes a fresh Jinja environment per build, which compiled Material's 43
        templates again each time (0.5 s of a 3.5 s rebuild under `mkdocs serve`). Jinja keys each entry
        by the template's name and a checksum of its source, so an edited template is compiled afresh."""
        import jinja2

        d = cache.folder("jinja").resolve()
        return jinja2.FileSystemBytecodeCache(str(d))

    # ------------------------------------------------------------ files

    def generated(self, sources: Mapping[str, str], theme_dirs: Iterable[str | Path] = ()) -> list[tuple[str, bytes | str]]:
        """(uri, content) of the files the build adds: the normref wheel, each referenced figure in
        both themes, each jupytext notebook's .ipynb, and the reading aids' files. ``sources``:
        {docs path: file path} of the build's files; ``theme_dirs``: the theme's folders (Material's
        search worker is there). An unknown figure raises SiteError naming its pages.

        First, the prepare pass (normsite.prepare: a fresh process in the Chinese build, reused by the
        English one when nothing changed) computes what the pages of both languages ask normref for;
        the notebooks of both are executed ahead, on every core (normsite.ahead). The page loops of
        this build and the other language's then only read the manifest and the cache."""
        out: list[tuple[str, bytes | str]] = list(self.takehome.files())  # the wheel: every build's install lines need it
        out += self.reading_files(sources, theme_dirs)
        dirs = ahead.docs_dirs(self.lang, self.docs_dir)
        self.manifest = prepare.obtain(dirs, self.generated_work, roots=self.roots)
        self.prepare_log = self.manifest["log"]
        mine = self.manifest["langs"][self.lang]
        if self.manifest["ran"]:
            self.stats.update(mine["stats"])
        else:  # a pass drew and ran them before this build (normsite.sitebuild's, or an earlier build's): from the cache
            st = mine["stats"]
            self.stats.update(fig_hit=st["fig_hit"] + st["fig_miss"], snip_hit=st["snip_hit"] + st["snip_miss"])
        out += [(uri, Path(path).read_bytes()) for uri, path in mine["files"].items()]
        if not self.generated_work:
            return out + self.notebook_files(sources)
        self.executed = dict(mine["executed"])
        # The log counts the notebooks of both languages, as the pass executed them (none when it was reused)
        run_nb, cached_nb = self.manifest["counts"]["notebook"]
        self.nb_counts = (run_nb, cached_nb) if self.manifest["ran"] else (0, run_nb + cached_nb)
        return out + self.notebook_files(sources)

    def notebook_files(self, sources: Mapping[str, str]) -> list[tuple[str, str]]:
        """Each jupytext notebook's downloads beside its page: NAME.ipynb (unexecuted) and its NAME.py source,
        both installing from this site's wheel."""
        out = []
        for uri, path in sources.items():
            if notebooks.is_notebook(uri) and uri.endswith(".py"):
                folder = posixpath.dirname(notebooks.ipynb_uri(uri))
                out.append((notebooks.ipynb_uri(uri), self.takehome.ipynb(path)))
                out.append((f"{folder}/{posixpath.basename(uri)}", self.takehome.notebook_source(path)))
        return out

    def reading_files(self, sources: Mapping[str, str], theme_dirs: Iterable[str | Path]) -> list[tuple[str, bytes | str]]:
        out: list[tuple[str, bytes | str]] = list(reading.glightbox_files().items())
        out.append(("assets/nr-terms.json", reading.term_pairs_json(self.glossary)))
        workers = [p for d in theme_dirs for p in sorted(Path(d).glob("assets/javascripts/workers/search.*.min.js"))]
        if theme_dirs and not workers:
            raise SiteError("theme: Material's search worker (assets/javascripts/workers/search.*.min.js) not found")
        if workers:  # ours beside Material's, named like it (overrides/main.html points each page at it)
            out.append((f"assets/javascripts/workers/{reading.SEARCH_WORKER_PREFIX}{workers[0].name[len('search.'):]}",
                        reading.search_worker(workers[0].read_text(encoding="utf-8"))))
        if printed.PRINT_PAGE in sources:
            out.append(("print/pdf.json", printed.pdf_manifest(self.lang, None)))
        return out

    # ------------------------------------------------------------ pages

    def page_markdown(self, markdown: str, src_uri: str, pages: Iterable[str], nav=None) -> str:
        """``pages``: the docs paths of this build; ``nav``: its nav (the glossary's "explained on" links)."""

        if nav is not None:
            self.reading_order = nav_titles(nav)
        if notebooks.is_notebook(src_uri):  # its source (.ipynb or .py), which mkdocs-jupyter renders itself
            return markdown
        if self.lang == "zh":
            markdown = cjk.join_soft_breaks(markdown)  # as prepare read the page: the same directive texts
        markdown = self.takehome.page_markdown(markdown, src_uri)
        markdown = directives.substitute(markdown, self.expansions(markdown, src_uri), src_uri)
        if src_uri == printed.PRINT_PAGE:
            markdown = printed.stamp(markdown)
        if GLOSSARY_DIRECTIVE in markdown:
            titles = nav_titles(nav)
            here = {p: titles.get(p, "") for p in pages}
            markdown = markdown.replace(GLOSSARY_DIRECTIVE, site_glossary.render_markdown(self.glossary, self.lang, here))
        return markdown

    def expansions(self, markdown: str, src_uri: str) -> dict:
        """{directive text: Markdown} for a page: the prepare pass's; without one (Site used on a string,
        outside a build), computed here, in this process."""
        if self.manifest is not None:
            return self.manifest["langs"][self.lang]["pages"].get(src_uri, {})
        dirs = {code: self.docs_dir.parent / code for code in LANGS}
        return {m.group(0): directives.expand_one(m.group("kind"), m.group("name"), self.lang, src_uri,
                                                  generated=self.generated_work, docs_dirs=dirs, root=ROOT)
                for m in directives.PREPARED.finditer(markdown)}

    def render(self, page, config, files, plain, toc: tuple[type, type]) -> None:
        """Render a page's Markdown (``plain``: MkDocs' own Page.render of it), from the cache when nothing the
        rendering reads changed (normsite.render; ``toc``: MkDocs' AnchorLink and TableOfContents)."""
        from . import render

        render.render(page, config, files, plain, self.lang, toc)

    def page_html(self, html_text: str, src_uri: str, url: str, glossary_url: str | None, toc=None) -> str:
        """``glossary_url``: the glossary page's URL in this build, or None when it has none; ``toc``:
        the page's table of contents (MkDocs anchor links), which a notebook page's heading ids retarget."""
        if notebooks.is_notebook(src_uri):
            html_text = notebooks.drop_css_list(html_text)
        html_text, _ = self.takehome.notebook_headings(self.takehome.page_html(html_text, src_uri), src_uri)
        if toc is not None:
            self.retarget_toc(src_uri, toc)
        html_text = assets.wrap_data(html_text)
        # Math and term links are pure functions of the page: cached by content (normsite.stepcache).
        html_text, n_math = stepcache.cached("math", f"{self.lang}:{src_uri}", {"html": html_text},
                                             lambda: mathtex.typeset(html_text, src_uri), modules=("normsite.mathtex",),
                                             libs=("pykatex",))
        html_text = assets.inject(html_text, url, has_math=n_math > 0)
        # Only prose pages: notebooks carry code output, and the glossary links its own terms explicitly.
        if glossary_url is not None and src_uri != gl.GLOSSARY_PAGE and src_uri.endswith(".md"):
            href = site_glossary.glossary_href(url, glossary_url)
            html_text = stepcache.cached(
                "terms", f"{self.lang}:{src_uri}",
                {"html": html_text, "glossary link": href, "glossary": self.glossary_digest},
                lambda: site_glossary.link_terms(html_text, self.glossary, self.lang, href)[0],
                modules=("normsite.glossary",))
        html_text, _ = reading.zoomable_figures(html_text)
        if src_uri == gl.GLOSSARY_PAGE:
            html_text, _ = reading.index_term_forms(html_text, self.glossary, self.lang)
        if src_uri.endswith(".md"):
            self.rendered[src_uri] = (url, html_text)
        return html_text

    def page_context(self, page) -> None:
        """A page's template context (MkDocs' Page, duck-typed): a notebook page's downloads as
        ``page.nr_notebook`` (overrides/main.html), and its description (:meth:`describe_notebook`)."""
        page.nr_notebook = self.notebook_downloads(page.file.src_uri)
        self.describe_notebook(page.file.src_uri, page.content, page.meta)

    def describe_notebook(self, src_uri: str, html_text: str, meta: dict) -> None:
        """Give a notebook page (it has no front matter) a description in ``meta``, for overrides/main.html's
        <meta name="description">: its opening sentence (notebooks.description), not the site's."""
        if src_uri.endswith(".py") and not meta.get("description") and (said := notebooks.description(html_text)):
            meta["description"] = said

    def notebook_downloads(self, src_uri: str) -> dict | None:
        """For overrides/main.html: a notebook page's downloads, its kernel line, Colab and repository links."""
        found = notebooks.downloads(src_uri)
        return found and {**found, **(self.takehome.notebook_links(src_uri) or {})}

    def retarget_toc(self, src_uri: str, toc) -> None:
        """Give a notebook page's table of contents (MkDocs anchor links: ``.id``, ``.children``) the
        heading ids page_html gave the page, in order; SiteError if the two disagree in number."""
        ids = self.takehome.heading_ids.get(src_uri)
        if ids is None:
            return

        def flat(links):
            for link in links:
                yield link
                yield from flat(link.children)

        links = list(flat(toc))
        if len(links) != len(ids):
            raise SiteError(f"{src_uri}: {len(ids)} headings on the page but {len(links)} in its table of contents")
        for link, new_id in zip(links, ids):
            link.id = new_id

    def post_page(self, output: str, src_uri: str) -> str:
        if notebooks.is_notebook(src_uri):  # a megabyte of nbconvert's HTML and CSS to scan: a cached page step
            output = stepcache.cached("scrub", f"{self.lang}:{src_uri}", {"html": output},
                                      lambda: notebooks.scrub_page(output, src_uri, self.lang), modules=("normsite.notebooks",),
                                      libs=("tinycss2",))
        else:
            output = notebooks.scrub_page(output, src_uri, self.lang)
        if src_uri == printed.PRINT_PAGE:
            output = self._print_page(output)
        return output

    def finish_page(self, output: str, page, site_name: str) -> str:
        """A page's whole HTML (MkDocs' Page, duck-typed): :meth:`post_page`, then :meth:`cite`."""
        src_uri = page.file.src_uri
        return self.cite(self.post_page(output, src_uri), src_uri, page.title,
                         [a.title for a in reversed(page.ancestors)], page.canonical_url or page.abs_url, page.url,
                         site_name)

    def cite(self, output: str, src_uri: str, nav_title: str, groups: list[str], url: str, page_url: str,
             site_name: str) -> str:
        """The page's "cite this page" block (normsite.cite) at the end of its content. ``groups``: the nav
        sections above the page, outermost first; ``url``: its address; ``page_url``: its path in this build.
        Not on the print edition: it is every other page at once, and stamps its own date."""
        if src_uri == printed.PRINT_PAGE:
            return output
        if self.provenance is None:  # once per build: git is asked once and the block's words read once, not per page
            self.provenance, self.cite_texts = cite.provenance(ROOT), cite.texts()
        title = cite.page_title(output, nav_title)
        html_block = cite.block(self.lang, title, [site_name, *groups, nav_title], url,
                                cite.key_for(self.lang, page_url), self.provenance, self.cite_texts)
        try:
            return cite.insert(output, html_block)
        except ValueError as e:
            raise SiteError(f"{src_uri}: {e}") from e

    def _print_page(self, output: str) -> str:
        """The print edition: the nav's pages in reading order, from their kept HTML; then its CJK
        font (the whole page's characters: header and menus are printed too) into site_dir."""
        url = self.rendered[printed.PRINT_PAGE][0]
        pages = [(src, self.rendered[src][0], title, self.rendered[src][1])
                 for src, title in self.reading_order.items() if src in self.rendered]

        def chapter(c, print_url: str, tops: dict, work) -> tuple[str, bool]:
            # One chapter's work, cached by its own HTML and the small table of chapter titles: editing
            # one page re-does that chapter only, not the whole edition.
            return tuple(stepcache.cached("print-chapter", f"{self.lang}:{c.url}", {
                "html": c.html, "title": c.title, "print page": print_url, "chapter titles": json.dumps(tops)},
                lambda: list(work()), modules=("normsite.printed",), libs=("beautifulsoup4",)))

        def compute() -> list[str]:
            page = printed.print_page(output, url, pages, each=chapter)
            return [page, printed.cjk_chars(page)]

        # A pure function of the page, the chapters' HTML and the site code: cached like math and terms
        # (stepcache), so a warm build neither re-assembles the chapters nor scans them for CJK.
        try:
            output, chars = stepcache.cached("print", f"{self.lang}:{url}", {"page": output, "chapters": json.dumps(pages)}, compute,
                                            modules=("normsite.printed",))
        except ValueError as e:
            raise SiteError(f"{printed.PRINT_PAGE}: {e}") from e
        if self.site_dir is not None:  # cut beside the rest of the build, written when it ends (post_build)
            self._font = (self.site_dir / printed.CJK_FONT_PATH, printed.cjk_font_begun(chars, name=f"cjk-subset-{self.lang}"))
        return output

    def post_build(self, site_dir: str | Path) -> str:
        """The print edition's CJK font written, the downloads filled in and the wheel checked (SiteError if
        missing); returns the report line."""
        font = self._font
        if font is not None:
            self._font = None
            font[0].parent.mkdir(parents=True, exist_ok=True)
            font[0].write_bytes(font[1]())
        self.takehome.post_build(site_dir)
        return "\n".join([self.report(), *prepare.why_lines(cache.WHY)])

    # ------------------------------------------------------------ report

    def report(self) -> str:
        """One line: figures drawn by this build (any language: the pass draws both) and this
        build's figures it found cached; the same for snippets; the notebooks (both languages) the prepare
        pass executed and found cached (its own line has the pool's time); the page steps; the heavy
        modules this MkDocs process imported (none: the prepare pass imports them)."""
        s = self.stats
        steps = stepcache.counts()
        return (f"normref [{self.lang}]: figures {s['fig_miss']} rendered, {s['fig_hit']} from cache; "
                f"snippets {s['snip_miss']} run, {s['snip_hit']} from cache; "
                f"notebooks {self.nb_counts[0]} executed, {self.nb_counts[1]} from cache; "
                f"page steps computed: {steps or 'none asked'}; {time.perf_counter() - s['t0']:.1f} s; "
                f"heavy modules imported: {', '.join(prepare.heavy_modules()) or 'none'}")
