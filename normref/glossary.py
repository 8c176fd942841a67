"""The glossary: load and validate ``normref/glossary.yml``, render it, link it.

One YAML file is the single source of
- the glossary pages (``render_markdown``: the hook expands ``[[glossary]]`` with it),
- the links with tooltips on every page (``link_terms``: rewrites the text of rendered HTML),
- the search checks (``search_cases``: what a reader may type, and which entry must answer).

``load`` validates everything up front and raises ``GlossaryError`` (a
ValueError) that names the offending term: a term without both languages, a
duplicate id or alias, a see-also target that is not a term. The MkDocs hook
turns that into a failed build. This module never imports MkDocs.
"""

from __future__ import annotations

import functools
import html
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "DATA", "LANGS", "GLOSSARY_PAGE", "Glossary", "GlossaryError", "SearchCase", "Term",
    "load", "parse", "render_markdown", "link_terms", "search_cases", "segmenter", "is_han",
]

DATA = Path(__file__).with_name("glossary.yml")
LANGS = ("zh", "en")
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

    def names(self) -> list[str]:
        """zh and en name, once if they are the same."""
        return list(dict.fromkeys([self.name["zh"], self.name["en"]]))

    def forms(self) -> list[str]:
        """Every spelling a reader may use: both names, then the aliases."""
        return self.names() + list(self.aliases)

    def link_forms(self) -> list[str]:
        """Spellings linked in running text: single characters (ε, γ, ℓ) and no_link are left alone."""
        return [f for f in self.forms() if len(f) >= 2 and f not in self.no_link]


@dataclass(frozen=True, eq=False)  # hashed by identity: the link matcher is cached per glossary
class Glossary:
    groups: tuple[Group, ...]
    terms: tuple[Term, ...]
    jieba_parts: tuple[str, ...]

    def __len__(self) -> int:
        return len(self.terms)

    def get(self, term_id: str) -> Term:
        for t in self.terms:
            if t.id == term_id:
                return t
        raise KeyError(f"unknown glossary term {term_id!r}")

    def ids(self) -> list[str]:
        return [t.id for t in self.terms]


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


def _bilingual(errors: list[str], where: str, field: str, value) -> dict[str, str]:
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
        out[lang] = " ".join(text.split()) if field != "definition" else text.strip()
    return out


def _str_list(errors: list[str], where: str, field: str, value) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        errors.append(f"{where}: {field!r} must be a list of non-empty strings, got {value!r}")
        return ()
    return tuple(" ".join(v.split()) for v in value)


_TERM_KEYS = {"id", "group", "name", "aliases", "short", "definition", "formula", "see_also", "page", "no_link", "avoid"}


def parse(raw, source: str = "glossary data") -> Glossary:
    """Validate already-parsed YAML (a dict) and build the Glossary. Collects all problems, then raises."""
    errors: list[str] = []
    if not isinstance(raw, dict):
        raise GlossaryError(f"{source}: expected a mapping with 'groups', 'terms' and 'jieba_parts', got {type(raw).__name__}")
    unknown = sorted(set(raw) - {"groups", "terms", "jieba_parts"})
    if unknown:
        errors.append(f"{source}: unknown top-level key(s) {unknown}")

    groups: list[Group] = []
    for i, g in enumerate(raw.get("groups") or []):
        if not isinstance(g, dict) or not isinstance(g.get("id"), str):
            errors.append(f"group #{i + 1}: needs an 'id' and 'zh'/'en' titles")
            continue
        title = _bilingual(errors, f"group {g['id']!r}", "title", {k: g.get(k) for k in LANGS})
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
        name = _bilingual(errors, where, "name", t.get("name"))
        short = _bilingual(errors, where, "short", t.get("short"))
        definition = _bilingual(errors, where, "definition", t.get("definition"))
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
        )
        for n in term.no_link:
            if n not in term.forms():
                errors.append(f"{where}: no_link entry {n!r} is not one of its names or aliases")
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
    return Glossary(tuple(groups), tuple(terms), parts)


# ---------------------------------------------------------------- page


