"""The practice page's card bank, loaded from ``cards.yml`` and validated with pydantic.

Each card is an interview question drawn from a page of the site (the interview
page, the quiz, a page's exercises, the placement lab, the claim ledger): the
question, a 30-second answer, a deep answer and one or two follow-ups (追问),
each in both languages; the evidence links (``page.md#anchor``) and the ledger
claims it rests on. A number in a card is written ``[[value: NAME]]`` and filled
from normref.values by the site; a digit typed into a card's text is rejected
unless it is a sourced fact (a year, a paper's number, a formula's constant:
:data:`SOURCED`).

A bad file raises :class:`CardError` naming every bad card and field (the build
fails with it). The site layer (``normsite.practice``) renders the cards and
checks what normref cannot see: that each evidence anchor exists on its page,
each claim in the ledger, each value in normref.values.

pydantic is imported when the file is loaded, not when this module is: importing it stays cheap for the
MkDocs process. The drill widget's data (:func:`cards_index`) is the dataset "cards" of :mod:`.datasets`.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

from normref.bilingual import LANGS

from .grammar import names, pattern

__all__ = ["READS", "DATA", "INTERVALS", "NEW_PER_DAY", "SOURCED", "SHORT_UNITS", "DEEP_UNITS", "CardError", "load", "parse",
           "typed_numbers", "values_used", "cards_index", "spoken_units", "speakable_problems"]

# The files this loader reads, relative to its folder (a literal: the cache reads it from the source).
READS = __cache_files__ = ("cards.yml", "spoken.yml")
DATA = Path(__file__).with_name("cards.yml")
_ID = r"^[a-z0-9]+(?:-[a-z0-9]+)*$"
_LINK = r"^[a-z0-9][a-z0-9-]*\.md#[A-Za-z0-9_-]+$"
# The drill's Leitner schedule (the widget reads it from the "cards" dataset, the page from normref.values):
# box k comes back INTERVALS[k - 1] days after a Good; at most NEW_PER_DAY unseen cards are introduced a day.
INTERVALS = (1, 2, 4, 8, 16)
NEW_PER_DAY = 10

# Digits a card may type: sourced facts, not measurements. Years; the papers' numbers (Xiong et al.'s 8.45 and
# about 34 BLEU, 4000 and 500 warmup steps; LLaMA's 2000; the RMSNorm paper's 7%–64%, 6.9% and 6.25%; DeepNet's
# 1000 layers; ViT-22B's 8B, written 80 亿; OLMo 2's 7B and 13B, 70 亿 and 130 亿; LayerNorm Scaling's smallest model, 130M, 1.3 亿;
# Heimersheim's 500M fine-tuning tokens, 5 亿, and his 0.05 nats of cross-entropy); layer and formula counts (layer 0 and 1, "one" and "two"; Mix-LN's
# quarter; K3's equation numbers); the parameters an exercise gives (add 10, n_layer 24); the torch and
# transformers versions; the 99th percentile's name.
SOURCED = frozenset({
    "0", "1", "2", "3", "4", "6", "8", "12", "8.45", "34", "4000", "500", "2000", "7%", "64%", "6.9%", "6.25%",
    "1000", "80", "7", "13", "70", "130", "1.3", "2.13", "5.24.0", "10", "24", "5", "0.05", "11", "9", "99", "2017", "2018", "2019", "2020", "2021", "2022", "2023", "2024", "2026",
})
# What is not prose to the digit check: value directives, math, code, names that carry digits (SmolLM2-135M,
# GPT-2, K3, L2, Qwen3.5-0.8B, §2.3.1, Q1), and links.
_NOT_PROSE = re.compile(r"\[\[[^\]]*\]\]|\$\$.*?\$\$|\$[^$]*\$|`[^`]*`|\]\([^)]*\)|§[\d.]+|"
                        r"(?<![\w])[A-Za-z][\w.-]*\d[\w.-]*", re.S)
_NUMBER = re.compile(r"(?<![A-Za-z_\d])\d[\d.,]*%?")


class CardError(ValueError):
    """The card bank is invalid; the message names every bad card and field."""


def typed_numbers(text: str) -> list[str]:
    """The numbers typed into ``text`` that are not sourced facts (SOURCED): each should be a [[value: NAME]]."""
    prose = _NOT_PROSE.sub(" ", text)
    return [n for n in (m.rstrip(".,") for m in _NUMBER.findall(prose)) if n not in SOURCED]


def values_used(text: str) -> list[str]:
    return names(text, "value")


@functools.lru_cache(maxsize=1)
def _models():
    from pydantic import BaseModel, ConfigDict, Field, field_validator

    class Text(BaseModel):
        """One text in both languages; digits only through [[value: NAME]]."""
        model_config = ConfigDict(extra="forbid", frozen=True)
        zh: str = Field(min_length=1)
        en: str = Field(min_length=1)

        @field_validator("zh", "en")
        @classmethod
        def _no_typed_numbers(cls, v: str) -> str:
            v = v.strip()
            if not v:
                raise ValueError("must not be empty")
            bad = typed_numbers(v)
            if bad:
                raise ValueError(f"typed number(s) {bad}: write [[value: NAME]] (normref.values), "
                                 f"or add a sourced fact to normsite.content.cards.SOURCED")
            return v

    class FollowUp(BaseModel):
        model_config = ConfigDict(extra="forbid", frozen=True)
        q: Text
        a: Text

    class Topic(BaseModel):
        model_config = ConfigDict(extra="forbid", frozen=True)
        id: str = Field(pattern=_ID)
        title: Text

    class Card(BaseModel):
        model_config = ConfigDict(extra="forbid", frozen=True)
        id: str = Field(pattern=_ID)
        topic: str = Field(pattern=_ID)
        source: str = Field(pattern=_LINK)  # the page section the card was drawn from
        question: Text
        short: Text  # the 30-second answer
        deep: Text
        followups: tuple[FollowUp, ...] = Field(min_length=1, max_length=2)
        evidence: tuple[str, ...] = Field(min_length=1)
        claims: tuple[str, ...] = ()

        @field_validator("evidence")
        @classmethod
        def _links(cls, v):
            for link in v:
                if not re.match(_LINK, link):
                    raise ValueError(f"evidence {link!r} must be a link 'page.md#anchor'")
            return v

        @field_validator("claims")
        @classmethod
        def _claim_ids(cls, v):
            for cid in v:
                if not re.match(_ID, cid):
                    raise ValueError(f"claim id {cid!r} must be lowercase letters/digits joined by hyphens")
            return v

        def texts(self, lang: str) -> list[str]:
            out = [getattr(getattr(self, f), lang) for f in ("question", "short", "deep")]
            for f in self.followups:
                out += [getattr(f.q, lang), getattr(f.a, lang)]
            return out

    class Bank(BaseModel):
        model_config = ConfigDict(extra="forbid", frozen=True)
        topics: tuple[Topic, ...] = Field(min_length=1)
        cards: tuple[Card, ...] = Field(min_length=1)

    return Text, FollowUp, Topic, Card, Bank


def _where(raw, loc: tuple) -> str:
    """'card ID, field a.b' for a pydantic error location ('cards', 3, 'question', 'zh')."""
    if len(loc) >= 2 and loc[0] in ("cards", "topics") and isinstance(loc[1], int):
        items = raw.get(loc[0]) if isinstance(raw, dict) else None
        item = items[loc[1]] if isinstance(items, list) and loc[1] < len(items) else None
        cid = item.get("id") if isinstance(item, dict) else None
        who = f"{loc[0][:-1]} {cid!r}" if isinstance(cid, str) else f"{loc[0][:-1]} #{loc[1] + 1}"
        field = ".".join(str(p) for p in loc[2:])
        return f"{who}, field {field!r}" if field else who
    return "field " + repr(".".join(str(p) for p in loc)) if loc else "the file"


def parse(raw, source: str = "card data"):
    """Validate already-parsed YAML and return the bank (topics, cards); CardError lists every problem."""
    from pydantic import ValidationError

    Bank = _models()[-1]
    try:
        bank = Bank.model_validate(raw)
    except ValidationError as e:
        lines = [f"{_where(raw, tuple(err['loc']))}: {err['msg']}" for err in e.errors()]
        raise CardError(f"{source}: {len(lines)} problem(s):\n  " + "\n  ".join(lines)) from None
    errors = []
    topics = [t.id for t in bank.topics]
    if len(set(topics)) != len(topics):
        errors.append(f"topics: duplicate id(s) {sorted({t for t in topics if topics.count(t) > 1})}")
    seen: set[str] = set()
    for c in bank.cards:
        if c.id in seen:
            errors.append(f"card {c.id!r}: duplicate id")
        seen.add(c.id)
        if c.topic not in topics:
            errors.append(f"card {c.id!r}, field 'topic': {c.topic!r} is not one of the topics {topics}")
    unused = [t for t in topics if not any(c.topic == t for c in bank.cards)]
    if unused:
        errors.append(f"topics: {unused} have no card")
    if errors:
        raise CardError(f"{source}: {len(errors)} problem(s):\n  " + "\n  ".join(errors))
    return bank


def load(path: str | Path = DATA):
    """Read and validate a card YAML file."""
    import yaml

    from . import schema  # pydantic, with it: imported when a file is loaded

    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"card data not found: {path}")
    with path.open(encoding="utf-8") as fh:
        try:
            raw = schema.yaml_load(fh)
        except yaml.YAMLError as e:
            raise CardError(f"{path}: not valid YAML: {e}") from e
    return parse(raw, source=str(path))


@functools.lru_cache(maxsize=1)
def default():
    return load(DATA)


def cards_index(lang):
    """What the drill widget schedules: the topics (id, title) and the cards (id, topic, follow-ups) in page
    order. The cards' text is on the page itself (typeset math, filled values), where the widget reads it."""
    if lang not in LANGS:
        raise ValueError(f"lang must be one of {LANGS}, got {lang!r}")
    bank = default()
    return {"intervals": list(INTERVALS), "new_per_day": NEW_PER_DAY,
            "topics": [{"id": t.id, "title": getattr(t.title, lang)} for t in bank.topics],
            "cards": [{"id": c.id, "topic": c.topic, "followups": len(c.followups)}
                      for t in bank.topics for c in bank.cards if c.topic == t.id]}


