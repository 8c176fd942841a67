"""The site's two languages, defined once: ``LANGS``.

Text in both languages (``{zh: …, en: …}``) in the data files is validated by
the site's schema, ``normsite.content.schema`` (``Text``, ``Paragraphs``, ``Sentence``); normref's own
YAML is read with plain checks.
"""

from __future__ import annotations

LANGS = ("zh", "en")

__all__ = ["LANGS"]
