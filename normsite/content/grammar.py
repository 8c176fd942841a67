"""The one directive grammar: ``[[KIND]]`` or ``[[KIND: NAME]]``, as the pages and the site's content write them.

Every reader of directives builds its pattern here: the site layer's table of what the prepare pass
expands (``normsite.directives.KINDS``), the install lines (``normsite.install``), the snippet install
blocks (``normsite.takehome``), the ledger's and the card bank's value checks (``normsite.ledger``,
``normsite.content.cards``). So the syntax is written once, and a directive one reader sees, every reader sees.
Nothing here knows what a kind means.
"""

from __future__ import annotations

import functools
import re

__all__ = ["NAME", "pattern", "names"]

# A directive's name: anything up to the closing brackets but whitespace (a value, a figure, a snippet file).
NAME = r"[^\]\s]+"


@functools.lru_cache(maxsize=None)
def pattern(*kinds: str, named: bool | None = True, at_line_start: bool = False) -> re.Pattern[str]:
    """The compiled pattern of the directives of ``kinds``: group ``kind`` (1) and group ``name`` (2).

    ``named``: True, a name is required (``[[value: x]]``); None, it may be left out (the name is then None);
    False, there is none (``[[quiz]]``). ``at_line_start``: only a directive that starts its line, after
    spaces or tabs (group ``indent``; multiline)."""
    if not kinds or not all(isinstance(k, str) and re.fullmatch(r"[a-z][a-z-]*", k) for k in kinds):
        raise ValueError(f"kinds must be one or more lowercase kind names, got {kinds!r}")
    if named not in (True, None, False):
        raise TypeError(f"named must be True, None or False, got {named!r}")
    alternatives = "|".join(re.escape(k) for k in sorted(set(kinds), key=lambda k: (-len(k), k)))  # snippet-code first
    name = {True: rf":\s*(?P<name>{NAME})", None: rf"(?::\s*(?P<name>{NAME}))?", False: ""}[named]
    body = rf"\[\[(?P<kind>{alternatives}){name}\s*\]\]"
    if at_line_start:
        return re.compile(rf"^(?P<indent>[ \t]*){body}", re.M)
    return re.compile(body)


def names(text: str, kind: str) -> list[str]:
    """The names of the ``[[KIND: NAME]]`` directives in ``text``, in order (repeats kept)."""
    return [m.group("name") for m in pattern(kind).finditer(text)]
