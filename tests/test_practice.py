"""The practice page's card bank (normsite/content/cards.yml), its checks, its rendering and the Anki deck.

The drill widget itself is tested in Chromium (test_practice_browser.py).
"""

from __future__ import annotations

import copy
import io
import re
import sqlite3
import zipfile
from pathlib import Path

import pytest
import yaml

from normsite.content import cards as C
from normsite import SiteError, ledger, practice
from support import LANGS

ROOT = Path(__file__).resolve().parent.parent
DOCS = {"zh": ROOT / "docs" / "zh", "en": ROOT / "docs" / "en"}


@pytest.fixture(scope="module")
def raw():
    return yaml.safe_load(C.DATA.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def bank():
    return C.load()


# ---------------------------------------------------------------- the bank


def test_at_least_60_cards_each_complete_in_both_languages(bank):
    assert len(bank.cards) >= 60
    for c in bank.cards:
        for lang in LANGS:
            texts = c.texts(lang)
            assert all(t.strip() for t in texts), c.id
            assert len(texts) == 3 + 2 * len(c.followups)
        assert 1 <= len(c.followups) <= 2 and c.evidence, c.id
    assert {c.topic for c in bank.cards} == {t.id for t in bank.topics}


def test_cards_come_from_every_source_the_issue_names(bank):
    pages = practice.counts_by_page(bank)
    assert sum(pages.values()) == len(bank.cards)
    sections = {c.source for c in bank.cards}
    assert "interview.md#quiz" in sections  # the quiz
    for page in ("formulas.md", "toll-booth.md", "placement.md"):  # every page's exercises
        assert f"{page}#exercises" in sections, page
    assert "real-models.md#exercise" in sections
    assert {"k3-latentmoe.md#self-test", "performance.md#check-yourself", "interview.md#self-test"} <= sections
    assert {"placement.md#post-ln", "placement.md#deepnorm", "placement.md#mix-ln"} <= sections  # the lab
    assert pages["claims.md"] >= 8 and pages["interview.md"] >= 10


def test_every_claim_whose_verdict_surprises_has_a_card(bank):
    """One card per claim whose verdict is not a plain "holds"; a card drawn from the ledger is about such a claim."""
    claims = {c.id: c for c in ledger.load().claims}
    used = {cid for c in bank.cards for cid in c.claims}
    assert used <= set(claims), sorted(used - set(claims))
    surprising = {cid for cid, c in claims.items() if c.verdict != "holds"}
    assert surprising <= used, sorted(surprising - used)
    for c in bank.cards:
        if c.source.startswith("claims.md#claim-"):
            cid = c.source.removeprefix("claims.md#claim-")
            assert cid in surprising and cid in c.claims, c.id


def test_every_evidence_anchor_exists_in_both_languages(bank):
    from normref import values

    for lang in LANGS:
        practice.check(bank, lang, DOCS[lang], values.names())


def test_no_typed_numbers_and_every_value_is_known(bank):
    from normref import values

    known = set(values.names())
    for c in bank.cards:
        for lang in LANGS:
            for t in c.texts(lang):
                assert not C.typed_numbers(t), (c.id, lang, C.typed_numbers(t))
                assert set(C.values_used(t)) <= known, (c.id, set(C.values_used(t)) - known)
    # the scan sees a measurement typed into prose, not one inside a directive, math, code or a model name
    assert C.typed_numbers("the stream grows 182.3 times") == ["182.3"]
    assert C.typed_numbers("取 0.37 左右") == ["0.37"]
    assert not C.typed_numbers("[[value: grad.post_growth]] times in SmolLM2-135M, $d = 576$, `n_layer=24`, 8.45 BLEU")


def test_the_cards_dataset_is_the_bank_in_page_order(bank):
    from normref import data as nrdata

    for lang in LANGS:
        d = nrdata.get("cards", lang)
        assert [t["id"] for t in d["topics"]] == [t.id for t in bank.topics]
        assert sorted(c["id"] for c in d["cards"]) == sorted(c.id for c in bank.cards)
        assert [c["topic"] for c in d["cards"]] == sorted((c["topic"] for c in d["cards"]),
                                                          key=[t.id for t in bank.topics].index)
        assert d["intervals"] == list(C.INTERVALS) and d["new_per_day"] == C.NEW_PER_DAY
        assert all(c["followups"] == len(next(b for b in bank.cards if b.id == c["id"]).followups) for c in d["cards"])
    with pytest.raises(ValueError, match="lang"):
        nrdata.get("cards", "fr")


# ---------------------------------------------------------------- the validator


@pytest.mark.parametrize("mutate, message", [
    (lambda c: c["question"].pop("en"), "card 'why-pre-rmsnorm', field 'question.en': Field required"),
    (lambda c: c["short"].update(zh="Post-LN 的梯度大 182.3 倍"), "card 'why-pre-rmsnorm', field 'short.zh': Value error, typed number(s) ['182.3']"),
    (lambda c: c.update(extra=1), "card 'why-pre-rmsnorm', field 'extra': Extra inputs are not permitted"),
    (lambda c: c.update(evidence=["interview.md"]), "card 'why-pre-rmsnorm', field 'evidence': Value error, evidence 'interview.md' must be a link 'page.md#anchor'"),
    (lambda c: c.update(followups=[]), "card 'why-pre-rmsnorm', field 'followups': Tuple should have at least 1 item"),
    (lambda c: c.update(topic="nowhere"), "card 'why-pre-rmsnorm', field 'topic': 'nowhere' is not one of the topics"),
    (lambda c: c.update(id="Bad Id"), "card 'Bad Id', field 'id': String should match pattern"),
])
def test_validator_names_the_card_and_the_field(raw, mutate, message):
    bad = copy.deepcopy(raw)
    mutate(bad["cards"][0])
    with pytest.raises(C.CardError, match=re.escape(message)):
        C.parse(bad)


def test_duplicate_ids_and_bad_yaml_are_rejected(raw, tmp_path):
    bad = copy.deepcopy(raw)
    bad["cards"].append(copy.deepcopy(bad["cards"][0]))
    with pytest.raises(C.CardError, match="card 'why-pre-rmsnorm': duplicate id"):
        C.parse(bad)
    f = tmp_path / "cards.yml"
    f.write_text("cards: [\n", encoding="utf-8")
    with pytest.raises(C.CardError, match="not valid YAML"):
        C.load(f)


def test_a_broken_anchor_claim_or_value_names_the_card(bank):
    card = bank.cards[0]
    broken = card.model_copy(update={"evidence": ("interview.md#no-such-section",), "claims": ("no-such-claim",)})
    bad = bank.model_copy(update={"cards": (broken,)})
    with pytest.raises(SiteError) as e:
        practice.check(bad, "en", DOCS["en"], [])
    msg = str(e.value)
    assert f"card {card.id!r}: evidence anchor #no-such-section is not on en/interview.md" in msg
    assert f"card {card.id!r}: claim 'no-such-claim' is not in the ledger" in msg


def test_a_bad_card_file_fails_the_build(raw, tmp_path, monkeypatch):
    """The hook's page step (Site.page_markdown) raises SiteError, which fails the MkDocs build."""
    from normsite.build import Site

    bad = copy.deepcopy(raw)
    bad["cards"][3]["deep"]["en"] = "It is 3.7 times larger."
    f = tmp_path / "cards.yml"
    f.write_text(yaml.safe_dump(bad, allow_unicode=True), encoding="utf-8")
    monkeypatch.setattr(C, "default", lambda: C.load(f))
    site = Site("en", DOCS["en"], generated=False)
    with pytest.raises(SiteError, match=r"card '[a-z0-9-]+', field 'deep.en': Value error, typed number\(s\) \['3.7'\]"):
        site.page_markdown("# Practice\n\n[[practice]]\n", "practice.md", ["practice.md"])


# ---------------------------------------------------------------- the static page


@pytest.mark.parametrize("lang", LANGS)
def test_static_cards_have_the_same_ids_in_both_languages(bank, lang):
    md = practice.render_markdown(lang, DOCS[lang], {})
    assert re.findall(r'id="card-([a-z0-9-]+)"', md) == [c.id for t in bank.topics for c in bank.cards if c.topic == t.id]
    assert re.findall(r"\{ #topic-([a-z0-9-]+) \}", md) == [t.id for t in bank.topics]
    assert md.count('class="nr-card__follow"') == sum(len(c.followups) for c in bank.cards)
    for c in bank.cards:
        for e in c.evidence:
            assert f"]({e})" in md


def test_both_practice_pages_have_the_same_sections():
    ids = {lang: re.findall(r"\{ #([\w-]+) \}", (DOCS[lang] / "practice.md").read_text(encoding="utf-8")) for lang in LANGS}
    assert ids["zh"] == ids["en"] == ["practice", "how-to", "drill", "anki", "cards"]
    for lang in LANGS:
        text = (DOCS[lang] / "practice.md").read_text(encoding="utf-8")
        assert "[[practice]]" in text and "[[data: cards]]" in text and f"]({practice.APKG})" in text


# ---------------------------------------------------------------- Anki


def _open_deck(data: bytes, tmp_path: Path) -> sqlite3.Connection:
    z = zipfile.ZipFile(io.BytesIO(data))
    assert sorted(z.namelist()) == ["collection.anki2", "media"]
    assert all(i.date_time == (1980, 1, 1, 0, 0, 0) for i in z.infolist())
    db = tmp_path / "collection.anki2"
    db.write_bytes(z.read("collection.anki2"))
    conn = sqlite3.connect(db)
    assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    return conn


def _check_collection(conn: sqlite3.Connection, bank) -> None:
    """Every card is one note of the deck, under a guid that follows its id, with its values filled in and
    its math MathJax's."""
    import genanki

    notes = conn.execute("SELECT guid, flds, tags FROM notes").fetchall()
    assert len(notes) == len(bank.cards) == conn.execute("SELECT count(*) FROM cards").fetchone()[0]
    by_guid = {g: f.split("\x1f") for g, f, _ in notes}
    for c in bank.cards:
        fields = by_guid[genanki.guid_for("normref.practice", c.id)]  # the guid follows the card id
        assert fields[0] == c.id and len(fields) == len(practice.FIELDS)
        assert "[[value" not in "".join(fields) and "$" not in fields[2] + fields[3]
    col_models = conn.execute("SELECT models, decks FROM col").fetchone()
    assert str(practice.MODEL_ID) in col_models[0] and str(practice.DECK_ID) in col_models[1]
    # values are filled in, math is MathJax's: the deep answer of "identity-path" in both languages
    f = by_guid[genanki.guid_for("normref.practice", "identity-path")]
    assert re.search(r"\d", f[6]) and re.search(r"\d", f[7]) and "\\(" in f[7]
    assert practice.MODEL_ID == practice._stable_id("normref.practice.model")  # stable across builds and machines


def _stand_in_values(text: str, lang: str) -> str:
    """Every [[value: NAME]] as one stand-in number: the deck's own code on the real bank, with none of the
    experiments the values come from (the build computes those; the tests of the built deck read its values)."""
    return re.sub(r"\[\[value:[^\]]*\]\]", "1.25", text)


ROOTS = {"zh": "http://127.0.0.1:8000/", "en": "http://127.0.0.1:8000/en/"}


def test_anki_deck_of_stand_in_values_is_a_valid_collection_made_the_same_each_time(bank, tmp_path):
    """The fast tier's test of the deck: every card, its fields and ids, and the same bytes for the same
    epoch (another epoch changes them), with stand-in values."""
    first = practice.anki_deck(_stand_in_values, ROOTS, epoch=1_700_000_000)
    _check_collection(_open_deck(first, tmp_path), bank)
    assert practice.anki_deck(_stand_in_values, ROOTS, epoch=1_700_000_000) == first
    assert practice.anki_deck(_stand_in_values, ROOTS, epoch=1_700_000_001) != first  # the timestamp is in it


@pytest.fixture(scope="module")
def deck_bytes(built_cache):
    """The deck with the real values, made twice for one epoch. The values are read from the session's cache,
    where the build computed them for its own deck (cold, they cost every experiment a card quotes)."""
    from normsite import directives, release

    roots = release.site_urls("zh", "http://127.0.0.1:8000/")[1]["roots"]
    expand = lambda text, lang: directives.expand(text, lang, practice.PAGE)  # noqa: E731
    return practice.anki_deck(expand, roots, epoch=1_700_000_000), practice.anki_deck(expand, roots, epoch=1_700_000_000)


def test_anki_deck_is_a_valid_collection_with_every_card(site, bank, tmp_path):
    """The deck the build made (the one readers download), with the real values."""
    _check_collection(_open_deck((site / practice.APKG).read_bytes(), tmp_path), bank)


def test_anki_deck_bytes_are_the_same_for_the_same_commit(deck_bytes):
    assert deck_bytes[0] == deck_bytes[1]
    from normsite import directives, release

    roots = release.site_urls("zh", "http://127.0.0.1:8000/")[1]["roots"]
    later = practice.anki_deck(lambda t, lang: directives.expand(t, lang, practice.PAGE), roots, epoch=1_700_000_001)
    assert later != deck_bytes[0]  # the timestamp is in it: not constant bytes by accident


# ---------------------------------------------------------------- the built site


def test_built_practice_pages_link_the_deck_and_every_anchor_exists(site, bank, tmp_path):
    """Every evidence link of every card resolves to an element id on the built page, in both languages; the
    deck served from each build is the same file and a valid collection."""
    decks = [(site / practice.APKG).read_bytes(), (site / "en" / practice.APKG).read_bytes()]
    assert decks[0] == decks[1]
    conn = _open_deck(decks[0], tmp_path)
    assert conn.execute("SELECT count(*) FROM notes").fetchone()[0] == len(bank.cards)
    for lang, root in (("zh", site), ("en", site / "en")):
        page = (root / "practice" / "index.html").read_text(encoding="utf-8")
        assert f'href="../{practice.APKG}"' in page
        assert len(re.findall(r'<details class="nr-card"', page)) == len(bank.cards)
        assert "[[value" not in page
        ids: dict[str, set[str]] = {}
        for c in bank.cards:
            for e in (*c.evidence, c.source, *(f"claims.md#claim-{i}" for i in c.claims)):
                p, anchor = e.split("#", 1)
                if p not in ids:
                    html_file = root / ("index.html" if p == "index.md" else p.removesuffix(".md") + "/index.html")
                    ids[p] = set(re.findall(r'\bid="([^"]+)"', html_file.read_text(encoding="utf-8")))
                assert anchor in ids[p], f"{lang}: card {c.id}: #{anchor} is not on the built {p}"
