"""Notebook pages (mkdocs-jupyter): the .ipynb download, and the page scrubbed of what we cannot ship.

A notebook's source is a jupytext percent-format .py file under notebooks/;
its page is notebooks/NAME/, and the build puts NAME.ipynb (unexecuted,
byte-stable) beside the .py source that mkdocs-jupyter's include_source copies.
"""

from __future__ import annotations

import json
import posixpath
import re
from pathlib import Path

from normref import cache

from . import SiteError, csstrim

__all__ = ["is_notebook", "ipynb_uri", "ipynb_text", "code_closure", "downloads", "scrub_page", "stable_cell_ids"]


def is_notebook(src_uri: str) -> bool:
    return src_uri.startswith("notebooks/") and src_uri.endswith((".py", ".ipynb"))


def ipynb_uri(src_uri: str) -> str:
    """notebooks/NAME.py (page at notebooks/NAME/) -> notebooks/NAME/NAME.ipynb."""
    stem = posixpath.splitext(src_uri)[0]
    return f"{stem}/{posixpath.basename(stem)}.ipynb"


def ipynb_text(path: str) -> str:
    """The jupytext notebook at ``path`` as .ipynb text, unexecuted, byte-stable.

    nbformat gives each new cell a random id; number them instead, or every
    build would differ. The jupytext pairing header is dropped: the download is
    a plain notebook."""
    import jupytext

    nb = jupytext.read(path)
    nb.metadata.pop("jupytext", None)
    for i, cell in enumerate(nb.cells):
        cell["id"] = f"cell-{i}"
    return jupytext.writes(nb, fmt="ipynb")


def _code(path: Path) -> str:
    """A notebook's Python: a jupytext .py file is Python already (its magics are comments);
    of an .ipynb, the code cells without their magic and shell lines."""
    if path.suffix == ".py":
        return path.read_text(encoding="utf-8")
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    src = ["".join(c["source"]) if isinstance(c["source"], list) else c["source"] for c in cells
           if c["cell_type"] == "code"]
    return "\n".join(line for block in src for line in block.splitlines() if not line.lstrip().startswith(("%", "!")))


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
        output = csstrim.trim_html(output)
    return output
