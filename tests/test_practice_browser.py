"""The practice page's drill in Chromium: keyboard only, Leitner scheduling over simulated days (an injected
clock), persistence across reloads, export / import / reset, the mock interview, both languages, and the
static cards without JavaScript.

The widget reads window.nrPracticeNow() and window.nrPracticeRandom() when they exist; an init script of this
module's tab defines them from localStorage keys the tests set, so a reload keeps the simulated day.
"""

from __future__ import annotations

import json

import pytest

from support import LANGS, axe_violations, contrast

SEL = '[data-nr-widget="practice"]'
DAY_MS = 86_400_000
T0 = 1_900_000_000_000  # a fixed "now" for day 0 (ms), far from the machine's clock
INIT = ("window.nrPracticeNow = () => Number(localStorage.getItem('nr.test.now') || Date.now());"
        "window.nrPracticeRandom = () => Number(localStorage.getItem('nr.test.rand') || Math.random());")


@pytest.fixture(scope="module")
def cards():
    from normref import data as nrdata

    return {lang: nrdata.get("cards", lang) for lang in LANGS}


@pytest.fixture
def drill(clean_tab, served):
    """(page, open(lang, day)): the practice page with no stored progress, at simulated day `day`."""
    page = clean_tab.page
    if not getattr(clean_tab, "_practice_init", False):
        page.context.add_init_script(INIT)
        clean_tab._practice_init = True
    first = {"done": False}

    def open_at(lang: str, day: int, rand: float | None = None):
        clean_tab.goto(served.url(lang, "practice/"))
        if not first["done"]:
            page.evaluate("localStorage.clear()")
            first["done"] = True
        page.evaluate("([t, r]) => { localStorage.setItem('nr.test.now', String(t));"
                      " if (r === null) localStorage.removeItem('nr.test.rand'); else localStorage.setItem('nr.test.rand', String(r)); }",
                      [T0 + day * DAY_MS, rand])
        clean_tab.goto(served.url(lang, "practice/"))
        page.wait_for_selector(f"{SEL} .nr-practice__card")
        return page

    yield page, open_at
    page.evaluate("localStorage.clear()")


def _label(page, key: str) -> str:
    return page.get_attribute(SEL, f"data-label-{key}")


def _state(page) -> dict:
    return page.evaluate("() => __md_get('nr.practice')")


def _updates(page) -> int:
    return int(page.get_attribute(SEL, "data-nr-updates") or 0)


def _status(page) -> str:
    return page.inner_text(f"{SEL} .nr-practice__status")


def _current(page) -> str:
    return page.get_attribute(SEL, "data-nr-card")


def _press(page, key: str) -> str:
    """Press one key; exactly one live sentence follows; return it."""
    before = _updates(page)
    page.keyboard.press(key)
    page.wait_for_function("([s, n]) => Number(document.querySelector(s).dataset.nrUpdates) > n", arg=[SEL, before])
    assert _updates(page) == before + 1, f"{key}: more than one announcement"
    return _status(page)


def _today(page) -> int:
    return page.evaluate("() => { const t = window.nrPracticeNow(); return Math.floor((t - new Date(t).getTimezoneOffset() * 60000) / 864e5); }")


