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

from .content import cards as C

from . import SiteError, ledger

__all__ = ["DIRECTIVE", "PAGE", "APKG", "LABELS", "check", "render_markdown", "expand", "anki_deck", "counts_by_page"]

DIRECTIVE = "[[practice]]"
PAGE = "practice.md"
APKG = "normref-practice.apkg"

LABELS = {
    "zh": {"from": "出处", "count": "卡片数", "short": "30 秒回答", "deep": "深入回答", "follow": "追问", "evidence": "依据", "claims": "说法核查",
           "colon": "：", "sep": "；", "cards": "张卡片"},
    "en": {"from": "Drawn from", "count": "Cards", "short": "30-second answer", "deep": "Deep answer", "follow": "Follow-up", "evidence": "Evidence",
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
                problems.append(f"card {c.id!r}: claim {cid!r} is not in the ledger (normsite/content/claims.yml)")
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
    out = [f"| {L['from']} | {L['count']} |", "|---|---:|"]
    out += [f"| [{titles.get(page, page)}]({page}) | {n} |" for page, n in counts_by_page(bank).items()]
    out.append("")
    for t in bank.topics:
        cards = [c for c in bank.cards if c.topic == t.id]
        out.append(f"### {getattr(t.title, lang)} {{ #topic-{t.id} }}\n")
        out.append(f'<p class="nr-practice__count">{len(cards)} {L["cards"]}</p>\n')
        for c in cards:
            ev = L["sep"].join(f"[{_link_label(*e.split('#', 1), docs, titles)}]({e})" for e in c.evidence)
            cl = L["sep"].join(f"[{claim_text[i]}](claims.md#claim-{i})" for i in c.claims)
            follow = "\n".join(
                f'<div class="nr-card__follow" markdown>\n\n**{L["follow"]}**{L["colon"]}{_md(getattr(f.q, lang))}\n\n'
                f'<div class="nr-card__follow-answer" markdown>\n\n{_md(getattr(f.a, lang))}\n\n</div>\n\n</div>'
                for f in c.followups)
            out.append(
                f'<details class="nr-card" id="card-{c.id}" data-nr-card="{c.id}" data-nr-topic="{c.topic}" markdown>\n'
                f'<summary class="nr-card__q" markdown="span">{_md(getattr(c.question, lang))}</summary>\n\n'
                f'<div class="nr-card__short" markdown>\n\n**{L["short"]}**{L["colon"]}{_md(getattr(c.short, lang))}\n\n</div>\n\n'
                f'<div class="nr-card__deep" markdown>\n\n**{L["deep"]}**{L["colon"]}{_md(getattr(c.deep, lang))}\n\n</div>\n\n'
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


_SEP = "\n\n\u241e\n\n"  # between card texts expanded in one call (no directive spans it)


def _converter():
    import markdown

    return markdown.Markdown(extensions=["pymdownx.arithmatex"],
                             extension_configs={"pymdownx.arithmatex": {"generic": True}})


def _html(md, text: str) -> str:
    """A card text (Markdown with $math$) as HTML for Anki: math as MathJax's \\( \\) and \\[ \\]."""
    out = md.reset().convert(_md(text))
    if out.startswith("<p>") and out.endswith("</p>") and out.count("<p>") == 1:
        out = out[3:-4]
    return out


def _texts(c, lang: str) -> list[str]:
    """A card's texts in one language, in a fixed order: question, short, deep, then each follow-up's q and a."""
    return c.texts(lang)


def anki_deck(expand_values: Callable[[str, str], str], roots: dict[str, str], epoch: int | None = None, bank=None) -> bytes:
    """The bilingual deck as .apkg bytes. ``expand_values(text, lang)`` fills in [[value: NAME]];
    ``roots``: {lang: the site's root URL}, for the evidence links; ``epoch``: every timestamp (default
    SOURCE_DATE_EPOCH, else 0). Cached by content (normsite.stepcache): the texts with their values filled
    in, the topics, the evidence, the roots and the epoch."""
    import base64
    import json

    from . import stepcache

    bank = bank or _bank()
    if epoch is None:
        epoch = int(os.environ.get("SOURCE_DATE_EPOCH") or 0)
    texts = {}
    for lang in ("zh", "en"):  # one expansion per language: every card's texts joined
        flat = [t for c in bank.cards for t in _texts(c, lang)]
        out = expand_values(_SEP.join(flat), lang).split(_SEP)
        if len(out) != len(flat):
            raise SiteError(f"{PAGE}: a card text expanded into a different number of texts")
        texts[lang] = out
    cards = [{"id": c.id, "topic": c.topic, "evidence": list(c.evidence),
              "n": len(_texts(c, "zh"))} for c in bank.cards]
    topics = {t.id: f"{t.title.zh} / {t.title.en}" for t in bank.topics}
    payload = json.dumps({"texts": texts, "cards": cards, "topics": topics, "roots": roots, "epoch": int(epoch)},
                         ensure_ascii=False, sort_keys=True)
    data = stepcache.cached("anki", APKG, {"cards": payload}, lambda: base64.b64encode(_build_deck(json.loads(payload))).decode(),
                            modules=("normsite.practice",), libs=("genanki", "markdown", "pymdown-extensions"))
    return base64.b64decode(data)


def _build_deck(p: dict) -> bytes:
    import genanki

    model = genanki.Model(MODEL_ID, "normref practice (zh + en)", fields=[{"name": f} for f in FIELDS],
                          templates=[{"name": "zh + en", "qfmt": _FRONT, "afmt": _BACK}], css=_CSS)
    deck = genanki.Deck(DECK_ID, DECK_NAME)
    md = _converter()
    html_of = {lang: [_html(md, t) for t in p["texts"][lang]] for lang in ("zh", "en")}

    def link(e: str, lang: str, label: str) -> str:
        page, anchor = e.split("#", 1)
        path = "" if page == "index.md" else page.removesuffix(".md") + "/"
        return f'<a href="{html.escape(p["roots"][lang].rstrip("/") + "/" + path + "#" + anchor)}">{html.escape(label)}</a>'

    i = 0
    for c in p["cards"]:
        h = {lang: html_of[lang][i:i + c["n"]] for lang in ("zh", "en")}
        i += c["n"]
        follow = {lang: "".join(f"<p><b>{LABELS[lang]['follow']}{LABELS[lang]['colon']}</b>{h[lang][k]}<br>{h[lang][k + 1]}</p>"
                                for k in range(3, c["n"], 2)) for lang in ("zh", "en")}
        evidence = " · ".join(link(e, "zh", e) + " / " + link(e, "en", "en") for e in c["evidence"])
        deck.add_note(genanki.Note(
            model=model, guid=genanki.guid_for("normref.practice", c["id"]), tags=[f"normref::{c['topic']}"],
            fields=[c["id"], p["topics"][c["topic"]], h["zh"][0], h["en"][0], h["zh"][1], h["en"][1],
                    h["zh"][2], h["en"][2], follow["zh"], follow["en"], evidence]))
    package = genanki.Package(deck)
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "collection.anki2"
        conn = sqlite3.connect(db)
        package.write_to_db(conn.cursor(), float(p["epoch"]), _ids(p["epoch"]))
        conn.commit()
        conn.execute("VACUUM")  # the same pages in the same order, whatever sqlite freed on the way
        conn.close()
        collection = db.read_bytes()
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as z:
        for name, data in (("collection.anki2", collection), ("media", b"{}")):
            info = zipfile.ZipInfo(name, date_time=_FIXED_ZIP_DATE)  # not the clock: the same bytes every build
            info.compress_type, info.external_attr = zipfile.ZIP_DEFLATED, 0o644 << 16
            z.writestr(info, data)
    return buf.getvalue()


def _ids(epoch: int):
    import itertools

    return itertools.count(int(epoch) * 1000)
