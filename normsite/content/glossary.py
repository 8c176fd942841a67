"""The glossary's data: load and validate ``glossary.yml`` (beside this module).

One YAML file is the single source of the site's vocabulary. This module only
reads and checks it; the site layer (``normsite.glossary``) renders the glossary
pages, links terms on every page and lists the search checks.

``load`` validates everything up front and raises ``GlossaryError`` (a
ValueError) that names the offending term: a term without both languages, a
duplicate id or alias, a see-also target that is not a term. The MkDocs hook
turns that into a failed build. This module never imports MkDocs.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

from pydantic import BeforeValidator, field_validator, model_validator

from normref.bilingual import LANGS  # the one definition

from . import schema

__all__ = ["READS", "DATA", "LANGS", "GLOSSARY_PAGE", "Glossary", "ProseException", "GlossaryError", "Term", "load", "parse", "default", "is_han"]

# The files this loader reads, relative to its folder (a literal: the cache reads it from the source).
READS = __cache_files__ = ("glossary.yml",)
DATA = Path(__file__).with_name("glossary.yml")
GLOSSARY_PAGE = "glossary.md"  # docs path of the glossary page, the same in both languages

_ID = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
SHORT_MAX = 160  # characters; the short definition is a tooltip, not a paragraph


def _banned(value) -> dict[str, tuple[str, ...]]:
    """A {zh: [...], en: [...]} mapping of banned variants (either language may be left out)."""
    if value is None:
        return {lang: () for lang in LANGS}
    if not isinstance(value, dict) or set(value) - set(LANGS):
        raise schema.problem(f"must map 'zh' and/or 'en' to lists of variants, got {value!r}")
    out = {}
    for lang in LANGS:
        try:
            out[lang] = schema._strings(value.get(lang))
        except Exception:
            raise schema.problem(f"[{lang!r}] must be a list of non-empty strings, got {value.get(lang)!r}") from None
    return out


_Banned = Annotated[dict[str, tuple[str, ...]], BeforeValidator(_banned)]


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
        raw = schema.yaml_load(fh)
    return parse(raw, source=str(path))


@functools.lru_cache(maxsize=1)
def default() -> Glossary:
    """The project's glossary, loaded once."""
    return load(DATA)


class _GroupData(schema.Model):
    id: str
    zh: str
    en: str


class _TermData(schema.Model):
    """One entry of ``terms``; the rules that relate terms to each other are in :func:`parse`."""

    id: schema.Slug
    group: str | None
    name: schema.Text
    aliases: schema.Strings
    short: schema.Text
    definition: schema.Paragraphs
    formula: str | None
    see_also: schema.Strings
    page: str | None
    no_link: schema.Strings
    avoid: schema.Strings
    banned: _Banned

    @field_validator("short")
    @classmethod
    def _tooltip(cls, short: dict[str, str]) -> dict[str, str]:
        for lang in LANGS:
            s = short[lang]
            if "$" in s or "](" in s or "\n" in s:
                raise schema.problem(f"in {lang!r} is a plain-text tooltip: no math ($), links or line breaks")
            if len(s) > SHORT_MAX:
                raise schema.problem(f"in {lang!r} has {len(s)} characters; keep a tooltip under {SHORT_MAX}")
        return short

    @field_validator("formula", mode="before")
    @classmethod
    def _latex(cls, formula):
        if formula is not None and (not isinstance(formula, str) or not formula.strip() or "$" in formula):
            raise schema.problem(f"must be LaTeX without $ delimiters, got {formula!r}")
        return formula.strip() if formula else None

    @field_validator("page", mode="before")
    @classmethod
    def _docs_path(cls, page):
        if page is not None and (not isinstance(page, str) or page.startswith("/") or not page.endswith(".md") or ".." in page):
            raise schema.problem(f"must be a docs path such as 'formulas.md', got {page!r}")
        return page

    @model_validator(mode="after")
    def _own_forms(self):
        forms = list(dict.fromkeys([self.name["zh"], self.name["en"]])) + list(self.aliases)
        for n in self.no_link:
            if n not in forms:
                raise schema.problem(f"no_link entry {n!r} is not one of its names or aliases")
        for lang in LANGS:
            if self.name[lang] in self.banned[lang]:
                raise schema.problem(f"banned[{lang!r}] lists the term's own {lang} name {self.name[lang]!r}")
        for a in self.avoid:
            if not any(f in a and f != a for f in forms):
                raise schema.problem(f"avoid entry {a!r} does not contain any of its names or aliases")
        return self


class _ExceptionData(schema.Model):
    page: str
    alias: str
    reason: str

    @model_validator(mode="before")
    @classmethod
    def _all_three(cls, e):
        if not isinstance(e, dict) or set(e) != {"page", "alias", "reason"}:
            raise schema.problem(f"expected exactly the keys page, alias and reason, got {e!r}")
        if not isinstance(e["page"], str) or not _EXCEPTION_PAGE.match(e["page"]):
            raise schema.problem(f"page must be '<zh|en>/<page>.md', '<lang>/*' or '<lang>/<data file>.yml', got {e['page']!r}")
        if not isinstance(e["reason"], str) or len(e["reason"].split()) < 3:
            raise schema.problem(f"give a reason (a few words) for allowing {e['alias']!r}")
        return e


class _GlossaryData(schema.Model):
    groups: list[Any]
    terms: list[Any]
    jieba_parts: schema.Strings
    style: _Banned
    prose_exceptions: list[Any] | None

    @field_validator("terms", mode="before")
    @classmethod
    def _non_empty(cls, terms):
        if not isinstance(terms, list) or not terms:
            raise schema.problem("must be a non-empty list")
        return terms

    @field_validator("groups", mode="before")
    @classmethod
    def _some_groups(cls, groups):
        if not isinstance(groups, list) or not groups:
            raise schema.problem("must be a non-empty list: no groups defined")
        return groups