_LABELS = {
    "zh": {"short": "简述", "other": "English", "aliases": "别名", "see": "参见", "page": "详解", "colon": "：", "space": "", "list": "、"},
    "en": {"short": "In short", "other": "中文", "aliases": "Also", "see": "See also", "page": "Explained on", "colon": ":", "space": " ", "list": ", "},
}


def heading(term: Term, lang: str) -> str:
    """The entry's heading: the name in the page's language (zh adds the English name)."""
    if lang == "zh" and term.name["zh"] != term.name["en"]:
        return f"{term.name['zh']}（{term.name['en']}）"
    return term.name[lang]


def _attr(s: str) -> str:
    return html.escape(s, quote=True)


def render_markdown(glossary: Glossary, lang: str, pages: Mapping[str, str] | None = None) -> str:
    """Markdown for the glossary page body, grouped.

    ``pages`` maps the docs paths present in this build to their titles (from the nav).

    The "explained on" link is written only when its page is in ``pages``: pages
    arrive from several branches, and a link to a missing page would fail the
    strict build. Once the page lands, the link appears by itself.
    """
    if lang not in LANGS:
        raise ValueError(f"lang must be one of {LANGS}, got {lang!r}")
    lab = _LABELS[lang]

    def label(key: str) -> str:
        return f"**{lab[key]}{lab['colon']}**{lab['space']}"

    other = "en" if lang == "zh" else "zh"
    pages = pages or {}
    out: list[str] = []
    for group in glossary.groups:
        members = [t for t in glossary.terms if t.group == group.id]
        if not members:
            continue
        out.append(f"## {group.title[lang]} {{ #group-{group.id} }}\n")
        for t in members:
            out.append(f"### {heading(t, lang)} {{ #{t.id} .nr-gloss-term }}\n")
            out.append(label("short") + f"{t.short[lang]}\n")
            out.append(t.definition[lang] + "\n")
            if t.formula:
                out.append(f"$$\n{t.formula}\n$$\n")
            items = []
            # The other language's name and every alias are visible text, so the
            # search index holds them in this entry's section.
            if t.name[other] != t.name[lang] and not (lang == "zh" and t.name[other] in heading(t, lang)):
                items.append("- " + label("other") + t.name[other])
            if t.aliases:
                items.append("- " + label("aliases") + lab["list"].join(t.aliases))
            if t.see_also:
                links = []
                for sid in t.see_also:
                    s = glossary.get(sid)
                    links.append(f'<a href="#{sid}" title="{_attr(s.short[lang])}">{html.escape(s.name[lang])}</a>')
                items.append("- " + label("see") + lab["list"].join(links))
            if t.page and t.page in pages:
                title = pages[t.page] or t.page
                items.append("- " + label("page") + f"[{title}]({t.page})")
            if items:
                out.append("\n".join(items) + "\n")
    return "\n".join(out)


# ---------------------------------------------------------------- links in running text
#
# Python-Markdown's `abbr` extension finds terms with \b...\b. In Chinese text
# there is no space between words, so \b never falls inside 用均方根归一化替代 and
# `abbr` cannot mark 均方根归一化 there. So we match ourselves, on the text nodes
# of the rendered HTML:
# - longest spelling first, leftmost first: 均方根归一化 wins over 归一化, RMSNorm over RMS;
# - Latin spellings need a word boundary on their Latin edges (RMS is not found in
#   RMSNorms or in BRMS), Chinese spellings need none (there are no spaces to find);
# - short or acronym-like Latin spellings (RMS, LN, HBM, Pre-LN, RMSNorm) match their
#   case exactly, so "ln d" (a logarithm) is not LayerNorm; longer lowercase ones
#   (warmup, residual stream) match any case and an optional plural "s";
# - a space between Chinese and Latin characters is optional (L2 范数 = L2范数);
# - per term, `avoid` lists longer words that contain a spelling but mean
#   something else (方差 inside 协方差);
# - only the first occurrence of each term per page is linked, and later
#   occurrences are still consumed, so a second 均方根归一化 does not link 归一化.
# Skipped: code, pre, kbd, existing links, headings, KaTeX output, scripts and
# styles, SVG, form controls, <summary>/<label>, and anything inside class="nr-noterm".

