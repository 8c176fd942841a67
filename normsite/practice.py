"""The practice page (练习 / Practice): the card bank as static Markdown, its checks, and the Anki deck.

``[[practice]]`` on ``docs/<lang>/practice.md`` becomes one section per topic
(``{ #topic-ID }``, the same in both languages) with one collapsible card per
question (``<details id="card-ID">``): the question, the 30-second answer, the
deep answer, the follow-ups (追问) with their answers, the evidence links and
the ledger claims. Readers without JavaScript read the bank there; the drill
widget (``overrides/assets/javascripts/widgets/practice.js``) takes each card's
text from these elements, so the math is typeset and the values filled in once,
by the build.

Before rendering, :func:`check` ties the bank to the site: every evidence link
names a page and an anchor that exist in this language's docs, every claim is
in the ledger, every ``[[value: NAME]]`` is known. Any failure, or an invalid
``cards.yml``, raises SiteError naming the card, and the build fails.

:func:`anki_deck` writes the bilingual ``.apkg`` (genanki) served beside the
page: fixed model and deck ids, note guids from the card ids, the commit's
time (SOURCE_DATE_EPOCH) as every timestamp and fixed zip dates, so two builds
of one commit give the same bytes.
"""

from __future__ import annotations

import hashlib
import html
import io
import os
import re
import sqlite3
import tempfile
import zipfile
from collections.abc import Callable
from pathlib import Path

from normref.data import cards as C

from . import SiteError, ledger

__all__ = ["DIRECTIVE", "PAGE", "APKG", "LABELS", "check", "render_markdown", "expand", "anki_deck", "counts_by_page"]

DIRECTIVE = "[[practice]]"
PAGE = "practice.md"
APKG = "normref-practice.apkg"

LABELS = {
    "zh": {"short": "30 秒回答", "deep": "深入回答", "follow": "追问", "evidence": "依据", "claims": "说法核查",
           "colon": "：", "sep": "；", "cards": "张卡片"},
    "en": {"short": "30-second answer", "deep": "Deep answer", "follow": "Follow-up", "evidence": "Evidence",
           "claims": "Claim ledger", "colon": ": ", "sep": "; ", "cards": "cards"},
}


def _bank(path: str | Path | None = None):
    try:
        return C.load(path) if path is not None else C.default()
    except (C.CardError, FileNotFoundError) as e:
        raise SiteError(f"{PAGE}: {e}") from e


def counts_by_page(bank=None) -> dict[str, int]:
    """{page: how many cards are drawn from it} (the card's ``source`` page), most first."""
    bank = bank or _bank()
    out: dict[str, int] = {}
    for c in bank.cards:
        page = c.source.split("#", 1)[0]
        out[page] = out.get(page, 0) + 1
    return dict(sorted(out.items(), key=lambda kv: (-kv[1], kv[0])))


def check(bank, lang: str, docs_dir: str | Path, known_values) -> None:
    """SiteError naming each card whose evidence anchor, claim or value does not exist."""
    docs = Path(docs_dir)
    claims = {c.id for c in ledger.load().claims}
    known = set(known_values)
    problems = []
    for c in bank.cards:
        for link in (c.source, *c.evidence):
            page, anchor = link.split("#", 1)
            f = docs / page
            if not f.is_file():
                problems.append(f"card {c.id!r}: evidence page {page!r} does not exist in docs/{lang}")
            else:
                have = ledger._anchors_of(f)
                if anchor not in have and not (page == "claims.md" and anchor.removeprefix("claim-") in claims):
                    problems.append(f"card {c.id!r}: evidence anchor #{anchor} is not on {lang}/{page}")
        for cid in c.claims:
            if cid not in claims:
                problems.append(f"card {c.id!r}: claim {cid!r} is not in the ledger (normsite/data/claims.yml)")
        for text in c.texts(lang):
            for name in C.values_used(text):
                if name not in known:
                    problems.append(f"card {c.id!r}: unknown value {name!r}")
    if problems:
        raise SiteError(f"{PAGE}: {len(problems)} problem(s) in the card bank:\n  " + "\n  ".join(problems))


