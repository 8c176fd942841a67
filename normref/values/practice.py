"""Values of the practice page: the drill's schedule and the size of the card bank (normref.data.cards)."""

from __future__ import annotations

from . import count, register
from ..labels import labels

t = labels(__name__)  # the Chinese is in normref/labels.yml


def _intervals(lang: str) -> str:
    from ..data.cards import INTERVALS

    days = [str(d) for d in INTERVALS]
    return t(lang, "{{first}} and {{last}}", first=t(lang, ", ").join(days[:-1]), last=days[-1])


def _n_cards() -> str:
    from ..data.cards import default

    return count(len(default().cards))


def _new_per_day() -> str:
    from ..data.cards import NEW_PER_DAY

    return str(NEW_PER_DAY)


register({
    "practice.intervals": _intervals,
    "practice.new_per_day": _new_per_day,
    "practice.n_cards": _n_cards,
})
