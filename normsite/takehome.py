"""One language's build, for what a reader takes home: the wheel, the install lines, the notebooks, the links.

``TakeHome`` has one method per step of the build; normsite.build.Site calls
them from its own steps (nothing here needs MkDocs):

    configure      -> this build's wheel address, repository links (edit URI, repo name)
    files          -> the wheel (Chinese build; the English pages link to the same file)
    ipynb          -> a notebook's .ipynb download, installing from this site's wheel
    notebook_source -> a notebook's .py download (its jupytext source), installing from this site's wheel
    page_markdown  -> [[install: …]] expanded; an install block put next to every snippet
    page_html      -> a notebook page with the site's wheel address in its install cell
    notebook_headings -> a notebook page's heading ids, the same on the page and in its table of contents
    notebook_links -> a notebook page's "Open in Colab" and repository links (or none)
    post_build     -> the wheel present; no token left anywhere

The notebooks' kernels run with NORMREF_SITE_BUILD=1 (normsite.nbexec; the
build's own process sets it too), so a cell can skip what would make two builds
differ (the performance notebook's timing).
"""

from __future__ import annotations

import html
import os
import re
from pathlib import Path

from markdown.extensions.toc import slugify_unicode  # Python-Markdown (not MkDocs): the slugs the pages use

from .content.grammar import pattern

from . import LANGS, SiteError, colab, install, snippets
from . import wheel as wheel_mod

__all__ = ["TakeHome", "SNIPPET_DIRECTIVE", "SITE_BUILD_ENV"]

SNIPPET_DIRECTIVE = pattern("snippet", "snippet-code", at_line_start=True)
SITE_BUILD_ENV = "NORMREF_SITE_BUILD"
ROOT = Path(__file__).resolve().parent.parent


