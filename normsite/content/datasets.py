"""Widget data drawn from the site's content, registered as datasets of ``normref.data``.

``import normsite`` plugs this module into normref's dataset registry (``normref._registry.plug``), so a
page's ``[[data: NAME]]`` finds these as it finds normref's own; normref itself never imports it. The
loaders stay free of the registry: the MkDocs process reads the glossary without importing normref.data.
"""

from __future__ import annotations

from normref.bilingual import LANGS
from normref.data import dataset

from . import cards, quiz as quiz_data
from .glossary import default


@dataset("glossary")
def glossary(lang):
    """Widget data of the glossary page: every term's id and the spellings a reader may type,
    [{"id", "group", "forms": [zh name, en name, aliases...]}] in page order.

    The glossary filter matches what is typed against these forms (both names and every alias) and shows
    or hides the entry rendered under ``#id`` by :func:`normsite.glossary.render_markdown`."""
    if lang not in LANGS:
        raise ValueError(f"lang must be one of {LANGS}, got {lang!r}")
    g = default()
    order = {grp.id: i for i, grp in enumerate(g.groups)}
    terms = sorted(g.terms, key=lambda t: order.get(t.group, len(order)))  # stable: the page's order
    return [{"id": t.id, "group": t.group, "forms": t.forms()} for t in terms]


@dataset("quiz")
def quiz(lang):
    """The quiz widget's questions in one language (normsite.content.quiz.quiz)."""
    return quiz_data.quiz(lang)


@dataset("cards")
def cards_index(lang):
    """What the drill widget schedules (normsite.content.cards.cards_index)."""
    return cards.cards_index(lang)
