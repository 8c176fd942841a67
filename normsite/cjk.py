"""Chinese prose in Markdown: a line break between two Chinese characters is not a space.

Markdown turns a soft line break into a newline in the HTML, and browsers show
a newline as a space, which is right between English words and wrong between
Chinese characters (“归一\n化” reads 归一 化). Writers wrap long lines anyway, so
the build joins such lines (Python-Markdown has no option for it, and the CJK
extensions we know of are unmaintained). Two lines are joined, without a space, when

- the first ends with a Chinese character or Chinese punctuation and the next
  starts with one (curly quotes “”, the dash — and the ellipsis … count too, next
  to a Chinese character: no space goes between them);
- the first ends with full-width punctuation (，。：；（）) and the next starts with
  other text (Latin, a digit, inline math, code, a link, a ``[[value: …]]``):
  ”，\nRMSNorm“ would read ”， RMSNorm“. A Chinese character followed by Latin
  text on the next line is left alone: it renders as a space, the space the
  site's style puts between Chinese and Latin;

both inside a blockquote (``> `` on each line, the same depth) and out. Emphasis,
a link's text and inline code at a line's edge count by the characters they show.

Fenced code and display math (``$$`` on a line of its own) are left alone; a line
that starts a block (a list marker, a table row, a heading, an admonition, HTML,
a block directive such as ``[[figure: …]]``) is never joined to the one before
it, and a heading or a table row never takes the next line. :func:`join_notebook`
applies the same to a notebook's Markdown cells.
"""

from __future__ import annotations

import re

from .content.grammar import pattern

__all__ = ["join_soft_breaks", "join_notebook", "CJK", "PUNCT", "soft_breaks"]

# Han ideographs, CJK punctuation and full-width forms.
_CJK = "\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff01-\uff60"
# What counts as Chinese next to a Chinese character at a line break: the above, curly quotes, the em dash
# and the ellipsis.
CJK = _CJK + "\u201c\u201d\u2014\u2026"
# Chinese (full-width) punctuation: after it, no space before anything.
PUNCT = "\u3000-\u303f\uff01-\uff0f\uff1a-\uff20\uff3b-\uff40\uff5b-\uff60"

_IS_HAN = re.compile(f"[{_CJK}]")
_IS_CJK = re.compile(f"[{CJK}]")
_IS_PUNCT = re.compile(f"[{PUNCT}]")
_QUOTE = re.compile(r"^[ \t]*(?:>[ \t]?)+")
_FENCE = re.compile(r"^[ \t]*(```|~~~)")
_MATH = re.compile(r"^[ \t]*\$\$[ \t]*$")
# A line that starts a block of its own (after its indentation and blockquote markers).
_BLOCK = re.compile(r"""^(?:$|[-*+][ \t]|\d+[.)]([ \t]|$)|\#|\||<|!!!|\?\?\?|:::|===|```|~~~|\$\$|\\\[|
                        \[\^|\[[^\]]*\]:|\*\[|\{[:#.]|[-*_]{3,}[ \t]*$|:[ \t])""", re.X)
# A line that never continues into the next: a heading, a table row, HTML, an admonition's or a tab's header.
_HEAD = re.compile(r"^(?:\#|\||<|!!!|\?\?\?|===|:::)")
_VALUE = pattern("value")  # the one directive that stands in the prose (a number); any other starts a block
_LEAD = re.compile(r"^(?:\*\*|__|\*(?!\s)|\[(?!\[)|`+)+")  # emphasis, a link's "[", code: what shows is after
_TRAIL = re.compile(r"(?:\*\*|__|\*|\]\([^)\s]*\)|\]|`+)+$")  # ... and before


def _split(line: str) -> tuple[str, int, str]:
    """(blockquote prefix, its depth, the rest) of a line."""
    m = _QUOTE.match(line)
    prefix = m.group(0) if m else ""
    return prefix, prefix.count(">"), line[len(prefix):]


def _directive_line(text: str) -> bool:
    """Does ``text`` start with a directive that makes a block of its own ([[figure: …]], not [[value: …]])?"""
    return text.startswith("[[") and not _VALUE.match(text)


def _joins(prev: str, line: str) -> str | None:
    """The text of ``line`` to append to ``prev`` (the line before it) if the break between them is joined."""
    _, d_prev, before = _split(prev)
    prefix, d_next, after = _split(line)
    if d_next not in (0, d_prev):
        return None
    before, after = before.strip(" \t"), after.lstrip(" \t")
    if not before or not after or _HEAD.match(before) or _BLOCK.match(after):
        return None
    if _directive_line(before) or _directive_line(after):
        return None
    last = _TRAIL.sub("", before)[-1:] or before[-1]
    first = _LEAD.sub("", after)[:1] or after[0]
    if prev.endswith((" ", "\t", "\\")):  # a hard line break
        return None
    if _IS_PUNCT.match(last) or (_IS_CJK.match(last) and _IS_CJK.match(first)
                                 and (_IS_HAN.match(last) or _IS_HAN.match(first))):
        return after
    return None


def join_soft_breaks(markdown: str) -> str:
    """``markdown`` (Chinese) with its soft line breaks between Chinese text joined (see the module's docstring)."""
    if not isinstance(markdown, str):
        raise TypeError(f"markdown must be a str, got {type(markdown).__name__}")
    out: list[str] = []
    fence = None  # the open fence ("```", "~~~" or "$$"), if any
    for line in markdown.split("\n"):
        _, _, body = _split(line)
        m = _FENCE.match(body)
        mark = m.group(1) if m else ("$$" if _MATH.match(body) else None)
        if fence is not None:
            if mark == fence:
                fence = None
            out.append(line)
            continue
        if mark is not None:
            fence = mark
            out.append(line)
            continue
        if out and (add := _joins(out[-1], line)) is not None:
            out[-1] += add
        else:
            out.append(line)
    return "\n".join(out)


def join_notebook(nb):
    """A notebook (nbformat's, read by jupytext) with :func:`join_soft_breaks` applied to its Markdown cells,
    in place; returns it. Code cells are left alone."""
    for cell in nb.cells:
        if cell.get("cell_type") == "markdown":
            src = cell["source"]
            text = "".join(src) if isinstance(src, list) else src
            cell["source"] = join_soft_breaks(text)
    return nb


_NL = "[ \\t]*\\n[ \\t]*"
_SOFT = re.compile(f"[{_CJK}]{_NL}[{CJK}]|[{CJK}]{_NL}[{_CJK}]|[{PUNCT}]{_NL}[A-Za-z0-9\\ufffc]")


def soft_breaks(text: str) -> list[re.Match]:
    """Where ``text`` (what a reader sees, newlines kept) has a line break that shows as a space in Chinese:
    between two Chinese characters, or after Chinese punctuation and before Latin text, a digit or
    U+FFFC (an inline object such as a formula)."""
    return list(_SOFT.finditer(text))
