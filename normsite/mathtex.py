"""Formulas typeset at build time with KaTeX (PyKaTeX), so pages ship no math JavaScript."""

from __future__ import annotations

import html
import re

from . import SiteError

# What pymdownx.arithmatex (generic mode) leaves in the HTML.
_MATH = re.compile(
    r'<(?P<tag>span|div) class="arithmatex">\s*(?:\\\((?P<i>.*?)\\\)|\\\[(?P<d>.*?)\\\])\s*</(?P=tag)>', re.S
)


def typeset(html_text: str, where: str) -> tuple[str, int]:
    """Replace every arithmatex formula with KaTeX's HTML; (new html, formulas typeset).

    A formula KaTeX cannot parse raises SiteError naming ``where`` and the TeX."""
    import pykatex

    def render(m):
        display = m.group("d") is not None
        tex = html.unescape(m.group("d") if display else m.group("i"))
        try:
            out = pykatex.renderToString(tex, displayMode=display, throwOnError=True)
        except Exception as e:  # pykatex.ParseError and friends
            raise SiteError(f"{where}: KaTeX cannot typeset {tex!r}: {e}") from e
        return f'<div class="nr-math">{out}</div>' if display else out

    return _MATH.subn(render, html_text)
