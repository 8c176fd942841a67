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
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from pathlib import Path

from normref import data, figures, values

from . import SiteError, snippets
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


def table_md(table: values.Table) -> str:
    """A normref table as a Markdown table: labels, alignment, code cells in backticks."""

    def cell(text: str, code: bool) -> str:
        text = text.replace("|", "\\|")
        return f"`{text}`" if code and text else text

    lines = ["| " + " | ".join(c.label for c in table.columns) + " |",
             "|" + "".join("---:|" if c.align == "right" else "---|" for c in table.columns)]
    lines += ["| " + " | ".join(cell(v, c.code) for v, c in zip(row, table.columns)) + " |" for row in table.rows]
    return "\n".join(lines)


def expand(markdown: str, lang: str, src_uri: str, *, generated: bool = True,
           on_snippet: Callable[[bool], None] | None = None) -> str:
    """Expand every directive of a page. ``on_snippet(was_cached)`` is told about each snippet run."""

    def one(m):
        kind, name = m.group(1), m.group(2)
        try:
            if kind == "figure":
                return figure_md(name, lang, src_uri, generated)
            if kind == "snippet":
                out, hit = snippets.run(name)
                if on_snippet:
                    on_snippet(hit)
                return snippets.code_block(name) + "\n\n" + snippets.output_block(out, lang)
            if kind == "snippet-code":
                return snippets.code_block(name)
            if kind == "data":
                # "</" cannot occur inside a script element; escape it in the JSON.
                payload = data.to_json(data.get(name, lang)).replace("</", "<\\/")
                return f'<script type="application/json" id="nr-data-{name}">{payload}</script>'
            if kind == "table":
                return table_md(values.table(name, lang))
            return values.get(name, lang)
        except (KeyError, ValueError, FileNotFoundError, SiteError) as e:
            raise SiteError(f"{src_uri}: bad [[{kind}: {name}]]: {e}") from e

    return DIRECTIVE.sub(one, markdown)
