"""The glossary on the site: its pages, its links in running text, its search checks.

The data and its validation are ``normsite.content.glossary`` (one YAML file); this
module turns it into Markdown (``render_markdown``: the ``[[glossary]]``
directive), links the first occurrence of each term on every page with its
short definition as a tooltip (``link_terms``), and lists what a reader may
type into the search box and which entry must answer (``search_cases``).
"""

from __future__ import annotations

import functools
import html
import posixpath
import re
from collections.abc import Mapping
from dataclasses import dataclass

from .content.glossary import GLOSSARY_PAGE, LANGS, Glossary, Term, default, is_han

__all__ = ["render_markdown", "heading", "link_terms", "glossary_href", "SearchCase", "search_cases", "segmenter",
           "subwords"]

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


def glossary_href(page_url: str, glossary_url: str) -> str:
    """The glossary page's URL relative to a page's URL (both as MkDocs gives them, e.g. "a/b/")."""
    base = page_url if page_url.endswith("/") or not page_url else posixpath.dirname(page_url)
    href = posixpath.relpath(glossary_url or ".", base or ".")
    if glossary_url.endswith("/") and not href.endswith("/"):
        href += "/"
    return href


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
# - a link never starts or ends inside a word jieba keeps whole: 去均值 is not
#   linked in 减去均值 (减去 is a word); `avoid` remains for meanings jieba cannot see;
# - on a Chinese page, English quoted in “…” is not linked (a quotation of a source);
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
    first: re.Pattern  # where a term can start: its first character (and, before a letter or digit, no word)

    def search(self, text: str, pos: int = 0) -> re.Match | None:
        """``regex.search(text, pos)``: the same match, found faster. Python's re tries each of the hundreds of
        alternatives at every position of the text; this tries them only where a term can start."""
        while (c := self.first.search(text, pos)) is not None:
            if (hit := self.regex.match(text, c.start())) is not None:
                return hit
            pos = c.start() + 1
        return None


def _first_chars(forms) -> re.Pattern:
    """A pattern matching where one of ``forms`` (as :func:`_form_pattern` writes them) can start: its first
    character, in the same case rule, after the same look-behind."""
    sets = {(w, i): set() for w in (False, True) for i in (False, True)}  # (after no word, ignoring case)
    for form in forms:
        ignore = not (_case_sensitive(form) or is_han(form))
        sets[(bool(re.match(r"[A-Za-z0-9]", form)), ignore)].add(form[0])

    def one(w: bool) -> list[str]:
        out = []
        for i in (False, True):
            if sets[(w, i)]:
                cls = "[" + "".join(re.escape(c) for c in sorted(sets[(w, i)])) + "]"
                out.append(f"(?i:{cls})" if i else cls)
        return out

    parts = one(False)
    if words := one(True):
        parts.append(r"(?<![A-Za-z0-9_])(?:" + "|".join(words) + ")")
    return re.compile("|".join(parts) or r"(?!)")


@functools.lru_cache(maxsize=8)
def _matcher(glossary: Glossary) -> _Matcher:
    entries = [(f, t) for t in glossary.terms for f in t.link_forms()]
    entries.sort(key=lambda e: (-len(e[0]), e[0]))  # longest first: at one position the first alternative wins
    alts, group_term, group_form = [], {}, {}
    for i, (form, term) in enumerate(entries):
        g = f"t{i}"
        alts.append(f"(?P<{g}>{_form_pattern(form)})")
        group_term[g], group_form[g] = term, form
    return _Matcher(re.compile("|".join(alts)), group_term, group_form, _first_chars(f for f, _ in entries))


def _avoided(text: str, start: int, end: int, form: str, term: Term) -> bool:
    for word in term.avoid:
        k = word.find(form)
        while k >= 0:
            if text[start - k:start - k + len(word)] == word:
                return True
            k = word.find(form, k + 1)
    return False


