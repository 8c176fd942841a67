"""Values of the practice page: the drill's schedule and the size of the card bank (normsite.content.cards).

Registered into ``normref.values`` (``import normsite`` plugs this module in), so pages write
``[[value: practice.n_cards]]`` as they write normref's own values.
"""

from __future__ import annotations

from normref.values import count, register

# The list's separators, per language (the card bank's words, not normref's labels.yml: this is site content).
_SEP = {"zh": ("、", "、"), "en": (", ", " and ")}


def _intervals(lang: str) -> str:
    from .cards import INTERVALS

    days = [str(d) for d in INTERVALS]
    sep, last = _SEP[lang]
    return sep.join(days[:-1]) + last + days[-1]


def _n_cards() -> str:
    from .cards import default

    return count(len(default().cards))


def _new_per_day() -> str:
    from .cards import NEW_PER_DAY

    return str(NEW_PER_DAY)


register({
    "practice.intervals": _intervals,
    "practice.new_per_day": _new_per_day,
    "practice.n_cards": _n_cards,
})