def _fail(source: str, errors: list[str]) -> GlossaryError:
    return GlossaryError(f"{source}: {len(errors)} problem(s):\n  " + "\n  ".join(errors))


def parse(raw, source: str = "glossary data") -> Glossary:
    """Validate already-parsed YAML (a dict) and build the Glossary. Collects all problems, then raises.

    Each entry is checked by its schema (``normsite.content.schema``); the checks below relate
    entries to each other: unique ids and spellings, see-also targets, groups, jieba parts."""
    errors: list[str] = []
    top = schema.validate(_GlossaryData, raw, source, {}, errors)
    if top is None:
        raise _fail(source, errors)
    groups = [Group(g.id, {lang: getattr(g, lang) for lang in LANGS})
              for _, g in schema.validate_entries(_GroupData, top.groups, schema.entry_name("group"), errors)]
    terms = _terms(top.terms, {g.id for g in groups}, errors)
    _check_spellings(terms, errors)
    # A term with a bad field is reported once, not again by every see-also link to it.
    _check_see_also(terms, {t.id for t in terms} | {t.get("id") for t in top.terms if isinstance(t, dict)}, errors)
    _check_jieba(top.jieba_parts, terms, errors)
    if errors:
        raise _fail(source, errors)
    _check_banned(top.style, terms, errors)
    exceptions = _exceptions(top.prose_exceptions or [], {_key(f) for t in terms for f in t.aliases}, errors)
    if errors:
        raise _fail(source, errors)
    return Glossary(tuple(groups), tuple(terms), top.jieba_parts, top.style, exceptions)


def _terms(raw_terms: list, group_ids: set[str], errors: list[str]) -> list[Term]:
    """The valid terms; a duplicate id or an unknown group is a problem."""
    terms: list[Term] = []
    seen_ids: dict[str, int] = {}
    for i, t in schema.validate_entries(_TermData, raw_terms, schema.entry_name("term"), errors):
        if t.id in seen_ids:
            errors.append(f"term {t.id!r}: duplicate id (term #{seen_ids[t.id] + 1} has it too)")
        seen_ids.setdefault(t.id, i)
        if t.group not in group_ids:
            errors.append(f"term {t.id!r}: group {t.group!r} is not one of {sorted(group_ids)}")
        terms.append(Term(**{k: getattr(t, k) for k in _TermData.model_fields}))
    return terms


def _check_spellings(terms: list[Term], errors: list[str]) -> None:
    """Every spelling must lead to exactly one term: a shared alias would make search and links ambiguous."""
    owner: dict[str, str] = {}
    for term in terms:
        own: dict[str, str] = {}
        for form in term.forms():
            k = _key(form)
            if k in own:
                errors.append(f"term {term.id!r}: {form!r} is listed twice (also as {own[k]!r}); spellings that differ only in case or spacing are one alias")
                continue
            own[k] = form
            if owner.get(k, term.id) != term.id:
                errors.append(f"term {term.id!r}: {form!r} is also a name or alias of term {owner[k]!r}")
            owner.setdefault(k, term.id)


def _check_see_also(terms: list[Term], ids: set, errors: list[str]) -> None:
    for term in terms:
        for target in term.see_also:
            if target == term.id:
                errors.append(f"term {term.id!r}: see_also lists the term itself")
            elif target not in ids:
                errors.append(f"term {term.id!r}: see_also target {target!r} is not a term")
        if len(set(term.see_also)) != len(term.see_also):
            errors.append(f"term {term.id!r}: see_also repeats a target")


def _check_jieba(parts: tuple[str, ...], terms: list[Term], errors: list[str]) -> None:
    """jieba's extra words: Chinese only, and none may swallow a shorter Chinese name or alias."""
    han_forms = {f: t.id for t in terms for f in t.forms() if is_han(f)}
    for part in parts:
        if not all(_HAN.match(ch) for ch in part):
            errors.append(f"jieba part {part!r}: only Chinese characters belong in jieba's dictionary")
        for form, tid in han_forms.items():
            if form != part and form in part:
                errors.append(
                    f"jieba part {part!r} contains {form!r} (term {tid!r}): as one token it would hide that sub-word from search"
                )


def _check_banned(style: dict, terms: list[Term], errors: list[str]) -> None:
    """A banned variant is listed once, by the house style or by one term."""
    seen: dict[tuple[str, str], str] = {}
    for who, lists in [("house style", style)] + [(f"term {t.id!r}", t.banned) for t in terms]:
        for lang in LANGS:
            for v in lists[lang]:
                if (lang, v) in seen:
                    errors.append(f"{who}: banned {lang} variant {v!r} is also listed by {seen[(lang, v)]}")
                seen.setdefault((lang, v), who)


def _exceptions(raw: list, aliases: set[str], errors: list[str]) -> tuple[ProseException, ...]:
    """The ``prose_exceptions``: each {page, alias, reason}, the alias some term's alias."""
    out = []
    for i, e in schema.validate_entries(_ExceptionData, raw, lambda i, _: f"prose_exceptions #{i + 1}", errors):
        if _key(e.alias) not in aliases:
            errors.append(f"prose_exceptions #{i + 1}: alias {e.alias!r} is not an alias of any term")
        out.append(ProseException(e.page, e.alias, e.reason))
    return tuple(out)


_EXCEPTION_PAGE = re.compile(r"^(zh|en)/(\*|[a-z0-9-]+\.md|glossary\.yml|figures\.yml|quiz\.yml|claims\.yml|notebooks)$")