# How much likelier (natural log) jieba finds the text around a candidate link when the
# link's edges are not word boundaries. Above this, the link would split a word: 减去均值
# (减去 + 均值 beats 减 + 去均值 by 3.8), 不减去均值 (1.3), 逐词元 (逐词, 3.5), 协方差 (8.2);
# the term then links at a later occurrence, or a shorter term links here. Below it, jieba's
# dictionary merely prefers an accidental pairing and the term, a word in its own right,
# wins: 隐藏向量变长 (向 + 量变 + 长, 0.93), 让路由专家 (0.98), 的残差流向量 (0.7). Measured
# over every candidate link on the zh pages (December 2026): none fell between 1.0 and 1.2.
SPLIT_COST = 1.0


def _best(tok, text: str) -> float:
    """jieba's best segmentation of ``text`` (its dictionary only, no HMM guesses): the log-probability."""
    if not text:
        return 0.0
    route: dict = {}
    tok.calc(text, tok.get_DAG(text), route)
    return route[0][0]


def split_cost(text: str, start: int, end: int) -> float:
    """How much less likely jieba finds ``text`` segmented with word boundaries at ``start`` and ``end``
    (a link on text[start:end]) than segmented freely; 0 when it already puts them there.

    Only edges between two Han characters count: Latin, spaces and punctuation are boundaries anyway."""
    tok = segmenter()
    tok.check_initialized()
    cost, done = 0.0, set()
    for edge in (start, end):
        if not (0 < edge < len(text) and is_han(text[edge - 1]) and is_han(text[edge])):
            continue
        r0, r1 = edge, edge
        while r0 > 0 and is_han(text[r0 - 1]):
            r0 -= 1
        while r1 < len(text) and is_han(text[r1]):
            r1 += 1
        if (r0, r1) in done:
            continue
        done.add((r0, r1))
        cuts = [r0] + [e for e in (start, end) if r0 < e < r1] + [r1]
        run = text[r0:r1]
        cost += _best(tok, run) - sum(_best(tok, text[x:y]) for x, y in zip(cuts, cuts[1:]))
    return cost


def _splits_word(text: str, start: int, end: int) -> bool:
    """Would a link on text[start:end] start or end inside a word jieba keeps whole (减|去均值 in 减去均值)?"""
    return split_cost(text, start, end) > SPLIT_COST


# Quoted English inside Chinese prose (“routing weights” in a zh quotation of the K3
# report) is someone else's words in another language: its terms are not linked.
_QUOTED = re.compile(r"“(?:[^“”<]|<[^>]*>)*”")


def _quoted_latin(content: str, lang: str) -> list[tuple[int, int]]:
    if lang != "zh":
        return []
    spans = []
    for q in _QUOTED.finditer(content):
        text = re.sub(r"<[^>]*>", "", q.group(0))
        if not any(is_han(c) for c in text) and re.search(r"[A-Za-z]", text):
            spans.append(q.span())
    return spans


