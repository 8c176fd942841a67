"""MkDocs adapter for the reading aids (thin: the work is in normsite.reading).

- on_files: serve GLightbox's two files (from the pinned mkdocs-glightbox
  package) and assets/nr-terms.json (the glossary's term pairs, for
  side-by-side reading); none of them is linked from a page: site.js fetches
  them when a reader zooms a figure or turns side-by-side reading on;
- on_page_content: wrap figure images in links that zoom; on the glossary page,
  put every name and alias of an entry into its heading for search (hidden);
- on_post_page / on_post_template: point Material's config at our search
  worker (Material's own, plus "a glossary name's entry comes first").

Listed after the other hooks, so it sees the page with math typeset and terms linked.
"""

from __future__ import annotations

from mkdocs.structure.files import File

from normref import glossary as gl
from normsite import reading


def on_files(files, config):
    for path, content in reading.glightbox_files().items():
        files.append(File.generated(config, path, content=content))
    files.append(File.generated(config, "assets/nr-terms.json", content=reading.term_pairs_json(gl.default())))
    return files


def on_page_content(html, page, config, files):
    lang = "zh" if str(config.theme["language"]).startswith("zh") else "en"
    html, _ = reading.zoomable_figures(html)
    if page.file.src_uri == gl.GLOSSARY_PAGE:
        html, _ = reading.index_term_forms(html, gl.default(), lang)
    return html


def on_post_page(output, page, config):
    output, _ = reading.use_search_worker(output)
    return output


def on_post_template(output_content, template_name, config):
    # 404.html has the search box too.
    if template_name.endswith(".html"):
        output_content, _ = reading.use_search_worker(output_content)
    return output_content
