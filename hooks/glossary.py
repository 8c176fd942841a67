"""MkDocs adapter for the glossary (thin: the work is in normref.glossary).

- on_config: load and validate normref/glossary.yml (a bad term fails the build,
  naming it); add the glossary's word parts to jieba, which Material's search
  plugin uses to segment Chinese (the same as its `jieba_dict_user` option, but
  the word list stays in the glossary data).
- on_page_markdown: expand `[[glossary]]` into the entries, in the page's language.
- on_page_content: link the first occurrence of each term on every Markdown page
  to its entry, with the short definition as the `title` tooltip.
"""

from __future__ import annotations

import posixpath

from mkdocs.exceptions import PluginError

from normref import glossary as gl

DIRECTIVE = "[[glossary]]"
_state: dict = {}


def _lang(config) -> str:
    return "zh" if str(config.theme["language"]).startswith("zh") else "en"


def on_config(config):
    try:
        _state["glossary"] = gl.load(gl.DATA)
    except (gl.GlossaryError, FileNotFoundError) as e:
        raise PluginError(f"glossary: {e}") from e
    import jieba

    for part in _state["glossary"].jieba_parts:
        jieba.add_word(part)
    return config


def _nav_titles(items, out: dict) -> dict:
    """{docs path: title} from the config's nav (a list of {title: path or [children]})."""
    for item in items or []:
        if isinstance(item, dict):
            for title, target in item.items():
                if isinstance(target, str):
                    out[target] = title
                else:
                    _nav_titles(target, out)
    return out


def on_page_markdown(markdown, page, config, files):
    if DIRECTIVE not in markdown:
        return markdown
    titles = _nav_titles(config.nav, {})
    # Only pages in this build: an "explained on" link to a page that has not landed yet is left out.
    pages = {f.src_uri: titles.get(f.src_uri, "") for f in files.documentation_pages()}
    return markdown.replace(DIRECTIVE, gl.render_markdown(_state["glossary"], _lang(config), pages))


def on_page_content(html, page, config, files):
    target = files.get_file_from_path(gl.GLOSSARY_PAGE)
    # Only prose pages: notebooks carry code output, and the glossary links its own terms explicitly.
    if target is None or page.file is target or not page.file.src_uri.endswith(".md"):
        return html
    base = page.url if page.url.endswith("/") or not page.url else posixpath.dirname(page.url)
    href = posixpath.relpath(target.url or ".", base or ".")
    if target.url.endswith("/") and not href.endswith("/"):
        href += "/"
    new, _ = gl.link_terms(html, _state["glossary"], _lang(config), href)
    return new