class _TermLinker:
    """:func:`link_terms`' work on one page's text between tags: the glossary's matcher, the page's quoted
    English (:func:`_quoted_latin`), and ``linked``, the ids linked so far, which it grows."""

    def __init__(self, content: str, glossary: Glossary, lang: str, href: str, linked: set[str]):
        self.m = _matcher(glossary)
        self.lang, self.href, self.linked = lang, href, linked
        self.quoted = _quoted_latin(content, lang)

    def in_quote(self, at: int) -> int | None:
        """Where the quotation holding page offset ``at`` ends; None if it is in none."""
        for a, b in self.quoted:
            if a <= at < b:
                return b
        return None

    def link_piece(self, piece: str, offset: int) -> str:
        """``piece`` (text at page offset ``offset``, no entity or formula in it) with its terms linked."""
        out, pos, at = [], 0, 0
        while (hit := self.m.search(piece, at)) is not None:
            g = hit.lastgroup
            term, form = self.m.group_term[g], self.m.group_form[g]
            quote_end = self.in_quote(offset + hit.start())
            if quote_end is not None:
                at = max(hit.end(), quote_end - offset)
                continue
            if _splits_word(piece, hit.start(), hit.end()):
                at = hit.start() + 1  # a shorter term may still start here, or a word later
                continue
            at = hit.end()
            if term.id in self.linked or _avoided(piece, hit.start(), hit.end(), form, term):
                continue
            self.linked.add(term.id)
            out.append(piece[pos:hit.start()])
            out.append(
                f'<a class="nr-term" href="{_attr(self.href)}#{term.id}" title="{_attr(term.short[self.lang])}">'
                f'{hit.group(0)}</a>'
            )
            pos = hit.end()
        out.append(piece[pos:])
        return "".join(out)

    def link_text(self, text: str, offset: int) -> str:
        """Text between two tags, at page offset ``offset``, linked around its entities and formulas (_UNTOUCHED)."""
        pieces, at = [], offset
        for i, piece in enumerate(_UNTOUCHED.split(text)):
            pieces.append(piece if i % 2 or not piece else self.link_piece(piece, at))
            at += len(piece)
        return "".join(pieces)


def link_terms(content: str, glossary: Glossary, lang: str, href: str, linked: set[str] | None = None) -> tuple[str, set[str]]:
    """Link the first occurrence of each glossary term in the text of rendered HTML.

    ``href`` is the glossary page's URL relative to the page (e.g. ``../glossary/``);
    each link is ``<a class="nr-term" href="{href}#{id}" title="{short}">`` whose
    ``title`` becomes Material's tooltip (feature ``content.tooltips``). Markup is
    copied byte for byte; only text outside skipped elements changes.

    A link never starts or ends inside a Chinese word, as jieba (:func:`segmenter`)
    segments the text around it: in 减去均值 the alias 去均值 is not linked (减去 is
    a word), and the search goes on from the next character. On a Chinese page,
    English quoted in “…” is left alone.
    Returns the new HTML and the ids of the terms linked.
    """
    if lang not in LANGS:
        raise ValueError(f"lang must be one of {LANGS}, got {lang!r}")
    linker = _TermLinker(content, glossary, lang, href, set() if linked is None else linked)
    out: list[str] = []
    pos = 0
    skip_tag: str | None = None  # the element we are inside of and must not touch
    depth = 0
    for tag in _MARKUP.finditer(content):
        text = content[pos:tag.start()]
        out.append(linker.link_text(text, pos) if skip_tag is None and text.strip() else text)
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
    out.append(linker.link_text(text, pos) if skip_tag is None and text.strip() else text)
    return "".join(out), linker.linked


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


def taught(parts: tuple[str, ...]):
    """jieba's default tokenizer, the one Material's search segments Chinese with, taught ``parts``.

    The search and the term links (:func:`segmenter`) share it: loading jieba's dictionary costs about
    a second per tokenizer. It is taught once per process, since add_word also moves the tokenizer's
    total frequency (teaching it twice would segment differently from a fresh build); under `mkdocs
    serve` the jieba module outlives the site layer's rebuilds, so a rebuild pays nothing. When the
    words change (a glossary edit) it starts again from a fresh dictionary, as a fresh process would."""
    import logging

    import jieba

    jieba.setLogLevel(logging.WARNING)
    tok = jieba.dt
    parts = tuple(parts)
    if getattr(tok, "normsite_parts", None) != parts:
        if getattr(tok, "normsite_parts", None) is not None:
            tok.__init__()  # jieba.Tokenizer's own reset: the default dictionary, nothing added, not loaded
        for part in parts:
            tok.add_word(part)
        tok.normsite_parts = parts
    return tok


def segmenter():
    """jieba's tokenizer set up as the site build's (the glossary's word parts added): :func:`taught`."""
    return taught(default().jieba_parts)


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