# What a candidate can say out loud (issue T). A 30-second answer is 150–220 Chinese units or 70–100 English
# words; a deep answer, for "tell me more", one to two minutes at the same pace. spoken_units counts what is
# said: a Chinese unit is one Han character or one run of Latin letters and digits (a term or a number is said
# as one word); an English word is a whitespace-separated token with a letter or digit in it. A
# [[value: NAME]] counts as one word (a number), a link as its text, punctuation and markup as nothing.
SHORT_UNITS = {"zh": (150, 220), "en": (70, 100)}
DEEP_UNITS = {"zh": (300, 600), "en": (140, 280)}
# A short answer opens like a candidate talking, not like the ledger ("已更正。", "With a condition."); no card
# points at "this page", which means nothing on the practice page or in Anki; a follow-up asks about the
# subject, not about this site.
SPOKEN = Path(__file__).with_name("spoken.yml")  # the words these checks look for, in both languages


@functools.lru_cache(maxsize=1)
def _spoken_patterns() -> dict[str, re.Pattern]:
    """{'opener', 'this_page', 'about_site'}: patterns from spoken.yml (case-insensitive)."""
    import yaml

    words = yaml.safe_load(SPOKEN.read_text(encoding="utf-8"))
    def alt(key):  # an English word ends at a word boundary; Chinese has none to look for
        return "|".join(re.escape(w) + (r"\b" if w.isascii() else "")
                        for w in sorted(words[key], key=len, reverse=True))

    return {"opener": re.compile(rf"^\W*(?:{alt('verdict_openers')})", re.I),
            "this_page": re.compile(alt("this_page"), re.I),
            "about_site": re.compile(alt("about_the_site"), re.I)}


