"""Notebook pages (mkdocs-jupyter): the .ipynb download, and the page scrubbed of what we cannot ship.

A notebook's source is a jupytext percent-format .py file under notebooks/;
its page is notebooks/NAME/, rendered by mkdocs-jupyter from the notebook
executed ahead (normsite.nbexec), and the build puts NAME.ipynb (unexecuted,
byte-stable) and NAME.py (the source, the wheel's address filled in) beside it.
"""

from __future__ import annotations

import html
import json
import posixpath
import re
from pathlib import Path

from normref import cache

from . import SiteError

__all__ = ["is_notebook", "ipynb_uri", "ipynb_text", "language", "for_reader", "notebook_imports", "notebook_closure", "code_closure", "downloads", "scrub_page",
           "stable_cell_ids", "drop_css_list"]


def is_notebook(src_uri: str) -> bool:
    return src_uri.startswith("notebooks/") and src_uri.endswith((".py", ".ipynb"))


def ipynb_uri(src_uri: str) -> str:
    """notebooks/NAME.py (page at notebooks/NAME/) -> notebooks/NAME/NAME.ipynb."""
    stem = posixpath.splitext(src_uri)[0]
    return f"{stem}/{posixpath.basename(stem)}.ipynb"


def language(path: str | Path) -> str:
    """The language of the notebook at ``path`` (docs/<lang>/notebooks/NAME.py): "zh", "en", or "" for a
    notebook outside a language's notebooks folder."""
    from . import LANGS

    p = Path(path).resolve()
    lang = p.parent.parent.name
    return lang if p.parent.name == "notebooks" and lang in LANGS else ""


def for_reader(nb, path: str | Path):
    """A notebook read from ``path``, as its reader sees it: a Chinese notebook's Markdown cells with their
    soft line breaks joined (normsite.cjk), as the build joins the Chinese pages'; in place, returned."""
    from . import cjk

    return cjk.join_notebook(nb) if language(path) == "zh" else nb


def ipynb_text(path: str | Path, wheel_url: str) -> str:
    """The jupytext notebook at ``path`` as .ipynb text: unexecuted, byte-stable, installing from ``wheel_url``.

    This one function makes both the .ipynb the site offers for download and
    the committed copy that Colab opens (normsite.colab), so the two agree
    whenever they name the same site. The source names the wheel by a token
    (normsite.install.WHEEL_TOKEN); the site's address goes in its place.
    nbformat gives each new cell a random id; number them instead, or every
    build would differ. The jupytext pairing header is dropped (the download is
    a plain notebook) and the wheel's address is recorded in the metadata
    (``normref.wheel_url``), so a committed copy can be checked for staleness.
    A Chinese notebook's Markdown cells have their soft line breaks joined (:func:`for_reader`)."""
    import jupytext

    from .install import fill_wheel_url

    text = fill_wheel_url(Path(path).read_text(encoding="utf-8"), wheel_url)
    nb = for_reader(jupytext.reads(text, fmt="py:percent"), path)
    nb.metadata.pop("jupytext", None)
    nb.metadata["normref"] = {"wheel_url": wheel_url}
    for i, cell in enumerate(nb.cells):
        cell["id"] = f"cell-{i}"
        if cell.cell_type == "code":
            cell["outputs"], cell["execution_count"] = [], None
    return jupytext.writes(nb, fmt="ipynb")


def _code(path: Path) -> str:
    """A notebook's Python: its code cells (a jupytext .py file read as the notebook it becomes),
    each magic or shell line replaced by ``pass`` at its indentation. A commented magic is not
    enough: an install cell's ``%pip`` is the body of an ``if``, which a comment leaves empty."""
    from . import stepcache

    text = Path(path).read_text(encoding="utf-8")

    def compute() -> str:
        if Path(path).suffix == ".py":
            import jupytext

            cells = jupytext.reads(text, fmt="py:percent").cells
        else:
            cells = json.loads(text)["cells"]
        src = ["".join(c["source"]) if isinstance(c["source"], list) else c["source"] for c in cells
               if c["cell_type"] == "code"]
        return "\n".join(line[: len(line) - len(line.lstrip())] + "pass" if line.lstrip().startswith(("%", "!"))
                         else line for block in src for line in block.splitlines())

    # Parsing a notebook with jupytext is the slow part of a warm build's notebook checks: cached by its text.
    return stepcache.cached("nbcode", cache.relative(path), {"format": Path(path).suffix, "text": text}, compute,
                            modules=("normsite.notebooks",), libs=("jupytext",))


def notebook_imports(path: str | Path) -> tuple[str, ...]:
    """The normref modules the notebook at ``path`` imports itself (a cache step's ``code``: normsite.nbexec)."""
    try:
        return cache.script_imports(_code(Path(path)), str(path))
    except SyntaxError as e:
        raise SiteError(f"notebook {path}: not valid Python: {e}") from e


def notebook_closure(path: str | Path) -> tuple[str, ...]:
    """The normref modules the notebook at ``path`` imports (their import closure): what its
    executed output depends on besides its own text (normsite.nbexec keys it so)."""
    try:
        return cache.script_closure(_code(Path(path)), str(path))
    except SyntaxError as e:
        raise SiteError(f"notebook {path}: not valid Python: {e}") from e


