"""Page directives: what a page asks normref for, expanded into Markdown.

  [[figure: NAME]]        the figure, light and dark variants, localized alt text and caption
  [[snippet: FILE]]       snippets/FILE verbatim (pymdownx.snippets), then what it prints
  [[snippet-code: FILE]]  the same without its output: for timings, which differ from
                          run to run (two builds must give the same bytes)
  [[value: NAME]]         a number from normref.values, in the page's language
  [[table: NAME]]         a table from normref.values (rows of data), as a Markdown table
  [[data: NAME]]          JSON from normref.data for a widget (see assets.wrap_data)

An unknown name, a missing or failing snippet raises SiteError naming the page
and the directive.

What a figure, value, table or data directive expands to is cached (normref's
cache, kind "directives"), keyed by the directive, the page's language (and,
for a figure, its folder), the code of the registry it reads (the import closure
of normref.values, normref.data or the figure's module), normref's data files
(figures.yml, glossary.yml, quiz.yml, the committed results) and the site
layer's code. A warm build then runs no experiment code at all, not even to unpickle a
result, and imports no torch.
"""

from __future__ import annotations

import functools
import hashlib
import html
import json
import re
from collections.abc import Callable
from pathlib import Path

from normref import cache, data, figures, values

from . import SiteError, snippets, stepcache
from .assets import page_relative

DIRECTIVE = re.compile(r"\[\[(figure|snippet-code|snippet|value|table|data):\s*([^\]\s]+)\s*\]\]")

__all__ = ["DIRECTIVE", "referenced", "figure_md", "table_md", "expand"]


def referenced(docs_dir: str | Path, kind: str) -> dict[str, list[str]]:
    """{name: [pages that use it]} for directives of ``kind`` in a docs folder."""
    found: dict[str, list[str]] = {}
    docs = Path(docs_dir)
    for md in sorted(docs.rglob("*.md")):
        for k, name in DIRECTIVE.findall(md.read_text(encoding="utf-8")):
            if k == kind:
                found.setdefault(name, []).append(str(md.relative_to(docs)))
    return found


def figure_md(name: str, lang: str, src_uri: str, generated: bool = True) -> str:
    """A <figure> with the light and dark SVG (Material shows the one matching the theme)."""
    spec = figures.get(name)
    caption = f"<figcaption>{html.escape(spec.caption[lang], quote=False)}</figcaption>"
    if not generated:
        return f'<figure class="nr-figure" id="fig-{name}">\n{caption}\n</figure>'
    alt = spec.alt[lang].replace("[", "(").replace("]", ")")
    here = src_uri.rsplit("/", 1)[0] + "/" if "/" in src_uri else ""
    imgs = "\n".join(
        f"![{alt}]({page_relative(here, f'figures/{name}-{theme}.svg')}#only-{theme}){{ loading=lazy }}"
        for theme in figures.THEMES
    )
    return f'<figure class="nr-figure" id="fig-{name}" markdown="span">\n{imgs}\n{caption}\n</figure>'


def data_script(name: str, lang: str) -> str:
    """A widget's data as a JSON script element ("</" cannot occur inside one: escaped)."""
    payload = data.to_json(data.get(name, lang)).replace("</", "<\\/")
    return f'<script type="application/json" id="nr-data-{name}">{payload}</script>'


def table_md(table: values.Table) -> str:
    """A normref table as a Markdown table: labels, alignment, code cells in backticks."""

    def cell(text: str, code: bool) -> str:
        text = text.replace("|", "\\|")
        return f"`{text}`" if code and text else text

    lines = ["| " + " | ".join(c.label for c in table.columns) + " |",
             "|" + "".join("---:|" if c.align == "right" else "---|" for c in table.columns)]
    lines += ["| " + " | ".join(cell(v, c.code) for v, c in zip(row, table.columns)) + " |" for row in table.rows]
    return "\n".join(lines)


@functools.lru_cache(maxsize=None)
def _data_files() -> str:
    """SHA-256 of normref's data files (YAML and JSON beside its modules): figure texts, the
    glossary, the quiz, committed results. Some are read at call time and so are not part of
    any module's import closure."""
    h = hashlib.sha256()
    root = Path(figures.__file__).resolve().parent.parent
    for f in sorted(p for p in root.rglob("*") if p.suffix in (".yml", ".yaml", ".json") and p.is_file()):
        h.update(str(f.relative_to(root)).encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()


def _file_digest(path: Path) -> str:
    """SHA-256 of one file, by path, size and mtime (the figure texts a build reads: figures.TEXTS, which
    need not be the package's own file)."""
    st = Path(path).stat()
    return _digest_of(str(Path(path).resolve()), st.st_size, st.st_mtime_ns)


@functools.lru_cache(maxsize=None)
def _digest_of(path: str, size: int, mtime_ns: int) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def _cached(kind: str, name: str, params: tuple, modules: tuple, compute: Callable[[], str]) -> str:
    key = cache.make_key("directive", f"{kind}:{name}", (params, _data_files(), stepcache.site_code()), modules)
    return cache.get_or_compute("directives", key, ".json", compute, lambda v: json.dumps(v).encode(), json.loads)[0]


def expand(markdown: str, lang: str, src_uri: str, *, generated: bool = True,
           on_snippet: Callable[[str, bool], None] | None = None) -> str:
    """Expand every directive of a page. ``on_snippet(name, was_cached)`` is told about each snippet run."""

    def one(m):
        kind, name = m.group(1), m.group(2)
        try:
            if kind == "figure":
                here = src_uri.rsplit("/", 1)[0] if "/" in src_uri else ""
                return _cached("figure", name, (lang, here, generated, _file_digest(figures.TEXTS)),
                               (figures.module_of(name),),
                               lambda: figure_md(name, lang, src_uri, generated))
            if kind == "snippet":
                out, hit = snippets.run(name)
                if on_snippet:
                    on_snippet(name, hit)
                return snippets.code_block(name) + "\n\n" + snippets.output_block(out, lang)
            if kind == "snippet-code":
                return snippets.code_block(name)
            if kind == "data":
                # "</" cannot occur inside a script element; escape it in the JSON.
                return _cached("data", name, (lang,), (data.__name__,), lambda: data_script(name, lang))
            if kind == "table":
                return _cached("table", name, (lang,), (values.__name__,), lambda: table_md(values.table(name, lang)))
            return _cached("value", name, (lang,), (values.__name__,), lambda: values.get(name, lang))
        except (KeyError, ValueError, FileNotFoundError, SiteError) as e:
            raise SiteError(f"{src_uri}: bad [[{kind}: {name}]]: {e}") from e

    def indented(m):  # a directive alone on an indented line (in a list or an admonition): keep its block there
        out = one(m)
        prefix = markdown[markdown.rfind("\n", 0, m.start()) + 1:m.start()]
        return out.replace("\n", "\n" + prefix) if prefix and not prefix.strip() else out

    return DIRECTIVE.sub(indented, markdown)