_ANY_DIRECTIVE = pattern("value", "glossary", named=None)  # a [[value: …]] is said as one number
_HAN = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_LATIN_RUN = re.compile(r"[A-Za-z0-9\u0370-\u03ff][A-Za-z0-9\u0370-\u03ff.+\-]*")


def spoken_units(text: str, lang: str) -> int:
    """How long ``text`` is when said aloud: Chinese units (zh) or English words (en); see SHORT_UNITS."""
    if lang not in LANGS:
        raise ValueError(f"lang must be one of {LANGS}, got {lang!r}")
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    t = _ANY_DIRECTIVE.sub(" N ", text)
    t = re.sub(r"\]\([^)]*\)", "] ", t)
    if lang == "zh":
        return len(_HAN.findall(t)) + len(_LATIN_RUN.findall(t))
    return sum(1 for w in t.split() if re.search(r"[A-Za-z0-9]", w))


def _question_key(text: str) -> str:
    """A question reduced to its letters, digits and Han characters."""
    return "".join(ch for ch in text.lower() if ch.isalnum())


def _same_question(a: str, b: str) -> bool:
    """Two questions that ask the same thing in nearly the same words (difflib's ratio ≥ 0.75)."""
    import difflib

    return difflib.SequenceMatcher(None, _question_key(a), _question_key(b)).ratio() >= 0.75