class TakeHome:
    def __init__(self, lang: str, docs_dir: str | Path, root: Path = ROOT):
        if lang not in LANGS:
            raise ValueError(f"lang must be one of {LANGS}, got {lang!r}")
        self.lang, self.docs_dir, self.root = lang, Path(docs_dir), Path(root)
        self.wheel_name = wheel_mod.wheel_name(self.root)
        self.url: str | None = None
        self.repo: colab.Repo | None = None
        self.built: wheel_mod.Wheel | None = None
        self.heading_ids: dict[str, list[str]] = {}  # notebook page -> its heading ids, in order

    # ------------------------------------------------------------ config

    def configure(self, zh_root: str | None, repo_url: str | None, branch: str | None) -> dict:
        """Settings for the MkDocs config: {"edit_uri": …, "repo_name": …}, both None without a
        repository (MkDocs would otherwise guess an edit URI)."""
        os.environ[SITE_BUILD_ENV] = "1"
        self.url = install.wheel_url(zh_root, self.wheel_name)
        self.repo = colab.repo_from(repo_url, branch)
        if self.repo is None:
            return {"edit_uri": None, "repo_name": None}
        return {"edit_uri": self.repo.edit_uri(self.lang), "repo_name": self.repo.name}

    # ------------------------------------------------------------ files

    def files(self) -> list[tuple[str, bytes]]:
        """(uri, content) the build adds: the wheel, in the Chinese build only (one copy serves both)."""
        if self.lang != "zh":
            return []
        self.built = wheel_mod.build(self.root)
        return [(wheel_mod.site_path(self.built.name), self.built.data)]

    def ipynb(self, notebook_path: str | Path) -> str:
        """The download for a notebook source: the same text as the copy Colab opens for this site
        (colab.export is notebooks.ipynb_text). Cached by the source's text and the wheel's address: parsing
        and writing the notebook with jupytext was a tenth of each warm build, and it imports jupytext."""
        from normref import cache

        from . import notebooks, stepcache

        path, url = Path(notebook_path), self._url()
        return stepcache.cached("ipynb", cache.relative(path), {"text": path.read_text(encoding="utf-8"), "wheel_url": url},
                                lambda: notebooks.ipynb_text(path, url), modules=("normsite.notebooks",),
                                libs=("jupytext",))

    def notebook_source(self, notebook_path: str | Path) -> str:
        """The .py download beside a notebook's page: its jupytext source, installing from this site's wheel."""
        return install.fill_wheel_url(Path(notebook_path).read_text(encoding="utf-8"), self._url())

    # ------------------------------------------------------------ pages

    def _url(self, src_uri: str = "") -> str:
        if self.url is None:
            raise SiteError(f"{src_uri}: the wheel's address is unknown (Site.configure has not run)")
        return self.url

    def page_markdown(self, markdown: str, src_uri: str) -> str:
        if install.DIRECTIVE.search(markdown):
            markdown = install.expand(markdown, self.lang, self._url(src_uri), src_uri)

        def block(m):
            path = snippets.SNIPPETS / m.group("name")
            if not path.is_file():
                return m.group(0)  # the snippet directive itself reports a missing file, naming the page
            try:
                lines = install.snippet_block(path, self.lang, self._url(src_uri))
            except SiteError as e:
                raise SiteError(f"{src_uri}: {e}") from e
            indent = m.group("indent")
            return "\n".join(indent + ln for ln in lines.splitlines()) + "\n\n" + m.group(0)

        return SNIPPET_DIRECTIVE.sub(block, markdown)

    def page_html(self, html_text: str, src_uri: str) -> str:
        return install.fill_wheel_url(html_text, self._url()) if _is_notebook(src_uri) else html_text

    def notebook_headings(self, html_text: str, src_uri: str) -> tuple[str, list[str] | None]:
        """A notebook page's headings with ids that work, and those ids in page order (None for other pages).

        nbconvert and the table of contents slugify headings separately, and both
        drop Chinese characters: a heading such as "手算例子" gets id "" on the
        page and "#_1" in the table of contents, a link to nowhere. Each heading
        gets a Unicode slug of its text here; the hook gives the table of contents
        the same ids, in order."""
        if not _is_notebook(src_uri):
            return html_text, None
        used: set[str] = set()
        ids: list[str] = []

        def one(m):
            text = html.unescape(re.sub(r"<[^>]+>", "", m.group(3)))
            base = slugify_unicode(text, "-") or "section"
            new, k = base, 1
            while new in used:
                new, k = f"{base}-{k}", k + 1
            used.add(new)
            ids.append(new)
            return f'<h{m.group(1)} id="{new}">{m.group(3)}<a class="anchor-link" href="#{new}">¶</a></h{m.group(1)}>'

        out = _NB_HEADING.sub(one, html_text)
        self.heading_ids[src_uri] = ids
        return out, ids

    def notebook_links(self, src_uri: str) -> dict | None:
        """For a notebook page (None for other pages): the line that gives a bare environment a
        Jupyter kernel, and, in a build for a GitHub repository, "Open in Colab" and the committed
        .ipynb (both None in a local build: no links, and no broken ones)."""
        if not _is_notebook(src_uri) or not src_uri.endswith(".py"):
            return None
        out = {"kernel": f"pip install {install.KERNEL}", "colab": None, "repo_ipynb": None}
        if self.repo is not None:
            rel = colab.notebook_path(self.lang, Path(src_uri))  # on the colab branch the Pages workflow pushes
            out.update(colab=self.repo.colab(rel), repo_ipynb=self.repo.notebook_blob(rel))
        return out

    # ------------------------------------------------------------ after the build

    def post_build(self, site_dir: str | Path) -> None:
        site = Path(site_dir)
        zh_site = site if self.lang == "zh" else (site.parent if site.name == "en" else None)
        if zh_site is not None:
            wheel_mod.check_published(zh_site, self.wheel_name)
        left = [p.relative_to(site).as_posix() for p in sorted(site.rglob("*"))
                if p.is_file() and p.suffix in (".html", ".ipynb", ".py", ".json")
                and install.WHEEL_TOKEN.encode() in p.read_bytes()]
        if left:
            raise SiteError(f"the wheel's address was not filled in: {install.WHEEL_TOKEN} is left in {', '.join(left[:5])}")


_NB_HEADING = re.compile(r'<h([1-6]) id="([^"]*)">(.*?)<a class="anchor-link" href="#\2">¶</a></h\1>', re.S)


def _is_notebook(src_uri: str) -> bool:
    return src_uri.startswith("notebooks/") and src_uri.endswith((".py", ".ipynb"))
