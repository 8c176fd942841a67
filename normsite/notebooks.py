"""Notebook pages (mkdocs-jupyter): the .ipynb download, and the page scrubbed of what we cannot ship.

A notebook's source is a jupytext percent-format .py file under notebooks/;
its page is notebooks/NAME/, and the build puts NAME.ipynb (unexecuted,
byte-stable) beside the .py source that mkdocs-jupyter's include_source copies.
"""

from __future__ import annotations

import html
import json
import posixpath
import re
from pathlib import Path

from normref import cache

from . import SiteError

__all__ = ["is_notebook", "ipynb_uri", "ipynb_text", "code_closure", "execution_config", "downloads", "scrub_page",
           "stable_cell_ids"]


def is_notebook(src_uri: str) -> bool:
    return src_uri.startswith("notebooks/") and src_uri.endswith((".py", ".ipynb"))


def ipynb_uri(src_uri: str) -> str:
    """notebooks/NAME.py (page at notebooks/NAME/) -> notebooks/NAME/NAME.ipynb."""
    stem = posixpath.splitext(src_uri)[0]
    return f"{stem}/{posixpath.basename(stem)}.ipynb"


def ipynb_text(path: str | Path, wheel_url: str) -> str:
    """The jupytext notebook at ``path`` as .ipynb text: unexecuted, byte-stable, installing from ``wheel_url``.

    This one function makes both the .ipynb the site offers for download and
    the committed copy that Colab opens (normsite.colab), so the two agree
    whenever they name the same site. The source names the wheel by a token
    (normsite.install.WHEEL_TOKEN); the site's address goes in its place.
    nbformat gives each new cell a random id; number them instead, or every
    build would differ. The jupytext pairing header is dropped (the download is
    a plain notebook) and the wheel's address is recorded in the metadata
    (``normref.wheel_url``), so a committed copy can be checked for staleness."""
    import jupytext

    from .install import fill_wheel_url

    text = fill_wheel_url(Path(path).read_text(encoding="utf-8"), wheel_url)
    nb = jupytext.reads(text, fmt="py:percent")
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
    return stepcache.cached("nbcode", (Path(path).suffix, text), compute, libs=("jupytext",))


def code_closure(folder: str | Path) -> tuple[str, ...]:
    """The normref modules the notebooks under ``folder`` import (their import closure): what
    their executed output depends on besides their own text."""
    found: set[str] = set()
    for nb in sorted(Path(folder).rglob("*")):
        if nb.suffix in (".py", ".ipynb") and nb.is_file():
            try:
                found.update(cache.script_closure(_code(nb), str(nb)))
            except SyntaxError as e:
                raise SiteError(f"notebook {nb}: not valid Python: {e}") from e
    return tuple(sorted(found))


COALESCE = "nbconvert.preprocessors.CoalesceStreamsPreprocessor"
EXECUTE = "nbconvert.preprocessors.ExecutePreprocessor"


def execution_config(folder: str | Path) -> str:
    """Write the nbconvert configuration the build's notebook runs read; return its short hash.

    A cell's printed text reaches nbconvert in as many stream messages as the
    kernel happened to flush, and each becomes its own output block on the
    page: on a busy machine one print loop came out as two blocks, and two
    builds of one commit differed. nbconvert can merge consecutive stream
    outputs (CoalesceStreamsPreprocessor), but by default it runs that step
    before it executes the notebook; here it runs right after. mkdocs-jupyter
    loads the user's nbconvert configuration (NbConvertApp.load_config_file),
    so the caller points JUPYTER_CONFIG_PATH at ``folder``. The hash belongs in
    the notebook cache's key: pages rendered otherwise must not be reused."""
    import hashlib

    from nbconvert.exporters.exporter import Exporter

    order = [p for p in Exporter().default_preprocessors if p != COALESCE]
    if EXECUTE not in order:
        raise SiteError(f"nbconvert's default preprocessors no longer include {EXECUTE}; see normsite/notebooks.py")
    order.insert(order.index(EXECUTE) + 1, COALESCE)
    text = json.dumps({"Exporter": {"default_preprocessors": order},
                       "CoalesceStreamsPreprocessor": {"enabled": True}}, indent=1, sort_keys=True) + "\n"
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / "jupyter_nbconvert_config.json"
    if not target.is_file() or target.read_text(encoding="utf-8") != text:
        target.write_text(text, encoding="utf-8")
    return hashlib.sha256(text.encode()).hexdigest()[:12]


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


def stable_cell_ids(output: str) -> str:
    ids: dict[str, str] = {}
    return _CELL_ID.sub(lambda m: "cell-id=" + ids.setdefault(m.group(1), f"cell-{len(ids)}"), output)


def scrub_page(output: str, src_uri: str) -> str:
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

        output = csstrim.trim_html(output)
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
