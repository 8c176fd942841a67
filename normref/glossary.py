"""The glossary's data: load and validate ``normref/glossary.yml``.

One YAML file is the single source of the site's vocabulary. This module only
reads and checks it; the site layer (``normsite.glossary``) renders the glossary
pages, links terms on every page and lists the search checks.

``load`` validates everything up front and raises ``GlossaryError`` (a
ValueError) that names the offending term: a term without both languages, a
duplicate id or alias, a see-also target that is not a term. The MkDocs hook
turns that into a failed build. This module never imports MkDocs or the site layer.
"""

from __future__ import annotations

import functools
import html
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from .bilingual import bilingual_text

__all__ = ["DATA", "LANGS", "GLOSSARY_PAGE", "Glossary", "ProseException", "GlossaryError", "Term", "load", "parse", "default", "is_han"]

DATA = Path(__file__).with_name("glossary.yml")
from .bilingual import LANGS  # the one definition
GLOSSARY_PAGE = "glossary.md"  # docs path of the glossary page, the same in both languages

_ID = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
SHORT_MAX = 160  # characters; the short definition is a tooltip, not a paragraph


class GlossaryError(ValueError):
    """The glossary data is invalid; the message lists every problem, each naming its term."""


def is_han(s: str) -> bool:
    return bool(_HAN.search(s))


def _key(form: str) -> str:
    """How two spellings are compared for duplicates: case- and space-insensitive."""
    return " ".join(form.split()).casefold()


@dataclass(frozen=True)
class Group:
    id: str
    title: dict[str, str]


@dataclass(frozen=True)
class Term:
    id: str
    group: str
    name: dict[str, str]
    aliases: tuple[str, ...]
    short: dict[str, str]
    definition: dict[str, str]
    formula: str | None
    see_also: tuple[str, ...]
    page: str | None
    no_link: tuple[str, ...] = ()
    avoid: tuple[str, ...] = ()
    # The variants the site must not use instead of this term's names, per language
    # (the one-vocabulary rule; tests/test_vocabulary.py checks every page).
    banned: dict[str, tuple[str, ...]] = field(default_factory=lambda: {lang: () for lang in LANGS})

    def names(self) -> list[str]:
        """zh and en name, once if they are the same."""
        return list(dict.fromkeys([self.name["zh"], self.name["en"]]))

    def forms(self) -> list[str]:
        """Every spelling a reader may use: both names, then the aliases."""
        return self.names() + list(self.aliases)

    def link_forms(self) -> list[str]:
        """Spellings linked in running text: single characters (ε, γ, ℓ) and no_link are left alone."""
        return [f for f in self.forms() if len(f) >= 2 and f not in self.no_link]


@dataclass(frozen=True)
class ProseException:
    """Prose may write ``form`` (an alias of some term) on ``page``, for ``reason``.

    ``page`` is ``<lang>/<file>``: a page (``zh/toll-booth.md``), every page and data
    text of that language (``zh/*``), or a data file's texts (``en/glossary.yml``,
    ``en/figures.yml``, ``en/quiz.yml``, ``en/claims.yml``, ``en/notebooks``).
    """

    page: str
    form: str
    reason: str

    @property
    def lang(self) -> str:
        return self.page.split("/", 1)[0]

    def covers(self, page: str) -> bool:
        return self.page == page or (self.page.endswith("/*") and page.startswith(self.page[:-1]))


@dataclass(frozen=True, eq=False)  # hashed by identity: the link matcher is cached per glossary
class Glossary:
    groups: tuple[Group, ...]
    terms: tuple[Term, ...]
    jieba_parts: tuple[str, ...]
    # House-style bans that belong to no single term (spellings, phrasing), per language.
    style: dict[str, tuple[str, ...]] = field(default_factory=lambda: {lang: () for lang in LANGS})
    # Where prose may use an alias instead of the glossary name, and why (see ProseException).
    prose_exceptions: tuple["ProseException", ...] = ()

    def __len__(self) -> int:
        return len(self.terms)

    def get(self, term_id: str) -> Term:
        for t in self.terms:
            if t.id == term_id:
                return t
        raise KeyError(f"unknown glossary term {term_id!r}")

    def ids(self) -> list[str]:
        return [t.id for t in self.terms]

    def banned(self, lang: str) -> dict[str, str]:
        """{variant: what to write instead} for one language: every term's banned variants and the house style."""
        if lang not in LANGS:
            raise ValueError(f"lang must be one of {LANGS}, got {lang!r}")
        out = {v: "house style" for v in self.style[lang]}
        for t in self.terms:
            for v in t.banned[lang]:
                out[v] = f"glossary term {t.id!r}, written {t.name[lang]!r}"
        return out


# ---------------------------------------------------------------- load / validate


def load(path: str | Path = DATA) -> Glossary:
    """Read and validate the glossary YAML; raises GlossaryError naming each bad term."""
    import yaml  # PyYAML; imported here so that importing normref stays light

    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"glossary data not found: {path}")
    with path.open(encoding="utf-8") as fh:
        raw = yaml.safe_load(fh)
    return parse(raw, source=str(path))


