"""The site's two languages, defined once: ``LANGS``.

Text in both languages (``{zh: …, en: …}``) in the data files is validated by
``normref.schema`` (``Text``, ``Paragraphs``, ``Sentence``).
"""

from __future__ import annotations

LANGS = ("zh", "en")

__all__ = ["LANGS"]