@pytest.mark.parametrize("lang", LANGS)
def test_drill_keyboard_only_schedules_over_days_and_persists(drill, cards, lang):
    page, open_at = drill
    data = cards[lang]
    order = [c["id"] for c in data["cards"]]
    page = open_at(lang, 0)
    assert not page.locator(SEL).is_hidden()
    n_new = data["new_per_day"]
    assert _current(page) == order[0]
    page.locator(f"{SEL} .nr-practice__card").focus()  # keyboard from here on
    day0 = _today(page)

    # Day 0: the first new cards, graded Easy, Good, Hard, Again, then Good; Again comes back at the end.
    grades = {order[0]: "4", order[1]: "3", order[2]: "2", order[3]: "1"}
    seen = []
    while _current(page):
        cid = _current(page)
        assert page.locator(f"{SEL} .nr-practice__answer").is_hidden()
        revealed = _press(page, "Space")
        assert revealed == _label(page, "status-revealed")
        assert page.locator(f"{SEL} .nr-practice__answer").is_visible()
        key = grades.pop(cid, "3")
        said = _press(page, key)
        if key == "1":
            assert said == _label(page, "status-again")
        else:
            assert said.startswith(_label(page, "status-graded").split("{")[0]), said
        seen.append(cid)
    assert seen == order[:n_new] + [order[3]]  # the Again card came back once, graded Good
    # The day's new cards are used up and the rest wait: the end says so (no button for all topics).
    assert page.inner_text(f"{SEL} .nr-practice__done") == _label(page, "done-limit").replace(
        "{n}", str(len(order) - n_new)).replace("{limit}", str(n_new))
    assert page.locator(f"{SEL} .nr-practice__study-new").count() == 0
    st = _state(page)["cards"]
    iv = data["intervals"]
    assert st[order[0]]["box"] == 2 and st[order[0]]["due"] == day0 + iv[1]  # Easy: two boxes up
    assert st[order[1]]["box"] == 1 and st[order[1]]["due"] == day0 + iv[0]  # Good
    assert st[order[2]]["box"] == 1 and st[order[2]]["due"] == day0 + iv[0]  # Hard on a new card: box 1
    assert st[order[3]]["box"] == 2 and st[order[3]]["due"] == day0 + iv[1]  # Again, then Good
    assert len(st) == n_new

    # Persistence: a reload on the same day finds the same progress and nothing left to do.
    page = open_at(lang, 0)
    assert _current(page) == "" and _state(page)["cards"] == st
    topic0 = data["cards"][0]["topic"]
    row = page.locator(f'{SEL} tr[data-nr-topic="{topic0}"]')
    n_topic = sum(c["topic"] == topic0 for c in data["cards"])
    assert row.locator("[data-nr-seen]").inner_text() == f"{sum(c['topic'] == topic0 for c in data['cards'][:n_new])} / {n_topic}"

    # Day 1: the cards in box 1 are due first (page order), then a new day's new cards.
    page = open_at(lang, 1)
    box1 = [cid for cid in order if cid in st and st[cid]["box"] == 1]
    assert _current(page) == box1[0]
    page.locator(f"{SEL} .nr-practice__card").focus()
    _press(page, "Space")
    _press(page, "3")
    assert _current(page) == box1[1]
    assert _state(page)["cards"][box1[0]] == {"box": 2, "due": day0 + 1 + iv[1], "seen": 2, "last": day0 + 1}

    # Day 2: the two cards that went to box 2 on day 0 are due now, behind the box-1 cards left over from day 1
    # (the most overdue come first); the one graded Good on day 1 is not due before day 3.
    page = open_at(lang, 2)
    assert _current(page) == box1[1]
    due = sum(int(t) for t in page.locator(f"{SEL} [data-nr-due]").all_inner_texts())
    assert due == len(box1) - 1 + 2


@pytest.mark.parametrize("lang", LANGS)
def test_topic_choice_and_progress_per_topic(drill, cards, lang):
    page, open_at = drill
    data = cards[lang]
    page = open_at(lang, 0)
    last = data["topics"][-1]
    page.locator(f"{SEL} select").focus()
    page.keyboard.press("End")  # a select takes the keyboard: End picks the last topic
    page.wait_for_function("(s) => document.querySelector(s).dataset.nrCard !== ''", arg=SEL)
    assert page.eval_on_selector(f"{SEL} select", "s => s.value") == last["id"]
    assert last["title"] in _status(page)
    first = next(c["id"] for c in data["cards"] if c["topic"] == last["id"])
    assert _current(page) == first
    page.locator(f"{SEL} .nr-practice__card").focus()
    _press(page, "Space")
    _press(page, "4")
    row = page.locator(f'{SEL} tr[data-nr-topic="{last["id"]}"]')
    assert row.locator("[data-nr-seen]").inner_text().startswith("1 / ")
    other = page.locator(f'{SEL} tr[data-nr-topic="{data["topics"][0]["id"]}"]')
    assert other.locator("[data-nr-seen]").inner_text().startswith("0 / ")