def code_closure(folder: str | Path) -> tuple[str, ...]:
    """The normref modules the notebooks under ``folder`` import (the union of notebook_closure)."""
    found: set[str] = set()
    for nb in sorted(Path(folder).rglob("*")):
        if nb.suffix in (".py", ".ipynb") and nb.is_file():
            found.update(notebook_closure(nb))
    return tuple(sorted(found))


def downloads(src_uri: str) -> dict | None:
    """For overrides/main.html: the notebook's downloads, relative to its page (None for other pages)."""
    if not is_notebook(src_uri):
        return None
    src = posixpath.basename(src_uri)
    ipynb = src if src.endswith(".ipynb") else posixpath.basename(ipynb_uri(src_uri))
    return {"ipynb": ipynb, "source": src}


# nbconvert's template loads MathJax from a URL (empty here: a request for the
# page itself) and carries a mermaid loader that imports from a CDN. Our
# notebooks use neither, and the site must make no request to another host.
_MATHJAX = re.compile(r"<!-- Load mathjax -->.*?<!-- End of mathjax configuration -->", re.S)
_MERMAID = re.compile(r'<script type="module">(?:(?!</script>).)*?mermaid(?:(?!</script>).)*</script>', re.S)
# nbconvert writes each cell's id into the page; jupytext's cells get random ones.
_CELL_ID = re.compile(r"cell-id=([A-Za-z0-9_-]+)")


# mkdocs-jupyter (0.26) appends to the page of an .ipynb notebook (never of a .py one) a second
# <style> block holding the Python repr of a list of the CSS its template has already inlined:
# "['pre { line-height: 125%; }\\n…']". It is no stylesheet, and a page executed ahead (normsite.nbexec)
# must read as one rendered from its .py source did; it is always the content's last element.
_CSS_LIST = re.compile(r"\n[ \t]*<style>\s*\[(?:'.*'|\".*\")?\]\s*</style>\s*\Z", re.S)


def drop_css_list(content: str) -> str:
    """A notebook page's content without the stray list-of-CSS <style> that mkdocs-jupyter appends to an .ipynb's."""
    return _CSS_LIST.sub("", content)


def stable_cell_ids(output: str) -> str:
    ids: dict[str, str] = {}
    return _CELL_ID.sub(lambda m: "cell-id=" + ids.setdefault(m.group(1), f"cell-{len(ids)}"), output)


def scrub_page(output: str, src_uri: str, lang: str = "") -> str:
    """A rendered page, made shippable: for notebooks, no MathJax/mermaid loaders, stable cell ids
    and focusable code cells; for any page with nbconvert's inline CSS, that CSS pruned."""
    if is_notebook(src_uri):
        output = stable_cell_ids(_MERMAID.sub("", _MATHJAX.sub("", output)))
        # A code cell that scrolls sideways must take keyboard focus (WCAG 2.1.1),
        # as Material's own code blocks do.
        output = output.replace('<div class="highlight-ipynb ', '<div tabindex="0" class="highlight-ipynb ')
        if "mathjax" in output.lower() or "cdnjs" in output:
            raise SiteError(f"{src_uri}: could not strip nbconvert's MathJax/mermaid loaders; "
                            "the notebook template changed")
    if 'class="jupyter-wrapper"' in output:
        from . import csstrim  # tinycss2: only the build needs it (normsite.colab must not)

        output = csstrim.trim_html(output, f"{lang}:{src_uri}" if lang else src_uri)
    return output


_NB_MARKDOWN = re.compile(r'<div class="[^"]*\bjp-RenderedMarkdown\b[^"]*"[^>]*>(.*?)</div>', re.S)
_FIRST_P = re.compile(r"<h1\b.*?</h1>\s*<p>(.*?)</p>", re.S)


def description(html_text: str, limit: int = 160) -> str | None:
    """A notebook page's description for search engines and link previews: the first sentence of the
    paragraph under its H1 (plain text, formulas written out), or None when there is none."""
    from . import mathtex

    for cell in _NB_MARKDOWN.finditer(html_text):
        m = _FIRST_P.search(cell.group(1))
        if not m:
            continue
        text = re.sub(r"<[^>]+>", "", mathtex.for_search(m.group(1)))
        text = re.sub(r"\s+", " ", html.unescape(text)).strip()
        text = re.sub(r"(?<=[\u3000-\u9fff\uff00-\uffef]) (?=[\u3000-\u9fff\uff00-\uffef])", "", text)  # a joined zh line
        sentence = re.match(r".+?(?:[。！？]|[.!?](?=\s+[A-Z“\"]|$))", text)  # not "(Eq. 11)"
        text = sentence.group(0) if sentence else text
        if len(text) > limit:
            cut = max(text.rfind(c, 0, limit) for c in "；;，,")
            text = (text[:cut] if cut > limit // 2 else text[:limit]).rstrip() + "…"
        return text or None
    return None