def _length_problems(c, lang: str) -> list[str]:
    """Card ``c``'s short and deep answers in ``lang`` whose spoken length is outside SHORT_UNITS / DEEP_UNITS."""
    out = []
    for field, (lo, hi) in (("short", SHORT_UNITS[lang]), ("deep", DEEP_UNITS[lang])):
        n = spoken_units(getattr(getattr(c, field), lang), lang)
        if not lo <= n <= hi:
            out.append(f"card {c.id!r}: {field}.{lang} is {n} {'units' if lang == 'zh' else 'words'}, "
                       f"not {lo}–{hi}")
    return out


def _voice_problems(c, lang: str, pats: dict[str, re.Pattern]) -> list[str]:
    """Card ``c`` in ``lang`` speaking as the ledger or the page: a verdict opening its short answer, "this page"."""
    out = []
    if pats["opener"].match(getattr(c.short, lang)):
        out.append(f"card {c.id!r}: short.{lang} opens with a ledger verdict: "
                   f"{getattr(c.short, lang)[:20]!r}")
    for text in c.texts(lang):
        if pats["this_page"].search(text):
            out.append(f"card {c.id!r}: {lang} says 'this page': {pats['this_page'].search(text).group(0)!r}")
    return out


def _followup_problems(c, lang: str, pats: dict[str, re.Pattern], cards) -> list[str]:
    """Card ``c``'s follow-ups in ``lang`` that ask about the site or repeat a question of another of ``cards``."""
    out = []
    for f in c.followups:
        q = getattr(f.q, lang)
        if pats["about_site"].search(q):
            out.append(f"card {c.id!r}: a {lang} follow-up asks about the site: {q[:40]!r}")
        for other in cards:
            if other.id != c.id and _same_question(q, getattr(other.question, lang)):
                out.append(f"card {c.id!r}: a {lang} follow-up repeats card {other.id!r}'s question")
    return out


def _value_problems(c) -> list[str]:
    """Card ``c``'s texts whose [[value: …]] names differ between zh and en."""
    out = []
    fields = [("question", c.question), ("short", c.short), ("deep", c.deep)]
    fields += [(f"followup {i + 1}", x) for i, f in enumerate(c.followups) for x in (f.q, f.a)]
    for name, text in fields:
        zh, en = sorted(values_used(text.zh)), sorted(values_used(text.en))
        if zh != en:
            out.append(f"card {c.id!r}: {name} uses values {zh} in zh and {en} in en")
    return out


def speakable_problems(bank=None, ids=None) -> list[str]:
    """Every way the cards (all, or those in ``ids``) fail to be something a candidate says out loud:
    lengths outside SHORT_UNITS / DEEP_UNITS, a short answer that opens with a ledger verdict, "this page"
    anywhere, a follow-up about the site, a follow-up or question that repeats another card's question, and
    the [[value: …]] names that differ between the languages of one text."""
    bank = default() if bank is None else bank
    out: list[str] = []
    for c in bank.cards:
        if ids is not None and c.id not in ids:
            continue
        for lang in LANGS:
            out += _length_problems(c, lang)
            pats = _spoken_patterns()
            out += _voice_problems(c, lang, pats)
            out += _followup_problems(c, lang, pats, bank.cards)
        out += _value_problems(c)
    for i, c in enumerate(bank.cards):
        for other in bank.cards[:i]:
            if (ids is None or c.id in ids) and _same_question(c.question.en, other.question.en):
                out.append(f"card {c.id!r}: its question repeats card {other.id!r}'s")
    return out