def _link_label(page: str, anchor: str, docs: Path, titles: dict[str, str]) -> str:
    label = ledger._anchors_of(docs / page).get(anchor, "") if (docs / page).is_file() else ""
    title = titles.get(page, page)
    return f"{title} · {label}" if label and label != title else title


def _md(text: str) -> str:
    """A card text as one Markdown block: paragraphs kept, no leading indentation."""
    return "\n".join(line.strip() for line in text.strip().split("\n"))


def render_markdown(lang: str, docs_dir: str | Path, titles: dict[str, str] | None = None, bank=None) -> str:
    """The static card bank: one section per topic, one <details> per card."""
    if lang not in LABELS:
        raise ValueError(f"lang must be one of {tuple(LABELS)}, got {lang!r}")
    bank = bank or _bank()
    docs, L, titles = Path(docs_dir), LABELS[lang], titles or {}
    claim_text = {c.id: c.claim[lang] for c in ledger.load().claims}
    out = []
    for t in bank.topics:
        cards = [c for c in bank.cards if c.topic == t.id]
        out.append(f"### {getattr(t.title, lang)} {{ #topic-{t.id} }}\n")
        out.append(f'<p class="nr-practice__count">{len(cards)} {L["cards"]}</p>\n')
        for c in cards:
            ev = L["sep"].join(f"[{_link_label(*e.split('#', 1), docs, titles)}]({e})" for e in c.evidence)
            cl = L["sep"].join(f"[{claim_text[i]}](claims.md#claim-{i})" for i in c.claims)
            follow = "\n".join(
                f'<div class="nr-card__follow" markdown>\n\n**{L["follow"]}{L["colon"]}**{_md(getattr(f.q, lang))}\n\n'
                f'<div class="nr-card__follow-answer" markdown>\n\n{_md(getattr(f.a, lang))}\n\n</div>\n\n</div>'
                for f in c.followups)
            out.append(
                f'<details class="nr-card" id="card-{c.id}" data-nr-card="{c.id}" data-nr-topic="{c.topic}" markdown>\n'
                f'<summary class="nr-card__q" markdown="span">{_md(getattr(c.question, lang))}</summary>\n\n'
                f'<div class="nr-card__short" markdown>\n\n**{L["short"]}{L["colon"]}**{_md(getattr(c.short, lang))}\n\n</div>\n\n'
                f'<div class="nr-card__deep" markdown>\n\n**{L["deep"]}{L["colon"]}**{_md(getattr(c.deep, lang))}\n\n</div>\n\n'
                f"{follow}\n\n"
                f'<p class="nr-card__links" markdown="span">{L["evidence"]}{L["colon"]}{ev}'
                + (f'<br>{L["claims"]}{L["colon"]}{cl}' if cl else "") + "</p>\n\n"
                "</details>\n")
    return "\n".join(out)


def expand(markdown: str, lang: str, docs_dir: str | Path, titles: dict[str, str] | None = None,
           known_values=None) -> str:
    """``[[practice]]`` replaced by the checked card bank (SiteError names a bad card)."""
    if DIRECTIVE not in markdown:
        return markdown
    bank = _bank()
    if known_values is None:
        from normref import values

        known_values = values.names()
    check(bank, lang, docs_dir, known_values)
    return markdown.replace(DIRECTIVE, render_markdown(lang, docs_dir, titles, bank))


# ---------------------------------------------------------------- Anki


def _stable_id(name: str) -> int:
    """A fixed id in Anki's range for ``name`` (genanki wants 1 << 30 <= id < 1 << 31)."""
    return (1 << 30) + int(hashlib.sha256(name.encode()).hexdigest()[:8], 16) % (1 << 30)


MODEL_ID = _stable_id("normref.practice.model")
DECK_ID = _stable_id("normref.practice.deck")
DECK_NAME = "normref 归一化面试练习 · Normalization interview practice"
FIELDS = ["CardId", "Topic", "QuestionZh", "QuestionEn", "ShortZh", "ShortEn", "DeepZh", "DeepEn",
          "FollowZh", "FollowEn", "Evidence"]
