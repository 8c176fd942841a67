"""Drop the CSS rules a page cannot use: a small PurgeCSS for the notebook pages.

mkdocs-jupyter (through nbconvert's ``lab`` template) inlines all of
JupyterLab's stylesheet, about 600 KB, into every notebook page; a notebook of
a few cells uses a few percent of it. It has no option to leave it out, and
leaving all of it out would lose the cell layout, so we prune: a rule is kept
when every class, id and attribute its selector names occurs in the page's
HTML; custom properties (``--jp-…``) are kept when a kept declaration uses
them, directly or through another property. ``@keyframes`` survive when a kept
rule names them; other at-rules are pruned inside or kept as they are.

The pruning is conservative: tag names and pseudo-classes never make a rule
go, so a selector such as ``.jp-Cell:hover`` stays when ``jp-Cell`` is used.
Classes added at run time by a script would be missed; Jupyter's notebook
output here is static HTML (no widgets), so there are none.

Why our own code: PurgeCSS and its kin are Node tools (no Node at build time
here), and the Python ports we know of are unmaintained; tinycss2 (already
installed with nbconvert) does the parsing, and this is the policy on top.
"""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path

import tinycss2

from normref import cache

__all__ = ["used_tokens", "prune_css", "trim_html"]

_STYLE = re.compile(r"(<style[^>]*>)(.*?)(</style>)", re.S | re.I)
_ATTR = re.compile(r"""\s([a-zA-Z_:][-a-zA-Z0-9_:.]*)\s*(?:=\s*("[^"]*"|'[^']*'|[^\s>]+))?""")
_TAG = re.compile(r"<([a-zA-Z][a-zA-Z0-9-]*)((?:\s[^>]*)?)>", re.S)
_VAR_USE = re.compile(r"var\(\s*(--[-\w]+)")
_SEL_CLASS = re.compile(r"\.(-?[_a-zA-Z][-\w]*)")
_SEL_ID = re.compile(r"#(-?[_a-zA-Z][-\w]*)")
_SEL_ATTR = re.compile(r"\[\s*([-\w:]+)")


def used_tokens(html: str) -> tuple[frozenset, frozenset, frozenset]:
    """(classes, ids, attribute names) used by the elements of ``html`` (style contents excluded)."""
    body = _STYLE.sub("", html)
    classes, ids, attrs = set(), set(), set()
    for m in _TAG.finditer(body):
        for am in _ATTR.finditer(m.group(2) or ""):
            name = am.group(1).lower()
            attrs.add(name)
            val = (am.group(2) or "").strip("\"'")
            if name == "class":
                classes.update(val.split())
            elif name == "id":
                ids.add(val)
    return frozenset(classes), frozenset(ids), frozenset(attrs)


def _selector_ok(sel: str, classes, ids, attrs) -> bool:
    # Classes inside :not(...) never need to be present for the selector to match.
    sel = re.sub(r":not\([^)]*\)", "", sel)
    return (all(c in classes for c in _SEL_CLASS.findall(sel)) and all(i in ids for i in _SEL_ID.findall(sel))
            and all(a.lower() in attrs for a in _SEL_ATTR.findall(sel)))


def _split_selectors(prelude: str) -> list[str]:
    out, depth, cur = [], 0, ""
    for ch in prelude:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    out.append(cur.strip())
    return [s for s in out if s]


@functools.lru_cache(maxsize=8)
def _sheet(css: str) -> tuple:
    """A stylesheet parsed once per process: the notebook pages of a build inline the same JupyterLab sheet, and
    parsing it (tinycss2) and splitting its selectors was most of each page's pruning."""
    return _entries(tinycss2.parse_stylesheet(css, skip_comments=True, skip_whitespace=True))


def _entries(rules) -> tuple:
    """(kind, head, body) per rule: ("rule", its selectors, its declarations), ("block", "@media …", entries),
    ("keyframes", name, rule) or ("raw", None, rule) for an at-rule kept as it is."""
    out = []
    for r in rules:
        if r.type == "qualified-rule":
            decls = [d for d in tinycss2.parse_declaration_list(r.content, skip_comments=True, skip_whitespace=True)
                     if d.type == "declaration"]
            out.append(("rule", tuple(_split_selectors(tinycss2.serialize(r.prelude))), decls))
        elif r.type == "at-rule":
            kw = r.lower_at_keyword
            if kw in ("media", "supports", "container", "layer") and r.content is not None:
                inner = _entries(tinycss2.parse_rule_list(r.content, skip_comments=True, skip_whitespace=True))
                out.append(("block", f"@{r.at_keyword} {tinycss2.serialize(r.prelude).strip()}", inner))
            elif kw.endswith("keyframes"):
                out.append(("keyframes", tinycss2.serialize(r.prelude).strip(), r))
            else:  # @font-face, @page, @import, @charset ...: keep verbatim
                out.append(("raw", None, r))
    return tuple(out)