_SKIP_TAGS = frozenset(
    "a abbr button code dfn h1 h2 h3 h4 h5 h6 kbd label math option pre samp script select style summary svg textarea title".split()
)
_SKIP_CLASS = re.compile(r"""\bclass\s*=\s*["'][^"']*(?<![\w-])(?:katex[\w-]*|arithmatex|nr-noterm|nr-gloss-term)(?![\w-])""")
_VOID = frozenset("area base br col embed hr img input link meta param source track wbr".split())
_MARKUP = re.compile(r"<!--.*?-->|<!\[CDATA\[.*?\]\]>|<(script|style)\b.*?</\1\s*>|<[!?/]?[A-Za-z][^>]*>", re.S | re.I)
_TAGNAME = re.compile(r"<(/?)([A-Za-z][\w:-]*)")
# Character references, and TeX that was not typeset (still $...$ or \(...\) in
# the text), are copied untouched: text is linked only between them.
_UNTOUCHED = re.compile(r"(&(?:#\d+|#x[0-9a-fA-F]+|\w+);|\$\$.*?\$\$|\$[^$\n]+\$|\\\(.*?\\\)|\\\[.*?\\\])", re.S)


def _case_sensitive(form: str) -> bool:
    return len(form) <= 4 or re.search(r"[A-Z]{2}", form) is not None


def _form_pattern(form: str) -> str:
    parts = []
    for i, ch in enumerate(form):
        if ch.isspace():
            prev, nxt = form[i - 1], form[i + 1]
            # Chinese writers put a space between Chinese and Latin text, or not.
            parts.append(r"\s?" if is_han(prev) != is_han(nxt) else r"\s+")
        else:
            parts.append(re.escape(ch))
    pat = "".join(parts)
    sensitive = _case_sensitive(form) or is_han(form)
    if not sensitive and form[-1].isalpha() and form[-1] != "s":
        pat += "s?"
    if not sensitive:
        pat = f"(?i:{pat})"
    if re.match(r"[A-Za-z0-9]", form):
        pat = r"(?<![A-Za-z0-9_])" + pat
    if re.search(r"[A-Za-z0-9]$", form):
        pat += r"(?![A-Za-z0-9_])"
    return pat


@dataclass(frozen=True)
class _Matcher:
    regex: re.Pattern
    group_term: dict[str, Term]
    group_form: dict[str, str]


@functools.lru_cache(maxsize=8)
def _matcher(glossary: Glossary) -> _Matcher:
    entries = [(f, t) for t in glossary.terms for f in t.link_forms()]
    entries.sort(key=lambda e: (-len(e[0]), e[0]))  # longest first: at one position the first alternative wins
    alts, group_term, group_form = [], {}, {}
    for i, (form, term) in enumerate(entries):
        g = f"t{i}"
        alts.append(f"(?P<{g}>{_form_pattern(form)})")
        group_term[g], group_form[g] = term, form
    return _Matcher(re.compile("|".join(alts)), group_term, group_form)


def _avoided(text: str, start: int, end: int, form: str, term: Term) -> bool:
    for word in term.avoid:
        k = word.find(form)
        while k >= 0:
            if text[start - k:start - k + len(word)] == word:
                return True
            k = word.find(form, k + 1)
    return False


