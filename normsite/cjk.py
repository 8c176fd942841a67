"""Chinese prose in Markdown: a line break between two Chinese characters is not a space.

Markdown turns a soft line break into a newline in the HTML, and browsers show
a newline as a space, which is right between English words and wrong between
Chinese characters (“归一\n化” reads 归一 化). Writers wrap long lines anyway, so
the build joins such lines (Python-Markdown has no option for it, and the CJK
extensions we know of are unmaintained). Fenced code is left alone; a line that
starts with anything but a Chinese character or full-width punctuation (a list
marker, a table row, a directive, HTML) is never joined to the one before it.
"""

from __future__ import annotations

import re

__all__ = ["join_soft_breaks"]

# Han ideographs, CJK punctuation and full-width forms.
_CJK = "\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff01-\uff60"
_ENDS = re.compile(f"[{_CJK}]$")
_STARTS = re.compile(f"^[ \t]*[{_CJK}]")
_FENCE = re.compile(r"^[ \t]*(```|~~~)")


def join_soft_breaks(markdown: str) -> str:
    out: list[str] = []
    fence = None
    for line in markdown.split("\n"):
        m = _FENCE.match(line)
        if fence is None and m:
            fence = m.group(1)
        elif fence is not None and m and m.group(1) == fence:
            fence = None
            out.append(line)
            continue
        if fence is None and out and _ENDS.search(out[-1]) and _STARTS.match(line) and not _FENCE.match(out[-1]):
            out[-1] += line.lstrip(" \t")
        else:
            out.append(line)
    return "\n".join(out)
