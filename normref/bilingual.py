"""Text in both languages, as the project's data files hold it (glossary, quiz, claim ledger).

One validator for the mapping ``{zh: …, en: …}`` that every bilingual field is:
both languages present and non-empty, no third language. It collects problems
into ``errors`` (each naming ``where`` and the field) instead of raising, so a
data file's loader can report every bad entry at once.
"""

from __future__ import annotations

LANGS = ("zh", "en")

__all__ = ["LANGS", "bilingual_text"]


def bilingual_text(errors: list[str], where: str, field: str, value, *, keep_paragraphs: bool = False,
                   one_paragraph: bool = False) -> dict[str, str]:
    """``{zh, en}`` with whitespace runs joined to one space (or, with ``keep_paragraphs``, only
    stripped, for Markdown that has paragraphs); ``one_paragraph`` reports a blank line in the text."""
    if not isinstance(value, dict):
        errors.append(f"{where}: {field!r} must be a mapping with 'zh' and 'en' text, got {type(value).__name__}")
        return {lang: "" for lang in LANGS}
    extra = sorted(set(value) - set(LANGS))
    if extra:
        errors.append(f"{where}: {field!r} has unknown language(s) {extra}; expected only 'zh' and 'en'")
    out = {}
    for lang in LANGS:
        text = value.get(lang)
        if not isinstance(text, str) or not text.strip():
            errors.append(f"{where}: {field!r} has no {lang!r} text (both languages are required)")
            text = ""
        if one_paragraph and "\n\n" in text.strip():
            errors.append(f"{where}: {field!r} in {lang!r} must be one paragraph")
        out[lang] = text.strip() if keep_paragraphs else " ".join(text.split())
    return out
