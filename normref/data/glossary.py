"""Widget data of the glossary page: every term's id and the spellings a reader may type.

The glossary filter matches what is typed against these forms (both names and
every alias) and shows or hides the entry rendered under ``#id`` by
:func:`normsite.glossary.render_markdown`; the page order is the data's order.
"""

from __future__ import annotations

from . import dataset
from ..glossary import LANGS, default


@dataset("glossary")
def glossary(lang):
    """[{"id", "group", "forms": [zh name, en name, aliases...]}] in page order."""
    if lang not in LANGS:
        raise ValueError(f"lang must be one of {LANGS}, got {lang!r}")
    g = default()
    order = {grp.id: i for i, grp in enumerate(g.groups)}
    terms = sorted(g.terms, key=lambda t: order.get(t.group, len(order)))  # stable: the page's order
    return [{"id": t.id, "group": t.group, "forms": t.forms()} for t in terms]