@pytest.mark.parametrize("lang", LANGS)
def test_a_topic_held_back_by_the_daily_limit_says_why_and_offers_its_new_cards(drill, cards, lang):
    """Browser review D7: after the day's new cards, a topic with unseen cards showed "0 due … come back
    tomorrow" without the reason. It names the daily limit, and a button queues that topic's new cards."""
    page, open_at = drill
    data = cards[lang]
    n_new, order = data["new_per_day"], [c["id"] for c in data["cards"]]
    page = open_at(lang, 0)
    page.locator(f"{SEL} .nr-practice__card").focus()
    while _current(page):  # the day's new cards, all topics, graded Good
        _press(page, "Space")
        _press(page, "3")
    assert len(_state(page)["cards"]) == n_new
    seen = set(order[:n_new])
    topic = next(t for t in data["topics"]
                 if any(c["topic"] == t["id"] and c["id"] not in seen for c in data["cards"]))
    waiting = [c["id"] for c in data["cards"] if c["topic"] == topic["id"] and c["id"] not in seen]
    page.select_option(f"{SEL} select", topic["id"])
    page.wait_for_function("(s) => document.querySelector(s + ' .nr-practice__done')", arg=SEL)
    said = _label(page, "done-limit-topic").replace("{n}", str(len(waiting))).replace("{limit}", str(n_new))
    assert page.inner_text(f"{SEL} .nr-practice__done") == said
    assert said in _status(page) and topic["title"] in _status(page)  # the live region says it too
    button = page.locator(f"{SEL} .nr-practice__study-new")
    assert button.inner_text() == _label(page, "study-new").replace("{n}", str(len(waiting)))
    button.focus()
    before = _updates(page)
    page.keyboard.press("Space")  # a button: Space presses it (the drill's Space shortcut leaves it alone)
    page.wait_for_function("([s, n]) => Number(document.querySelector(s).dataset.nrUpdates) > n", arg=[SEL, before])
    assert _current(page) == waiting[0]
    assert _status(page) == _label(page, "status-card").replace("{n}", "1").replace(
        "{total}", str(len(waiting))).replace("{topic}", topic["title"])
    got = []
    while _current(page):
        got.append(_current(page))
        _press(page, "Space")
        _press(page, "3")
    assert got == waiting and page.locator(f"{SEL} .nr-practice__study-new").count() == 0
    assert page.inner_text(f"{SEL} .nr-practice__done") == _label(page, "done")
    # Another topic: the limit holds again.
    page.select_option(f"{SEL} select", "")
    page.wait_for_function("(s) => document.querySelector(s + ' .nr-practice__done')", arg=SEL)
    assert page.inner_text(f"{SEL} .nr-practice__done") == _label(page, "done-limit").replace(
        "{n}", str(len(order) - n_new - len(waiting))).replace("{limit}", str(n_new))


@pytest.mark.parametrize("lang", LANGS)
def test_mock_interview_chains_the_follow_ups_and_shows_the_deep_answer_last(drill, cards, lang):
    page, open_at = drill
    page = open_at(lang, 0, rand=0.0)  # the first card
    first = cards[lang]["cards"][0]
    page.locator(f"{SEL} .nr-practice__mode").focus()
    page.keyboard.press("Enter")
    assert page.get_attribute(SEL, "data-nr-mode") == "mock"
    assert _current(page) == first["id"]
    steps = int(page.get_attribute(SEL, "data-nr-steps"))
    assert steps == 3 + 2 * first["followups"]
    card = page.locator(f"{SEL} .nr-practice__card")
    assert card.locator(".nr-card__deep").count() == 0 and card.locator(".nr-card__short").count() == 0
    page.locator(f"{SEL} .nr-practice__card").focus()
    title = next(t["title"] for t in cards[lang]["topics"] if t["id"] == first["topic"])
    for step in range(2, steps + 1):
        said = _press(page, "Space")
        assert said == _label(page, "status-mock").replace("{topic}", title).replace(
            "{steps}", str(steps)).replace("{step}", str(step))
        assert card.locator(".nr-card__short").count() == 1
        assert (card.locator(".nr-card__deep").count() == 1) == (step == steps), step
    assert card.locator(".nr-practice__step").last.get_attribute("class").startswith("nr-card__deep")
    assert card.locator(".nr-card__follow").count() == first["followups"]
    _press(page, "Space")  # another question
    assert int(page.get_attribute(SEL, "data-nr-step")) == 1
    assert _state(page) is None or not _state(page)["cards"]  # a mock interview grades nothing