@functools.lru_cache(maxsize=1)
def default() -> Glossary:
    """The project's glossary, loaded once."""
    return load(DATA)


def _str_list(errors: list[str], where: str, field: str, value) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        errors.append(f"{where}: {field!r} must be a list of non-empty strings, got {value!r}")
        return ()
    return tuple(" ".join(v.split()) for v in value)


_TERM_KEYS = {"id", "group", "name", "aliases", "short", "definition", "formula", "see_also", "page", "no_link", "avoid",
              "banned"}


def _banned(errors: list[str], where: str, field_name: str, value) -> dict[str, tuple[str, ...]]:
    """A {zh: [...], en: [...]} mapping of banned variants (either language may be left out)."""
    out = {lang: () for lang in LANGS}
    if value is None:
        return out
    if not isinstance(value, dict) or set(value) - set(LANGS):
        errors.append(f"{where}: {field_name!r} must map 'zh' and/or 'en' to lists of variants, got {value!r}")
        return out
    for lang in LANGS:
        out[lang] = _str_list(errors, where, f"{field_name}[{lang!r}]", value.get(lang))
    return out


def parse(raw, source: str = "glossary data") -> Glossary:
    """Validate already-parsed YAML (a dict) and build the Glossary. Collects all problems, then raises."""
    errors: list[str] = []
    if not isinstance(raw, dict):
        raise GlossaryError(f"{source}: expected a mapping with 'groups', 'terms' and 'jieba_parts', got {type(raw).__name__}")
    unknown = sorted(set(raw) - {"groups", "terms", "jieba_parts", "style", "prose_exceptions"})
    if unknown:
        errors.append(f"{source}: unknown top-level key(s) {unknown}")

    groups: list[Group] = []
    for i, g in enumerate(raw.get("groups") or []):
        if not isinstance(g, dict) or not isinstance(g.get("id"), str):
            errors.append(f"group #{i + 1}: needs an 'id' and 'zh'/'en' titles")
            continue
        title = bilingual_text(errors, f"group {g['id']!r}", "title", {k: g.get(k) for k in LANGS})
        groups.append(Group(g["id"], title))
    group_ids = {g.id for g in groups}
    if not groups:
        errors.append(f"{source}: no groups defined")

    raw_terms = raw.get("terms")
    if not isinstance(raw_terms, list) or not raw_terms:
        raise GlossaryError("\n".join(errors + [f"{source}: 'terms' must be a non-empty list"]))

    terms: list[Term] = []
    seen_ids: dict[str, int] = {}
    for i, t in enumerate(raw_terms):
        if not isinstance(t, dict):
            errors.append(f"term #{i + 1}: expected a mapping, got {type(t).__name__}")
            continue
        tid = t.get("id")
        where = f"term {tid!r}" if isinstance(tid, str) else f"term #{i + 1}"
        if not isinstance(tid, str) or not _ID.match(tid):
            errors.append(f"{where}: 'id' must be lowercase letters/digits joined by hyphens (it is the anchor), got {tid!r}")
            tid = f"#{i + 1}"
        if tid in seen_ids:
            errors.append(f"{where}: duplicate id (term #{seen_ids[tid] + 1} has it too)")
        seen_ids.setdefault(tid, i)
        extra = sorted(set(t) - _TERM_KEYS)
        if extra:
            errors.append(f"{where}: unknown key(s) {extra}")
        group = t.get("group")
        if group not in group_ids:
            errors.append(f"{where}: group {group!r} is not one of {sorted(group_ids)}")
        name = bilingual_text(errors, where, "name", t.get("name"))
        short = bilingual_text(errors, where, "short", t.get("short"))
        definition = bilingual_text(errors, where, "definition", t.get("definition"), keep_paragraphs=True)
        for lang in LANGS:
            s = short[lang]
            if "$" in s or "](" in s or "\n" in s:
                errors.append(f"{where}: short[{lang!r}] is a plain-text tooltip: no math ($), links or line breaks")
            if len(s) > SHORT_MAX:
                errors.append(f"{where}: short[{lang!r}] has {len(s)} characters; keep a tooltip under {SHORT_MAX}")
        formula = t.get("formula")
        if formula is not None and (not isinstance(formula, str) or not formula.strip() or "$" in formula):
            errors.append(f"{where}: 'formula' must be LaTeX without $ delimiters, got {formula!r}")
            formula = None
        page = t.get("page")
        if page is not None and (not isinstance(page, str) or page.startswith("/") or not page.endswith(".md") or ".." in page):
            errors.append(f"{where}: 'page' must be a docs path such as 'formulas.md', got {page!r}")
            page = None
        term = Term(
            id=tid, group=group, name=name,
            aliases=_str_list(errors, where, "aliases", t.get("aliases")),
            short=short, definition=definition, formula=formula.strip() if formula else None,
            see_also=_str_list(errors, where, "see_also", t.get("see_also")),
            page=page,
            no_link=_str_list(errors, where, "no_link", t.get("no_link")),
            avoid=_str_list(errors, where, "avoid", t.get("avoid")),
            banned=_banned(errors, where, "banned", t.get("banned")),
        )
        for n in term.no_link:
            if n not in term.forms():
                errors.append(f"{where}: no_link entry {n!r} is not one of its names or aliases")
        for lang in LANGS:
            if term.name[lang] in term.banned[lang]:
                errors.append(f"{where}: banned[{lang!r}] lists the term's own {lang} name {term.name[lang]!r}")
        for a in term.avoid:
            if not any(f in a and f != a for f in term.forms()):
                errors.append(f"{where}: avoid entry {a!r} does not contain any of its names or aliases")
        terms.append(term)

    # Every spelling must lead to exactly one term: a shared alias would make
    # search and links ambiguous.
    owner: dict[str, tuple[str, str]] = {}
    for term in terms:
        own: dict[str, str] = {}
        for form in term.forms():
            k = _key(form)
            if k in own:
                errors.append(f"term {term.id!r}: {form!r} is listed twice (also as {own[k]!r}); spellings that differ only in case or spacing are one alias")
                continue
            own[k] = form
            if k in owner and owner[k][0] != term.id:
                errors.append(f"term {term.id!r}: {form!r} is also a name or alias of term {owner[k][0]!r}")
            owner.setdefault(k, (term.id, form))

    ids = {t.id for t in terms}
    for term in terms:
        for target in term.see_also:
            if target == term.id:
                errors.append(f"term {term.id!r}: see_also lists the term itself")
            elif target not in ids:
                errors.append(f"term {term.id!r}: see_also target {target!r} is not a term")
        if len(set(term.see_also)) != len(term.see_also):
            errors.append(f"term {term.id!r}: see_also repeats a target")

    parts = _str_list(errors, source, "jieba_parts", raw.get("jieba_parts"))
    han_forms = {f: t.id for t in terms for f in t.forms() if is_han(f)}
    for part in parts:
        if not all(_HAN.match(ch) for ch in part):
            errors.append(f"jieba part {part!r}: only Chinese characters belong in jieba's dictionary")
        for form, tid in han_forms.items():
            if form != part and form in part:
                errors.append(
                    f"jieba part {part!r} contains {form!r} (term {tid!r}): as one token it would hide that sub-word from search"
                )

    if errors:
        raise GlossaryError(f"{source}: {len(errors)} problem(s):\n  " + "\n  ".join(errors))
    style = _banned(errors, source, "style", raw.get("style"))
    seen_banned: dict[tuple[str, str], str] = {}
    for owner, lists in [("house style", style)] + [(f"term {t.id!r}", t.banned) for t in terms]:
        for lang in LANGS:
            for v in lists[lang]:
                if (lang, v) in seen_banned:
                    errors.append(f"{owner}: banned {lang} variant {v!r} is also listed by {seen_banned[(lang, v)]}")
                seen_banned.setdefault((lang, v), owner)
    exceptions = _prose_exceptions(errors, raw.get("prose_exceptions"), {_key(f): t.id for t in terms for f in t.aliases})
    if errors:
        raise GlossaryError(f"{source}: {len(errors)} problem(s):\n  " + "\n  ".join(errors))
    return Glossary(tuple(groups), tuple(terms), parts, style, exceptions)


