"""MkDocs adapter for the reading aids (thin: the work is in normsite.reading).

- on_files: serve GLightbox's two files (from the pinned mkdocs-glightbox
  package) and assets/nr-terms.json (the glossary's term pairs, for
  side-by-side reading); none of them is linked from a page: site.js fetches
  them when a reader zooms a figure or turns side-by-side reading on;
- on_page_content: wrap figure images in links that zoom; on the glossary page,
  put every name and alias of an entry into its heading for search (hidden);
- the print edition (normsite.printed): print.md's [[print-edition]] becomes
  every page of the nav in order, [[print-date]] the build's date
  (SOURCE_DATE_EPOCH, the commit's time); print/pdf.json says no PDF yet
  (tools/pdf.py, `make pdf`, rewrites it); the print page's own CJK font is
  written to assets/fonts/print-cjk.ttf after the build;
- on_files / on_post_page / on_post_template: our search worker (Material's,
  plus "a glossary name's entry comes first") is served, and each page's
  Material config points at it.

Listed after the other hooks, so it sees the page with math typeset and terms linked.
"""

from __future__ import annotations

import os
import posixpath
import time
from pathlib import Path

from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File

from normref import glossary as gl
from normsite import printed, reading

PRINT_PAGE = "print.md"  # docs/<lang>/print.md: the print edition's page (not in the nav)
_state: dict = {}


def _lang(config) -> str:
    return "zh" if str(config.theme["language"]).startswith("zh") else "en"


def _rel(page, path: str) -> str:
    """Site path ``path`` relative to the page (the site works under any sub-path)."""
    url = page.url or ""
    here = (url if url.endswith("/") else posixpath.dirname(url)).rstrip("/") or "."
    return posixpath.relpath(path, here)


def _material_worker(config) -> str:
    found = [p for d in config.theme.dirs for p in Path(d).glob("assets/javascripts/workers/search.*.min.js")]
    if not found:
        raise PluginError("reading: Material's search worker (assets/javascripts/workers/search.*.min.js) not found")
    return found[0].read_text(encoding="utf-8")


def on_files(files, config):
    for path, content in reading.glightbox_files().items():
        files.append(File.generated(config, path, content=content))
    files.append(File.generated(config, f"assets/javascripts/workers/{reading.SEARCH_WORKER}",
                                content=reading.search_worker(_material_worker(config))))
    files.append(File.generated(config, "assets/nr-terms.json", content=reading.term_pairs_json(gl.default())))
    if files.get_file_from_path(PRINT_PAGE) is not None:
        files.append(File.generated(config, "print/pdf.json", content=printed.pdf_manifest(_lang(config), None)))
    return files


def on_page_markdown(markdown, page, config, files):
    if page.file.src_uri == PRINT_PAGE:
        stamp = time.gmtime(int(os.environ.get("SOURCE_DATE_EPOCH") or time.time()))
        markdown = markdown.replace("[[print-date]]", time.strftime("%Y-%m-%d", stamp))
    return markdown


def on_page_content(html, page, config, files):
    lang = "zh" if str(config.theme["language"]).startswith("zh") else "en"
    html, _ = reading.zoomable_figures(html)
    if page.file.src_uri == gl.GLOSSARY_PAGE:
        html, _ = reading.index_term_forms(html, gl.default(), lang)
    return html


def on_post_page(output, page, config):
    output, _ = reading.use_search_worker(output)
    if page.file.src_uri == PRINT_PAGE:  # the whole page: its header and menus are printed too
        _state["cjk_font"] = printed.cjk_font(printed.cjk_chars(output))
    return output


def on_post_template(output_content, template_name, config):
    # 404.html has the search box too.
    if template_name.endswith(".html"):
        output_content, _ = reading.use_search_worker(output_content)
    return output_content


def on_page_context(context, page, config, nav):
    if page.file.src_uri != PRINT_PAGE:
        return context
    chapters = [printed.Chapter(p.url, p.title or "", p.content or "") for p in nav.pages
                if p.file.src_uri.endswith(".md") and p.file.src_uri != PRINT_PAGE]
    body = printed.assemble(chapters, page.url, katex_css="assets/katex/katex.min.css")
    assets = (f'<link rel="stylesheet" href="{_rel(page, "assets/stylesheets/print.css")}">\n'
              f'<script src="{_rel(page, "assets/javascripts/pdf-link.js")}" defer></script>\n')
    if "<p>[[print-edition]]</p>" not in page.content:
        raise ValueError(f"{PRINT_PAGE}: [[print-edition]] must stand alone in a paragraph")
    page.content = assets + page.content.replace("<p>[[print-edition]]</p>", body)
    return context


def on_post_build(config):
    font = _state.pop("cjk_font", None)
    if font is not None:
        out = os.path.join(config.site_dir, *printed.CJK_FONT_PATH.split("/"))
        os.makedirs(os.path.dirname(out), exist_ok=True)
        with open(out, "wb") as fh:
            fh.write(font)