@pytest.mark.parametrize("lang", LANGS)
def test_export_reset_and_import_progress(drill, cards, lang, tmp_path):
    page, open_at = drill
    page = open_at(lang, 0)
    page.locator(f"{SEL} .nr-practice__card").focus()
    for key in ("Space", "3", "Space", "4"):
        _press(page, key)
    saved = _state(page)
    with page.expect_download() as dl:
        page.locator(f"{SEL} .nr-practice__export").focus()
        page.keyboard.press("Enter")
    path = tmp_path / "progress.json"
    dl.value.save_as(path)
    assert json.loads(path.read_text())["cards"] == saved["cards"]
    assert _status(page) == _label(page, "status-exported")

    reset = page.locator(f"{SEL} .nr-practice__reset")
    reset.focus()
    page.keyboard.press("Enter")
    assert reset.inner_text() == _label(page, "confirm") and _state(page)["cards"] == saved["cards"]
    page.keyboard.press("Enter")
    assert _state(page)["cards"] == {} and _status(page) == _label(page, "status-reset")
    assert _current(page) == cards[lang]["cards"][0]["id"]

    page.locator(f"{SEL} .nr-practice__file").set_input_files(str(path))
    page.wait_for_function("(s) => Object.keys(__md_get('nr.practice').cards).length === 2", arg=SEL)
    assert _status(page) == _label(page, "status-imported").replace("{n}", "2")
    assert _state(page)["cards"] == saved["cards"]

    bad = tmp_path / "bad.json"
    bad.write_text('{"cards": {}}')
    page.locator(f"{SEL} .nr-practice__file").set_input_files(str(bad))
    page.wait_for_function("([s, t]) => document.querySelector(s + ' .nr-practice__status').textContent === t",
                           arg=[SEL, _label(page, "status-import-error")])
    assert _state(page)["cards"] == saved["cards"]  # a bad file changes nothing


def test_progress_is_shared_by_both_languages(drill, cards):
    page, open_at = drill
    page = open_at("zh", 0)
    page.locator(f"{SEL} .nr-practice__card").focus()
    _press(page, "Space")
    _press(page, "3")
    page = open_at("en", 0)
    assert _current(page) == cards["en"]["cards"][1]["id"]  # the card graded in Chinese is done in English too


def test_static_cards_without_javascript(browser, served, cards):
    ctx = browser.new_context(java_script_enabled=False)
    try:
        page = ctx.new_page()
        for lang in LANGS:
            page.goto(served.url(lang, "practice/"))
            assert page.locator("details.nr-card").count() == len(cards[lang]["cards"])
            assert page.locator(SEL).is_hidden()
            page.locator("details.nr-card summary").first.click()
            assert page.locator("details.nr-card .nr-card__deep").first.is_visible()
    finally:
        ctx.close()


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("scheme", ["default", "slate"])
def test_drill_is_accessible_and_legible_in_light_and_dark(drill, clean_tab, lang, scheme):
    """axe-core finds nothing serious in the revealed card, and its text stands out from the background."""
    page, open_at = drill
    clean_tab.set_scheme(scheme)
    try:
        page = open_at(lang, 0)
        clean_tab.scheme_is(scheme)
        page.locator(f"{SEL} .nr-practice__card").focus()
        _press(page, "Space")
        assert not axe_violations(page, context=SEL)
        got = contrast(page, SEL)
        assert got["n"] >= 3 and got["worst"][0][0] >= 4.5, got["worst"][:3]
    finally:
        clean_tab.set_scheme("default")


@pytest.mark.parametrize("lang", LANGS)
def test_drill_mounts_after_instant_navigation(drill, clean_tab, served, lang):
    page, open_at = drill
    open_at(lang, 0)
    clean_tab.goto(served.url(lang))
    clean_tab.mark()
    clean_tab.instant(served.url(lang, "practice/"))
    assert clean_tab.marked(), "instant navigation did not happen"
    page.wait_for_selector(f"{SEL} .nr-practice__card")
    assert page.locator(f"{SEL} .nr-widget__title").count() == 1
    page.locator(f"{SEL} .nr-practice__card").focus()
    assert _press(page, "Space") == _label(page, "status-revealed")
    assert not clean_tab.errors, clean_tab.errors