_EXCEPTION_PAGE = re.compile(r"^(zh|en)/(\*|[a-z0-9-]+\.md|glossary\.yml|figures\.yml|quiz\.yml|claims\.yml|notebooks)$")


def _prose_exceptions(errors: list[str], value, aliases: dict[str, str]) -> tuple[ProseException, ...]:
    """The ``prose_exceptions`` list: each entry {page, alias, reason}; the alias must be some term's alias."""
    if value is None:
        return ()
    if not isinstance(value, list):
        errors.append(f"prose_exceptions: expected a list of {{page, alias, reason}}, got {value!r}")
        return ()
    out = []
    for i, e in enumerate(value):
        where = f"prose_exceptions #{i + 1}"
        if not isinstance(e, dict) or set(e) != {"page", "alias", "reason"}:
            errors.append(f"{where}: expected exactly the keys page, alias and reason, got {e!r}")
            continue
        page, form, reason = e["page"], e["alias"], e["reason"]
        if not isinstance(page, str) or not _EXCEPTION_PAGE.match(page):
            errors.append(f"{where}: page must be '<zh|en>/<page>.md', '<lang>/*' or '<lang>/<data file>.yml', got {page!r}")
        if not isinstance(form, str) or _key(form) not in aliases:
            errors.append(f"{where}: alias {form!r} is not an alias of any term")
        if not isinstance(reason, str) or len(reason.split()) < 3:
            errors.append(f"{where}: give a reason (a few words) for allowing {form!r}")
        out.append(ProseException(str(page), str(form), str(reason)))
    return tuple(out)