def link_terms(content: str, glossary: Glossary, lang: str, href: str, linked: set[str] | None = None) -> tuple[str, set[str]]:
    """Link the first occurrence of each glossary term in the text of rendered HTML.

    ``href`` is the glossary page's URL relative to the page (e.g. ``../glossary/``);
    each link is ``<a class="nr-term" href="{href}#{id}" title="{short}">`` whose
    ``title`` becomes Material's tooltip (feature ``content.tooltips``). Markup is
    copied byte for byte; only text outside skipped elements changes.
    Returns the new HTML and the ids of the terms linked.
    """
    if lang not in LANGS:
        raise ValueError(f"lang must be one of {LANGS}, got {lang!r}")
    m = _matcher(glossary)
    linked = set() if linked is None else linked

    def link_text(text: str) -> str:
        pieces = []
        for i, piece in enumerate(_UNTOUCHED.split(text)):
            if i % 2 or not piece:
                pieces.append(piece)
                continue
            out, pos = [], 0
            for hit in m.regex.finditer(piece):
                g = hit.lastgroup
                term, form = m.group_term[g], m.group_form[g]
                if term.id in linked or _avoided(piece, hit.start(), hit.end(), form, term):
                    continue
                linked.add(term.id)
                out.append(piece[pos:hit.start()])
                out.append(
                    f'<a class="nr-term" href="{_attr(href)}#{term.id}" title="{_attr(term.short[lang])}">{hit.group(0)}</a>'
                )
                pos = hit.end()
            out.append(piece[pos:])
            pieces.append("".join(out))
        return "".join(pieces)

    out: list[str] = []
    pos = 0
    skip_tag: str | None = None  # the element we are inside of and must not touch
    depth = 0
    for tag in _MARKUP.finditer(content):
        text = content[pos:tag.start()]
        out.append(link_text(text) if skip_tag is None and text.strip() else text)
        out.append(tag.group(0))
        pos = tag.end()
        t = _TAGNAME.match(tag.group(0))
        if t is None or tag.group(1):  # comment, doctype, or a whole script/style element
            continue
        closing, name = t.group(1) == "/", t.group(2).lower()
        self_closing = tag.group(0).endswith("/>") or name in _VOID
        if skip_tag is None:
            if not closing and not self_closing and (name in _SKIP_TAGS or _SKIP_CLASS.search(tag.group(0))):
                skip_tag, depth = name, 1
        elif name == skip_tag and not self_closing:
            depth += -1 if closing else 1
            if depth == 0:
                skip_tag = None
    text = content[pos:]
    out.append(link_text(text) if skip_tag is None and text.strip() else text)
    return "".join(out), linked


# ---------------------------------------------------------------- search


@dataclass(frozen=True)
class SearchCase:
    """A query a reader may type in one language's site, and the entry it must find."""

    lang: str
    query: str
    term: str
    kind: str  # "zh name", "en name", "alias", "sub-word"

    @property
    def anchor(self) -> str:
        """Location of the entry relative to the language's site root, as in search_index.json
        (MkDocs' default use_directory_urls: glossary.md is served as glossary/)."""
        return f"{GLOSSARY_PAGE[:-3]}/#{self.term}"


@functools.lru_cache(maxsize=1)
def segmenter():
    """A jieba tokenizer set up like the site build's (same added words), for tests and tools."""
    import logging

    import jieba

    jieba.setLogLevel(logging.WARNING)
    tok = jieba.Tokenizer()
    for part in default().jieba_parts:
        tok.add_word(part)
    return tok


def subwords(term: Term, tokenizer=None) -> list[str]:
    """Chinese sub-words of the zh name: jieba's segments of two or more characters."""
    tok = tokenizer or segmenter()
    out = []
    for run in re.findall(r"[\u3400-\u9fff]+", term.name["zh"]):
        segs = [s for s in tok.cut(run) if len(s) >= 2 and is_han(s)]
        if len(segs) > 1 or (segs and segs[0] != term.name["zh"]):
            out += [s for s in segs if s != term.name["zh"]]
    return list(dict.fromkeys(out))


def search_cases(glossary: Glossary | None = None) -> list[SearchCase]:
    """Every (language, query, expected entry) the search must answer, both sites.

    Each term must be found by its zh name, its en name, every alias, and each
    Chinese sub-word of its zh name (归一化 finds 层归一化 and 均方根归一化), in
    the Chinese and in the English site. A browser test can type these into the
    real search box.
    """
    g = glossary or default()
    cases = []
    for lang in LANGS:
        for t in g.terms:
            seen = set()
            for kind, q in [("zh name", t.name["zh"]), ("en name", t.name["en"])] + [("alias", a) for a in t.aliases] + [
                ("sub-word", s) for s in subwords(t)
            ]:
                if q not in seen:
                    seen.add(q)
                    cases.append(SearchCase(lang, q, t.id, kind))
    return cases