def _prune_rules(entries, tokens) -> list:
    """[(prelude, declarations or nested list, raw)] after selector pruning."""
    kept = []
    for kind, head, body in entries:
        if kind == "rule":
            sels = [s for s in head if _selector_ok(s, *tokens)]
            if sels:
                kept.append(("rule", ", ".join(sels), body))
        elif kind == "block":
            inner = _prune_rules(body, tokens)
            if inner:
                kept.append(("block", head, inner))
        else:
            kept.append((kind, head, body))
    return kept


def _walk_decls(kept):
    for kind, _, body in kept:
        if kind == "rule":
            yield from body
        elif kind == "block":
            yield from _walk_decls(body)


def _serialize(kept, live_vars, live_frames) -> str:
    parts = []
    for kind, head, body in kept:
        if kind == "rule":
            decls = [d for d in body if not d.name.startswith("--") or d.name in live_vars]
            if decls:
                inner = ";".join(f"{d.name}:{tinycss2.serialize(d.value).strip()}{'!important' if d.important else ''}"
                                 for d in decls)
                parts.append(f"{head}{{{inner}}}")
        elif kind == "block":
            inner = _serialize(body, live_vars, live_frames)
            if inner:
                parts.append(f"{head}{{{inner}}}")
        elif kind == "keyframes":
            if head in live_frames:
                parts.append(tinycss2.serialize([body]))
        else:
            parts.append(tinycss2.serialize([body]))
    return "\n".join(parts)


def prune_css(sheets: list[str], tokens) -> list[str]:
    """Keep the rules of each stylesheet that can match an element with ``tokens`` = used_tokens(html).

    The sheets are pruned together: a variable defined in one and used in
    another stays.
    """
    kept = [_prune_rules(_sheet(css), tokens) for css in sheets]
    decls = [d for k in kept for d in _walk_decls(k)]
    defs: dict[str, list[str]] = {}
    for d in decls:
        if d.name.startswith("--"):
            defs.setdefault(d.name, []).extend(_VAR_USE.findall(tinycss2.serialize(d.value)))
    # Variables used by ordinary declarations, then everything they use, transitively.
    live = {v for d in decls if not d.name.startswith("--") for v in _VAR_USE.findall(tinycss2.serialize(d.value))}
    todo = list(live)
    while todo:
        for v in defs.get(todo.pop(), ()):
            if v not in live:
                live.add(v)
                todo.append(v)
    frames = {tok.value for d in decls if d.name in ("animation", "animation-name")
              for tok in d.value if tok.type == "ident"}
    return [_serialize(k, live, frames) for k in kept]


def trim_html(html: str, name: str = "page") -> str:
    """``html`` with its inline <style> sheets pruned to what its elements use (cached by content; ``name``:
    the page it is, which the re-run log names)."""
    blocks = list(_STYLE.finditer(html))
    if not blocks:
        return html
    tokens = used_tokens(html)
    sheets_in = [m.group(2) for m in blocks]
    s = cache.step_of("csstrim", name, code=("normsite.csstrim",), libs=("tinycss2",), suffix=".json",
                      inputs={"style sheets": "\0".join(sheets_in), "tokens": "\0".join(" ".join(sorted(t)) for t in tokens)})
    sheets = cache.step(s, lambda: prune_css(sheets_in, tokens), lambda v: json.dumps(v).encode("utf-8"), json.loads)[0]
    out, pos = [], 0
    for m, css in zip(blocks, sheets):
        out.append(html[pos:m.start()])
        if css.strip():  # an emptied sheet goes, tags and all
            out.append(m.group(1) + css + m.group(3))
        pos = m.end()
    out.append(html[pos:])
    return "".join(out)


if __name__ == "__main__":  # python -m normref.csstrim PAGE.html: sizes before and after
    import sys

    for p in sys.argv[1:]:
        src = Path(p).read_text(encoding="utf-8")
        out = trim_html(src, p)
        print(f"{p}: {len(src.encode()) / 1024:.0f} KiB -> {len(out.encode()) / 1024:.0f} KiB")