_FRONT = ('<div class="zh">{{QuestionZh}}</div><hr><div class="en">{{QuestionEn}}</div>')
_BACK = ('{{FrontSide}}<hr id="answer">'
         '<div class="zh"><b>30 秒回答：</b>{{ShortZh}}<p><b>深入回答：</b>{{DeepZh}}</p>{{FollowZh}}</div><hr>'
         '<div class="en"><b>30-second answer:</b> {{ShortEn}}<p><b>Deep answer:</b> {{DeepEn}}</p>{{FollowEn}}</div>'
         '<hr><div class="evidence">{{Evidence}}</div>')
_CSS = ".card { font-family: sans-serif; font-size: 18px; text-align: left; } .en { color: #333; } .evidence { font-size: 14px; }"
_FIXED_ZIP_DATE = (1980, 1, 1, 0, 0, 0)


def _html(text: str) -> str:
    """A card text (Markdown with $math$) as HTML for Anki: math as MathJax's \\( \\) and \\[ \\]."""
    import markdown

    md = markdown.Markdown(extensions=["pymdownx.arithmatex"], extension_configs={"pymdownx.arithmatex": {"generic": True}})
    out = md.convert(_md(text))
    if out.startswith("<p>") and out.endswith("</p>") and out.count("<p>") == 1:
        out = out[3:-4]
    return out


def anki_deck(expand_values: Callable[[str, str], str], roots: dict[str, str], epoch: int | None = None, bank=None) -> bytes:
    """The bilingual deck as .apkg bytes. ``expand_values(text, lang)`` fills in [[value: NAME]];
    ``roots``: {lang: the site's root URL}, for the evidence links; ``epoch``: every timestamp (default
    SOURCE_DATE_EPOCH, else 0)."""
    import genanki

    bank = bank or _bank()
    if epoch is None:
        epoch = int(os.environ.get("SOURCE_DATE_EPOCH") or 0)
    model = genanki.Model(MODEL_ID, "normref practice (zh + en)", fields=[{"name": f} for f in FIELDS],
                          templates=[{"name": "zh + en", "qfmt": _FRONT, "afmt": _BACK}], css=_CSS)
    deck = genanki.Deck(DECK_ID, DECK_NAME)
    topics = {t.id: t for t in bank.topics}

    def text(t, lang):
        return _html(expand_values(getattr(t, lang), lang))

    def link(e: str, lang: str) -> str:
        page, anchor = e.split("#", 1)
        url = roots[lang].rstrip("/") + "/" + page.removesuffix(".md").removesuffix("index") + ("/" if page != "index.md" else "") + "#" + anchor
        return f'<a href="{html.escape(url)}">{html.escape(e)}</a>'

    for c in bank.cards:
        follow = {lang: "".join(f"<p><b>{LABELS[lang]['follow']}{LABELS[lang]['colon']}</b>{text(f.q, lang)}<br>{text(f.a, lang)}</p>"
                                for f in c.followups) for lang in ("zh", "en")}
        evidence = " · ".join(link(e, "zh") + " / " + link(e, "en").replace(">" + html.escape(e) + "<", ">en<")
                              for e in c.evidence)
        t = topics[c.topic].title
        deck.add_note(genanki.Note(
            model=model, guid=genanki.guid_for("normref.practice", c.id), tags=[f"normref::{c.topic}"],
            fields=[c.id, f"{t.zh} / {t.en}", text(c.question, "zh"), text(c.question, "en"),
                    text(c.short, "zh"), text(c.short, "en"), text(c.deep, "zh"), text(c.deep, "en"),
                    follow["zh"], follow["en"], evidence]))
    package = genanki.Package(deck)
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "collection.anki2"
        conn = sqlite3.connect(db)
        package.write_to_db(conn.cursor(), float(epoch), _ids(epoch))
        conn.commit()
        conn.execute("VACUUM")  # the same pages in the same order, whatever sqlite freed on the way
        conn.close()
        collection = db.read_bytes()
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as z:
        for name, data in (("collection.anki2", collection), ("media", b"{}")):
            info = zipfile.ZipInfo(name, date_time=_FIXED_ZIP_DATE)
            info.compress_type, info.external_attr = zipfile.ZIP_DEFLATED, 0o644 << 16
            z.writestr(info, data)
    return buf.getvalue()


def _ids(epoch: int):
    import itertools

    return itertools.count(int(epoch) * 1000)
