"""Links to the site's own assets, relative to the page, and the ones only some pages need.

Math and widget assets go only into the pages that use them, and into the body,
not the head: Material's instant navigation swaps the body only (and runs its
scripts again), and a head-only stylesheet would be missing after it.
"""

from __future__ import annotations

import posixpath
import re

__all__ = ["asset", "page_relative", "inject", "wrap_data"]


def asset(url: str, path: str) -> str:
    """assets/<path> relative to the page served at ``url``, so the site works under any sub-path."""
    return page_relative(url, "assets/" + path)


def page_relative(url: str, target: str) -> str:
    """``target`` (a path from the site root) relative to the page served at ``url``."""
    url = url or ""
    here = (url if url.endswith("/") else posixpath.dirname(url)).rstrip("/") or "."
    return posixpath.relpath(target, here)


def inject(html_text: str, url: str, has_math: bool) -> str:
    """The KaTeX stylesheet on math pages; the widget loader and CSS on widget pages."""
    if has_math:
        html_text = f'<link rel="stylesheet" href="{asset(url, "katex/katex.min.css")}">\n' + html_text
    if "data-nr-widget=" in html_text:
        html_text = (f'<link rel="stylesheet" href="{asset(url, "stylesheets/widgets.css")}">\n' + html_text
                     + f'\n<script src="{asset(url, "javascripts/widgets.js")}" defer></script>\n')
    return html_text


# Material's instant navigation re-creates every inline <script> of the new
# page with its text only, dropping `type` and `id`: a JSON data block would
# lose its id and be run as JavaScript (a SyntaxError). Scripts inside a
# <template> are inert and not in the document's script list, so the data is
# wrapped in one (after Markdown, which would treat <template> as inline HTML).
_DATA = re.compile(r'<script type="application/json" id="nr-data-([\w-]+)">(.*?)</script>', re.S)


def wrap_data(html_text: str) -> str:
    return _DATA.sub(lambda m: f'<template class="nr-data" id="nr-data-{m.group(1)}">'
                               f'<script type="application/json">{m.group(2)}</script></template>', html_text)
