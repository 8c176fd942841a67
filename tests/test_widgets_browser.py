"""The widgets in a real browser (Chromium via Playwright).

Softmax saturation (formulas), layer explorer (real-models), quiz (interview)
and glossary filter (glossary): each is driven with the keyboard (and with
fill/select where a reader would), in both languages, and what it shows is
compared with normref's own numbers: the softmax recomputed by
normref.experiments.softmax, the layer_explorer/quiz/glossary datasets. Each is
also checked after Material's instant navigation, in light and dark mode (text
must stand out from its background), and without JavaScript (the static
content shows, the widget's empty box does not).

For every widget, the scale playground of the home page included (its numbers
are test_browser.py's): one live region (one per question in the quiz) that
announces one sentence per change, built from the page's label; one update per
input event; class names of its own; and axe finds nothing serious after use.

The fixtures (served site, one browser, one tab) are conftest.py's; this
module gets its own browser and tab (module scope), the site is shared.
"""

from __future__ import annotations

import re
import unicodedata

import numpy as np
import pytest

from support import LANGS, Tab, axe_violations, contrast

PAGES = {"softmax-saturation": "formulas/", "layer-explorer": "real-models/", "quiz": "interview/",
         "glossary-filter": "glossary/"}
# Every widget of the site: the content pages' and the home page's (test_browser.py and
# test_placement_browser.py compare the last two with normref).
WIDGETS = {**PAGES, "scale-playground": "", "placement-compare": "placement/"}
# A control that exists only once the widget has mounted.
READY = {"softmax-saturation": "input[type=range]", "layer-explorer": "table td", "quiz": "input[type=radio]",
         "glossary-filter": "input[type=search]", "scale-playground": "input[type=range]",
         "placement-compare": "table td"}
# Each widget's own class prefix (nr-widget__* is the loader's, shared by all).
PREFIX = {"softmax-saturation": "nr-softmax", "layer-explorer": "nr-layers", "quiz": "nr-quizw",
          "glossary-filter": "nr-gloss-filter", "scale-playground": "nr-scale", "placement-compare": "nr-place"}


def _sel(name: str) -> str:
    return f'[data-nr-widget="{name}"]'


def _open(tab: Tab, served, lang: str, name: str):
    tab.goto(served.url(lang, WIDGETS[name]))
    tab.page.wait_for_selector(f"{_sel(name)} {READY[name]}")
    return tab.page


def _num(s: str) -> float:
    return float(s.strip().replace("\u2212", "-"))


def _label(page, name: str, key: str) -> str:
    text = page.get_attribute(_sel(name), f"data-label-{key}")
    assert text, f"{name}: no data-label-{key}"
    return text


def _is_zh(text: str) -> bool:
    return any("\u4e00" <= ch <= "\u9fff" for ch in text)


# ---------------------------------------------------------------- softmax saturation


def _softmax_reading(page) -> dict:
    return page.evaluate(
        """(sel) => {
            const w = document.querySelector(sel);
            const num = (s) => parseFloat(s.replace('\\u2212', '-'));
            const top = w.querySelector('[data-nr-value="top"]');
            return {
              c: parseFloat(w.dataset.nrC),
              p: [...w.querySelectorAll('[data-nr-p]')].map(e => num(e.textContent)),
              bars: [...w.querySelectorAll('.nr-softmax__bar')].map(e => parseFloat(e.style.width)),
              top: num(top.textContent.split('=').pop()),
              top_name: top.textContent.split('=')[0].trim(),
              value: w.querySelector('input[type=range]').value,
            };
        }""",
        _sel("softmax-saturation"),
    )


def _check_softmax(got: dict, data: dict, k: int, where: str):
    from normref.experiments.softmax import SCORES, softmax

    c = float(data["scales"][k])
    p = softmax(c * SCORES)  # normref's softmax, recomputed here
    assert got["c"] == pytest.approx(c, rel=1e-12), where
    assert abs(data["top"][k] - p.max()) < 1e-6, f"{where}: the page's data is not normref's sweep"
    assert np.max(np.abs(np.array(got["p"]) - p)) <= 0.0005 + 1e-9, (where, got["p"], p)  # 3 decimals
    assert abs(got["top"] - p.max()) <= 0.00005 + 1e-9, (where, got["top"], p.max())  # 4 decimals
    assert got["top_name"] == data["labels"][int(p.argmax())], where
    assert np.allclose(got["bars"], 100 * p, atol=0.01), where


@pytest.mark.parametrize("lang", LANGS)
def test_softmax_widget_matches_normref(clean_tab, served, lang):
    from normref import data as nrdata
    from normref.experiments.softmax import SHOWN_SCALES

    data = nrdata.get("softmax_saturation", lang)
    scales = [float(c) for c in data["scales"]]
    n = len(scales)
    page = _open(clean_tab, served, lang, "softmax-saturation")
    assert not page.locator(_sel("softmax-saturation")).is_hidden()
    label = _label(page, "softmax-saturation", "magnitude")
    assert _is_zh(label) == (lang == "zh")
    one = scales.index(1.0)
    _check_softmax(_softmax_reading(page), data, one, "initial (c = 1)")

    # Keyboard alone: the labelled slider takes focus; Home, arrows, End walk normref's sweep.
    page.get_by_label(label).focus()
    page.keyboard.press("Home")
    _check_softmax(_softmax_reading(page), data, 0, "Home")
    for k in range(1, 4):
        page.keyboard.press("ArrowRight")
        _check_softmax(_softmax_reading(page), data, k, f"ArrowRight x{k}")
    page.keyboard.press("End")
    high = _softmax_reading(page)
    _check_softmax(high, data, n - 1, "End")
    assert high["top"] > 0.99  # saturated: almost one-hot
    # fill(): the magnitudes the page's text quotes.
    for c in SHOWN_SCALES:
        k = scales.index(c)
        page.get_by_label(label).fill(str(k))
        _check_softmax(_softmax_reading(page), data, k, f"c = {c}")
    assert page.get_attribute(f"{_sel('softmax-saturation')} input", "aria-valuetext").startswith("c = ")
    assert not clean_tab.errors, clean_tab.errors


# ---------------------------------------------------------------- layer explorer


def _layer_reading(page) -> dict:
    return page.evaluate(
        """(sel) => {
            const w = document.querySelector(sel);
            const out = {};
            w.querySelectorAll('[data-nr-value]').forEach(td => { out[td.dataset.nrValue] = td.textContent; });
            const dot = w.querySelector('circle.nr-layers__dot');
            return {values: out, model: w.dataset.nrModel, prompt: w.dataset.nrPrompt, stop: +w.dataset.nrStop,
                    dot_stop: +dot.getAttribute('data-nr-stop'), dot_x: +dot.getAttribute('cx'),
                    points: w.querySelector('polyline.nr-layers__line').getAttribute('points').trim().split(/\\s+/).length,
                    caption: w.querySelector('caption').textContent,
                    prompt_text: w.querySelector('.nr-layers__prompt').textContent};
        }""",
        _sel("layer-explorer"),
    )


def _close(shown: str, want: float, where: str):
    # The data holds 4 significant digits and the widget shows them as they are.
    assert _num(shown) == pytest.approx(want, rel=1e-9, abs=1e-12), (where, shown, want)


def _check_layer(got: dict, data: dict, model: str, prompt: str, k: int, where: str):
    run = data["models"][model]["runs"][prompt]
    stops = run["layers"] + [run["final"]]
    s = stops[k]
    assert (got["model"], got["prompt"], got["stop"], got["dot_stop"]) == (model, prompt, k, k), where
    assert got["points"] == len(stops), where
    assert run["prompt"] in got["prompt_text"] and str(run["n_tokens"]) in got["prompt_text"], where
    v = got["values"]
    _close(v["stream"], s["stream_in"]["l2_excl0"], f"{where}: stream")
    _close(v["pos0"], s["stream_in"]["l2_tokens"][0], f"{where}: position 0")
    names = {key.split(".")[0] for key in v if "." in key}
    assert names == {n["name"] for n in s["norms"]}, where
    for n in s["norms"]:
        for part in ("input", "pre_gain", "post_gain"):
            _close(v[f"{n['name']}.{part}"], n[part]["l2_excl0"], f"{where}: {n['name']} {part}")
        gains = [_num(x) for x in v[f"{n['name']}.gain"].split("/")]
        assert gains == pytest.approx([n["gain"]["min"], n["gain"]["median"], n["gain"]["max"]], rel=1e-9), where


@pytest.mark.parametrize("lang", LANGS)
def test_layer_explorer_matches_normref(clean_tab, served, lang):
    from normref import data as nrdata

    data = nrdata.get("layer_explorer", lang)
    page = _open(clean_tab, served, lang, "layer-explorer")
    w = _sel("layer-explorer")
    model_label, prompt_label, layer_label = (_label(page, "layer-explorer", k) for k in ("model", "prompt", "layer"))
    assert _is_zh(model_label + layer_label) == (lang == "zh")
    models = page.get_by_label(model_label, exact=True).evaluate("s => [...s.options].map(o => o.value)")
    assert sorted(models) == sorted(data["models"])
    assert models[0] == page.get_attribute(w, "data-first-model") == "smollm2-135m"
    # Initial state: the first model offered, the page's own prompt first, layer 0.
    assert data["prompt_order"][0] == lang
    _check_layer(_layer_reading(page), data, models[0], lang, 0, "initial")
    checked = 0
    for model in models:
        page.get_by_label(model_label, exact=True).select_option(model)
        for prompt in data["prompt_order"]:
            # Keyboard alone on the prompt select too: focus it and pick with the arrows.
            sel = page.get_by_label(prompt_label, exact=True)
            sel.focus()
            while page.evaluate(f"document.querySelector('{w}').dataset.nrPrompt") != prompt:
                page.keyboard.press("ArrowDown" if data["prompt_order"].index(prompt) else "ArrowUp")
            run = data["models"][model]["runs"][prompt]
            last = len(run["layers"])  # the stop after the last layer
            slider = page.get_by_label(layer_label, exact=True)
            slider.focus()
            page.keyboard.press("Home")
            _check_layer(_layer_reading(page), data, model, prompt, 0, f"{model}/{prompt} Home")
            page.keyboard.press("ArrowRight")
            one = _layer_reading(page)
            _check_layer(one, data, model, prompt, 1, f"{model}/{prompt} ArrowRight")
            page.keyboard.press("End")
            end = _layer_reading(page)
            _check_layer(end, data, model, prompt, last, f"{model}/{prompt} End (final)")
            assert end["dot_x"] > one["dot_x"]
            page.keyboard.press("ArrowLeft")
            _check_layer(_layer_reading(page), data, model, prompt, last - 1, f"{model}/{prompt} last layer")
            slider.fill(str(last // 2))
            _check_layer(_layer_reading(page), data, model, prompt, last // 2, f"{model}/{prompt} middle")
            checked += 5
    assert checked == 5 * len(models) * len(data["prompt_order"])
    assert not clean_tab.errors, clean_tab.errors


_LAYER_LAYOUT = """(sel) => {
    const w = document.querySelector(sel), box = (e) => e.getBoundingClientRect();
    const label = box(w.querySelector('.nr-layers__layer label')),
          slider = box(w.querySelector('input[type=range]')), tag = box(w.querySelector('.nr-layers__tag')),
          marker = box(w.querySelector('.nr-layers__chart line[stroke-dasharray="2 2"]'));
    return {sameRow: label.bottom > slider.top && label.top < slider.bottom && label.right <= slider.left,
            tagCrossed: marker.left < tag.right && marker.right > tag.left};
}"""


@pytest.mark.parametrize("lang", LANGS)
def test_layer_explorer_label_and_tag_layout(clean_tab, served, lang):
    """Browser review D6 (1280 px, and a phone): the label "layer" stays on its slider's row (it sat
    alone at the end of a row while the slider wrapped), and the chosen layer's dotted marker never
    crosses the √d tag, at the first stop, the last and the one before it."""
    try:
        for width in (1280, 390):
            clean_tab.page.set_viewport_size({"width": width, "height": 900})
            page = _open(clean_tab, served, lang, "layer-explorer")
            slider = page.locator(f'{_sel("layer-explorer")} input[type=range]')
            slider.focus()
            for key in ("Home", "End", "ArrowLeft"):
                page.keyboard.press(key)
                got = page.evaluate(_LAYER_LAYOUT, _sel("layer-explorer"))
                assert got == {"sameRow": True, "tagCrossed": False}, (width, key, got)
    finally:  # the module's tab is shared: the next test expects the desktop width
        clean_tab.page.set_viewport_size({"width": 1280, "height": 900})
    assert not clean_tab.errors, clean_tab.errors


@pytest.mark.parametrize("lang", LANGS)
def test_layer_explorer_keeps_the_chosen_layer_across_models(clean_tab, served, lang):
    """The final norm stays the final norm when the model changes and changes back (it
    landed on layer 6, MiniLM's last, in SmolLM2); a layer the other model lacks comes back too."""
    from normref import data as nrdata

    data = nrdata.get("layer_explorer", lang)
    page = _open(clean_tab, served, lang, "layer-explorer")
    model_label, layer_label = _label(page, "layer-explorer", "model"), _label(page, "layer-explorer", "layer")
    big, small = "smollm2-135m", "minilm-l6"
    last = {m: len(data["models"][m]["runs"][lang]["layers"]) for m in (big, small)}
    assert last[big] > last[small] + 1
    model, slider = page.get_by_label(model_label, exact=True), page.get_by_label(layer_label, exact=True)
    slider.focus()
    page.keyboard.press("End")
    _check_layer(_layer_reading(page), data, big, lang, last[big], "End")
    model.select_option(small)
    _check_layer(_layer_reading(page), data, small, lang, last[small], "the other model's final norm")
    model.select_option(big)
    _check_layer(_layer_reading(page), data, big, lang, last[big], "back: the final norm, not layer 6")
    # A layer the small model lacks: its final norm there, the same layer back.
    slider.fill(str(last[small] + 1))
    model.select_option(small)
    _check_layer(_layer_reading(page), data, small, lang, last[small], "a layer MiniLM lacks")
    model.select_option(big)
    _check_layer(_layer_reading(page), data, big, lang, last[small] + 1, "back: the layer chosen")
    # A layer both have stays put.
    slider.fill("2")
    model.select_option(small)
    _check_layer(_layer_reading(page), data, small, lang, 2, "layer 2 in MiniLM")
    assert not clean_tab.errors, clean_tab.errors


# ---------------------------------------------------------------- quiz


def _verdicts(page) -> list[str]:
    return page.eval_on_selector_all(f"{_sel('quiz')} [data-nr-verdict]", "es => es.map(e => e.dataset.nrVerdict)")


def _quiz_sentence(labels: dict, q: dict, i: int) -> tuple[str, str]:
    """(verdict, the one sentence the question's live region says) when option i is checked."""
    if i == q["answer"]:
        return "right", f"\u2713 {labels['right']}"
    return "wrong", f"\u2717 {labels['wrong']} {'ABCDEFGH'[q['answer']]}."


@pytest.mark.parametrize("lang", LANGS)
def test_quiz_grades_only_when_checked(clean_tab, served, lang):
    """Arrowing through a question's options chooses without grading; its check button grades
    the option chosen; choosing again clears the verdict. Keyboard alone, then the mouse once."""
    from normref import data as nrdata

    quiz = nrdata.get("quiz", lang)
    page = _open(clean_tab, served, lang, "quiz")
    w = page.locator(_sel("quiz"))
    labels = {k: _label(page, "quiz", k) for k in ("check", "choose", "right", "wrong")}
    assert _is_zh(labels["check"] + labels["choose"]) == (lang == "zh")
    assert page.locator("div.nr-quiz").count() == len(quiz)
    assert page.locator("div.nr-quiz:visible").count() == 0  # the static copies give way to the widget
    assert w.locator("fieldset").count() == len(quiz)
    assert _verdicts(page) == [""] * len(quiz)

    def right_so_far() -> int:
        return int(w.get_attribute("data-nr-right"))

    def active() -> str:
        return page.evaluate("document.activeElement.type || document.activeElement.tagName")

    for n, q in enumerate(quiz):
        fs = w.locator("fieldset").nth(n)
        assert q["prompt"] in fs.locator("legend").text_content()
        radios = fs.locator("input[type=radio]")
        k = len(q["options"])
        assert radios.count() == k >= 2
        verdict, explain = fs.locator("[data-nr-verdict]"), fs.locator(".nr-quizw__explain")
        button = fs.get_by_role("button", name=labels["check"], exact=True)
        assert verdict.get_attribute("aria-live") == "polite"
        before = right_so_far()

        # Check with nothing chosen: asked to choose, nothing graded.
        button.focus()
        page.keyboard.press("Enter")
        assert verdict.get_attribute("data-nr-verdict") == "" and verdict.text_content() == labels["choose"]
        assert explain.is_hidden()

        # Space chooses the first option, arrows move the choice through all of them: no verdict.
        radios.nth(0).focus()
        page.keyboard.press("Space")
        for i in range(k):
            assert radios.nth(i).is_checked(), (n, i)
            assert verdict.get_attribute("data-nr-verdict") == "" and explain.is_hidden(), (lang, q["id"], i)
            if i + 1 < k:
                page.keyboard.press("ArrowDown")
        assert right_so_far() == before

        # Tab reaches the check button, which grades the last option.
        page.keyboard.press("Tab")
        assert active() == "submit" or active() == "button"
        page.keyboard.press("Space")
        want, sentence = _quiz_sentence(labels, q, k - 1)
        assert verdict.get_attribute("data-nr-verdict") == want and verdict.text_content() == sentence
        assert explain.is_visible() and explain.text_content() == q["explain"]
        assert right_so_far() == before + (want == "right")

        # Back into the group: moving the choice clears the verdict and its point.
        page.keyboard.press("Shift+Tab")
        assert active() == "radio" and radios.nth(k - 1).evaluate("r => r === document.activeElement")
        page.keyboard.press("ArrowUp")
        assert radios.nth(k - 2).is_checked()
        assert verdict.get_attribute("data-nr-verdict") == "" and verdict.text_content() == "" and explain.is_hidden()
        assert right_so_far() == before

        # Arrow to the right answer and check it with Enter.
        for _ in range(k - 2 - q["answer"]):
            page.keyboard.press("ArrowUp")
        for _ in range(q["answer"] - (k - 2)):
            page.keyboard.press("ArrowDown")
        assert radios.nth(q["answer"]).is_checked()
        assert verdict.get_attribute("data-nr-verdict") == ""
        page.keyboard.press("Tab")
        page.keyboard.press("Enter")
        assert (verdict.get_attribute("data-nr-verdict"), verdict.text_content()) == _quiz_sentence(labels, q, q["answer"])
        assert right_so_far() == before + 1

    # The mouse works the same way: a click chooses, the button grades.
    fs, q = w.locator("fieldset").first, quiz[0]
    wrong = (q["answer"] + 1) % len(q["options"])
    fs.locator("input[type=radio]").nth(wrong).check()
    assert fs.locator("[data-nr-verdict]").get_attribute("data-nr-verdict") == ""
    fs.get_by_role("button", name=labels["check"], exact=True).click()
    assert fs.locator("[data-nr-verdict]").get_attribute("data-nr-verdict") == "wrong"
    fs.locator("input[type=radio]").nth(q["answer"]).check()
    fs.get_by_role("button", name=labels["check"], exact=True).click()
    assert w.get_attribute("data-nr-right") == str(len(quiz))
    assert _verdicts(page) == ["right"] * len(quiz)
    assert not clean_tab.errors, clean_tab.errors


# ---------------------------------------------------------------- glossary filter


def _glossary_data(lang: str) -> list:
    from normref import data as nrdata

    return nrdata.get("glossary", lang)


def _norm(s: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", s).lower().split())


def _expected_ids(data: list, query: str) -> list[str]:
    q = _norm(query)
    return [t["id"] for t in data if not q or any(q in _norm(f) for f in t["forms"])]


def _visible_terms(page) -> list[str]:
    return page.eval_on_selector_all("article h3.nr-gloss-term", "hs => hs.filter(h => !h.hidden && h.offsetParent !== null).map(h => h.id)")


def _filter(page, text: str):
    box = page.locator(f"{_sel('glossary-filter')} input[type=search]")
    box.focus()
    page.keyboard.press("Control+A")
    page.keyboard.press("Backspace")
    if text:
        page.keyboard.type(text)


def _glossary_queries(lang: str) -> list[str]:
    """A zh name, an en name, an alias and a sub-word, from the glossary itself; and a miss."""
    from normsite.content.glossary import default

    g = default()
    rms = g.get("rmsnorm")
    with_alias = next(t for t in g.terms if t.aliases)
    return [rms.name["zh"], rms.name["en"].lower(), with_alias.aliases[0], "norm", "归一化", "zzz-no-such-term"]


@pytest.mark.parametrize("lang", LANGS)
def test_glossary_filter_counts(clean_tab, served, lang):
    from normref import data as nrdata
    from normsite.content.glossary import default

    data = nrdata.get("glossary", lang)
    assert len(data) == len(default())
    page = _open(clean_tab, served, lang, "glossary-filter")
    w = page.locator(_sel("glossary-filter"))
    count = w.locator("output")
    template = _label(page, "glossary-filter", "count")
    total = len(data)

    def check(query: str):
        want = _expected_ids(data, query)
        assert _visible_terms(page) == want, (lang, query)
        assert count.text_content() == template.replace("{n}", str(len(want))).replace("{m}", str(total)), query
        assert w.get_attribute("data-nr-shown") == str(len(want))
        return want

    assert check("") == [t["id"] for t in data]
    for query in _glossary_queries(lang):
        _filter(page, query)
        want = check(query)
        assert (0 < len(want) < total) or query.startswith("zzz"), (query, len(want))
        # A group heading shows only while one of its entries does.
        groups = page.eval_on_selector_all("article h2[id^=group-]", "hs => hs.filter(h => !h.hidden).map(h => h.id)")
        assert set(groups) == {"group-" + t["group"] for t in data if t["id"] in want}, query
    # Typing one character at a time narrows step by step.
    _filter(page, "")
    check("")
    for i in range(1, 5):
        page.keyboard.type("rmsnorm"[i - 1])
        check("rmsnorm"[:i])
    assert not clean_tab.errors, clean_tab.errors


@pytest.mark.parametrize("lang", LANGS)
def test_glossary_filter_keeps_anchors_working(clean_tab, served, lang):
    """An anchor to an entry the filter hides clears the filter, and the entry is there to land on."""
    from normref import data as nrdata
    from normsite.content.glossary import default

    data = nrdata.get("glossary", lang)
    g = default()
    page = _open(clean_tab, served, lang, "glossary-filter")
    # A term whose "see also" link points at a term the filter (its own en name) hides.
    src, dst = next((t, s) for t in g.terms for s in t.see_also if s not in _expected_ids(data, t.name["en"]))
    _filter(page, src.name["en"])
    assert dst not in _visible_terms(page) and src.id in _visible_terms(page)
    link = page.locator(f'article h3#{src.id} ~ ul a[href$="#{dst}"]').first
    link.focus()
    page.keyboard.press("Enter")  # keyboard alone
    page.wait_for_function("(id) => location.hash === '#' + id", arg=dst)
    # Every entry shown, the target among them, in one evaluation that is waited for. Material may handle the
    # click itself (instant navigation). CI once saw the count settle, then a separate read a moment later
    # found no entry visible: reading twice let the page change in between.
    page.wait_for_function("([id, n]) => { const v = [...document.querySelectorAll('article h3.nr-gloss-term')]"
                           ".filter(h => !h.hidden && h.offsetParent !== null);"
                           " return v.length === n && v.some(h => h.id === id); }", arg=[dst, len(data)])
    assert page.locator(f"{_sel('glossary-filter')} input").input_value() == ""
    page.wait_for_function("(id) => { const r = document.getElementById(id).getBoundingClientRect();"
                           " return r.top >= 0 && r.top < innerHeight; }", arg=dst)
    # The address bar (a shared link) changing the hash does the same.
    page.evaluate("(id) => { location.hash = id; }", "#" + src.id)
    _filter(page, src.name["en"])
    assert dst not in _visible_terms(page)
    page.evaluate("(id) => { location.hash = id; }", "#" + dst)
    page.wait_for_function("(id) => !document.getElementById(id).hidden", arg=dst)
    assert len(_visible_terms(page)) == len(data)
    assert not clean_tab.errors, clean_tab.errors


@pytest.mark.parametrize("lang", LANGS)
def test_glossary_filter_with_no_match(clean_tab, served, lang):
    """A query that matches nothing says so, in the page's language (data-label-none), and the
    table of contents keeps still: no line of it for a hidden entry shows, none is marked
    current, and it is not scrolled to the last entry. Clearing the box brings all back."""
    page = _open(clean_tab, served, lang, "glossary-filter")
    w = _sel("glossary-filter")
    template = _label(page, "glossary-filter", "none")
    assert "{q}" in template and _is_zh(template) == (lang == "zh")
    toc = """() => {
        const links = [...document.querySelectorAll('.md-sidebar--secondary .md-nav a.md-nav__link')];
        const sc = document.querySelector('.md-sidebar--secondary .md-sidebar__scrollwrap');
        return {shown: links.filter(a => a.offsetParent !== null).length, total: links.length,
                current: links.filter(a => a.offsetParent !== null && a.classList.contains('md-nav__link--active')).length,
                scroll: sc ? sc.scrollTop : 0};
    }"""
    before = page.evaluate(toc)
    assert before["shown"] == before["total"] > 10
    hint = page.locator(f"{w} .nr-gloss-filter__none")
    assert hint.is_hidden()
    _filter(page, "zzz-no-such-term")
    assert _visible_terms(page) == []
    assert hint.is_visible() and hint.text_content() == template.replace("{q}", "zzz-no-such-term")
    page.wait_for_timeout(300)  # Material's scroll spy runs on the page's change of size
    after = page.evaluate(toc)
    assert after["shown"] == 0 and after["current"] == 0 and after["scroll"] == 0, after
    # A query that matches some: only their lines show.
    _filter(page, "rmsnorm")
    some = page.evaluate(toc)
    assert 0 < some["shown"] < some["total"] and hint.is_hidden()
    _filter(page, "")
    assert hint.is_hidden() and page.evaluate(toc)["shown"] == before["total"]
    assert not clean_tab.errors, clean_tab.errors


# ---------------------------------------------------------------- every widget: live regions, updates, class names


def _use(page, name: str):
    """Use a widget with the keyboard, the way a reader would, so that everything it can show is shown."""
    w = _sel(name)
    if name == "quiz":
        from normref import data as nrdata

        q = nrdata.get("quiz", page.evaluate("document.documentElement.lang"))[:2]
        fs = page.locator(f"{w} fieldset")
        for n, i in ((0, (q[0]["answer"] + 1) % len(q[0]["options"])), (1, q[1]["answer"])):  # one wrong, one right
            fs.nth(n).locator("input[type=radio]").nth(i).focus()
            page.keyboard.press("Space")
            page.keyboard.press("Tab")
            page.keyboard.press("Enter")
    elif name == "glossary-filter":
        _filter(page, "norm")
    elif name == "placement-compare":
        page.locator(f"{w} select").first.focus()
        page.keyboard.press("ArrowDown")
    else:
        page.locator(f"{w} input[type=range]").focus()
        page.keyboard.press("End")
        page.keyboard.press("ArrowLeft")


# Every live region inside a widget: an aria-live other than "off", or a live role
# (an <output> is role=status, polite, unless it says aria-live="off").
_LIVE = """(sel) => [...document.querySelector(sel).querySelectorAll('*')].filter(e => {
    const live = e.getAttribute('aria-live');
    if (live) return live !== 'off';
    const role = e.getAttribute('role') || (e.tagName === 'OUTPUT' ? 'status' : '');
    return ['status', 'alert', 'log', 'marquee', 'timer'].includes(role);
}).map(e => ({tag: e.tagName, children: e.children.length, text: e.textContent}))"""

# Count what each live region goes through: one mutation record per change of its text.
_WATCH = """(sel) => {
    const w = document.querySelector(sel);
    w.__nrRecords = 0; w.__nrInputs = 0;
    w.addEventListener('input', () => { w.__nrInputs += 1; }, true);
    w.querySelectorAll('[aria-live]:not([aria-live="off"])').forEach(r =>
        new MutationObserver(rs => { w.__nrRecords += rs.length; })
            .observe(r, {childList: true, characterData: true, subtree: true}));
}"""
_TAKE = """(sel) => new Promise(done => setTimeout(() => {
    const w = document.querySelector(sel);
    const out = {records: w.__nrRecords, inputs: w.__nrInputs, updates: +w.dataset.nrUpdates};
    w.__nrRecords = 0; w.__nrInputs = 0;
    done(out);
}, 0))"""


def _fill(template: str, **values) -> str:
    for k, v in values.items():
        template = template.replace("{" + k + "}", str(v))
    assert "{" not in template, template
    return template


def _one_sentence(template: str):
    """A status label is one short sentence: it ends the sentence once, at its end."""
    assert re.fullmatch(r"[^。]*[.。]", template) and ". " not in template, template


def _expected_status(page, name: str, lang: str) -> str:
    """The sentence the widget's live region should hold now, from the page's label and what the widget shows."""
    w = page.locator(_sel(name))
    template = _label(page, name, "count" if name == "glossary-filter" else "status")
    if name == "glossary-filter":
        return _fill(template, n=w.get_attribute("data-nr-shown"), m=w.get_attribute("data-nr-total"))
    _one_sentence(template)
    if name == "scale-playground":
        return _fill(template, c=w.locator("output").text_content(),
                     input=w.locator('[data-nr-value="in"]').text_content(),
                     output=w.locator('[data-nr-value="out"]').text_content())
    if name == "softmax-saturation":
        top_name, p = w.locator('[data-nr-value="top"]').text_content().split(" = ")
        return _fill(template, c=w.locator("output").text_content(), name=top_name, p=p)
    selects = w.locator("select")
    chosen = [selects.nth(i).evaluate("s => s.selectedOptions[0].textContent") for i in range(selects.count())]
    if name == "placement-compare":
        return _fill(template, a=chosen[0], b=chosen[1], setting=chosen[2],
                     fa=w.locator('[data-nr-value="final.a"]').text_content(),
                     fb=w.locator('[data-nr-value="final.b"]').text_content())
    return _fill(template, model=selects.nth(0).evaluate("s => s.selectedOptions[0].textContent"),
                 prompt=selects.nth(1).evaluate("s => s.selectedOptions[0].textContent"),
                 layer=w.locator("output").text_content(), l2=w.locator('[data-nr-value="stream"]').text_content())


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("name", [n for n in WIDGETS if n != "quiz"])
def test_live_region_says_one_sentence_per_change(clean_tab, served, lang, name):
    """One live region per widget, silent until the reader acts; then each keyboard step (and each
    select or typed character) runs one update and changes the region once, to one sentence built
    from the page's label and the numbers the widget shows; tables, bars and the value the control
    already speaks (aria-valuetext) are not live."""
    page = _open(clean_tab, served, lang, name)
    sel = _sel(name)
    regions = page.evaluate(_LIVE, sel)
    assert len(regions) == 1, regions
    assert regions[0]["children"] == 0 and (regions[0]["text"] == "" or name == "glossary-filter"), regions
    page.evaluate(_WATCH, sel)
    def pick(i, key="ArrowDown"):
        page.locator(f"{sel} select").nth(i).focus()
        page.keyboard.press(key)

    if name == "glossary-filter":
        box = page.locator(f"{sel} input[type=search]")
        box.focus()
        steps = [lambda ch=ch: page.keyboard.type(ch) for ch in "rms"] + [lambda: page.keyboard.press("Backspace")]
    elif name == "placement-compare":  # three selects, no slider
        steps = [lambda: pick(0), lambda: pick(0), lambda: pick(1, "ArrowUp"), lambda: pick(2, "ArrowUp")]
    else:
        page.locator(f"{sel} input[type=range]").focus()
        steps = [lambda k=k: page.keyboard.press(k) for k in ("ArrowRight", "ArrowRight", "End", "ArrowLeft", "Home")]
        if name == "layer-explorer":  # the selects too, with the keyboard
            steps += [lambda: pick(1), lambda: pick(0)]
    for i, step in enumerate(steps):
        step()
        got = page.evaluate(_TAKE, sel)
        assert got["inputs"] == 1, (name, i, got)  # one input event per keyboard step ...
        assert got["records"] == 1, (name, i, got)  # ... changes the live region once ...
        region = page.evaluate(_LIVE, sel)[0]
        assert region["children"] == 0 and region["text"] == _expected_status(page, name, lang), (name, i, region)
    assert _is_zh(region["text"]) == (lang == "zh"), region
    assert not clean_tab.errors, clean_tab.errors


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("name", [n for n in WIDGETS if n != "quiz"])
def test_one_update_per_input_event(clean_tab, served, lang, name):
    """Each step of a control runs the widget's update once (data-nr-updates counts them): a slider
    or a search box updates on `input` and a `change` (which a slider fires after its `input`) runs
    none; a select updates on `change` and its `input` runs none."""
    page = _open(clean_tab, served, lang, name)
    sel = _sel(name)
    page.evaluate(_WATCH, sel)
    kind = {"glossary-filter": "input[type=search]", "placement-compare": "select"}.get(name, "input[type=range]")
    control = page.locator(f"{sel} {kind}").first
    control.focus()
    keys = {"glossary-filter": ["r", "m", "Backspace"], "placement-compare": ["ArrowDown", "ArrowDown", "ArrowUp"]}.get(
        name, ["ArrowRight", "End", "Home", "ArrowRight"])
    for key in keys:
        before = page.evaluate(_TAKE, sel)["updates"]
        page.keyboard.press(key)
        got = page.evaluate(_TAKE, sel)
        assert got["inputs"] == 1 and got["updates"] == before + 1, (name, key, got)
    before = page.evaluate(_TAKE, sel)["updates"]
    other = "input" if kind == "select" else "change"
    control.evaluate("(c, t) => c.dispatchEvent(new Event(t, {bubbles: true}))", other)
    assert page.evaluate(_TAKE, sel)["updates"] == before, f"{name}: a {other} event ran an update"
    if kind == "input[type=range]":  # fill() sets the value and fires input, then change: one update
        control.fill(control.get_attribute("min"))
        assert page.evaluate(_TAKE, sel)["updates"] == before + 1
    assert not clean_tab.errors, clean_tab.errors


@pytest.mark.parametrize("lang", LANGS)
def test_quiz_live_regions_say_one_sentence(clean_tab, served, lang):
    """The quiz has one live region per question, its verdict: one short sentence per check, the
    explanation beside it and not live; moving between options leaves the regions untouched."""
    from normref import data as nrdata

    quiz = nrdata.get("quiz", lang)
    page = _open(clean_tab, served, lang, "quiz")
    sel = _sel("quiz")
    regions = page.evaluate(_LIVE, sel)
    assert len(regions) == len(quiz) and all(r["text"] == "" and r["children"] == 0 for r in regions), regions
    labels = {k: _label(page, "quiz", k) for k in ("right", "wrong", "choose")}
    _one_sentence(labels["choose"])
    page.evaluate(_WATCH, sel)
    q, fs = quiz[0], page.locator(f"{sel} fieldset").first
    fs.locator("input[type=radio]").first.focus()
    page.keyboard.press("Space")
    for _ in range(len(q["options"]) - 1):
        page.keyboard.press("ArrowDown")
        assert page.evaluate(_TAKE, sel)["records"] == 0  # choosing says nothing
    page.keyboard.press("Tab")
    page.keyboard.press("Enter")
    assert page.evaluate(_TAKE, sel)["records"] == 1
    texts = [r["text"] for r in page.evaluate(_LIVE, sel)]
    assert texts[0] == _quiz_sentence(labels, q, len(q["options"]) - 1)[1] and texts[1:] == [""] * (len(quiz) - 1)
    assert q["explain"] not in texts[0]
    assert not clean_tab.errors, clean_tab.errors


@pytest.mark.parametrize("lang", LANGS)
def test_each_widget_has_class_names_of_its_own(clean_tab, served, lang):
    """Every class inside a mounted widget is its own (nr-NAME__…) or the loader's (nr-widget__…)."""
    assert len(set(PREFIX.values())) == len(PREFIX)
    for name in WIDGETS:
        page = _open(clean_tab, served, lang, name)
        _use(page, name)
        # The page's own data <template class="nr-data"> is not the widget's; Material's
        # focus polyfill adds focus-visible to whatever has the keyboard focus.
        classes = set(page.evaluate("(sel) => [...document.querySelector(sel).querySelectorAll('[class]:not(template)')]"
                                    ".flatMap(e => [...e.classList])", _sel(name))) - {"focus-visible"}
        assert classes, name
        other = {c for c in classes
                 if not (c == PREFIX[name] or c.startswith((PREFIX[name] + "__", "nr-widget__")))}
        assert not other, f"{name}: classes not its own: {sorted(other)}"
    assert not clean_tab.errors, clean_tab.errors


# ---------------------------------------------------------------- every widget: instant navigation, dark mode, no JS


@pytest.mark.parametrize("lang", LANGS)
def test_widgets_after_instant_navigation(clean_tab, served, lang):
    """Reach each widget's page by following a link from the home page (no reload): it mounts and works."""
    page = clean_tab.page
    for name, rel in PAGES.items():
        clean_tab.goto(served.url(lang))
        clean_tab.mark()
        clean_tab.instant(served.url(lang, rel))
        assert clean_tab.marked(), f"{rel}: instant navigation did not happen"
        page.wait_for_selector(f"{_sel(name)} {READY[name]}")
        assert page.locator(_sel(name)).is_visible(), name
        control = page.locator(f"{_sel(name)} {READY[name]}").first
        control.focus()
        if name == "softmax-saturation":
            page.keyboard.press("End")
            assert _softmax_reading(page)["top"] > 0.99
        elif name == "layer-explorer":
            page.get_by_label(_label(page, name, "layer"), exact=True).focus()
            page.keyboard.press("End")
            got = _layer_reading(page)
            assert got["stop"] == got["dot_stop"] == got["points"] - 1
        elif name == "quiz":
            page.keyboard.press("Space")
            assert _verdicts(page)[0] == ""  # chosen, not yet checked
            page.locator(f"{_sel(name)} .nr-quizw__check").first.click()
            assert _verdicts(page)[0] in ("right", "wrong")
        else:
            page.keyboard.type("rmsnorm")
            shown = _visible_terms(page)
            assert "rmsnorm" in shown and 0 < len(shown) < len(_glossary_data(lang))
        # One widget per page, mounted once (no double mount from repeated document$ events).
        assert page.locator(f"{_sel(name)} .nr-widget__title").count() <= 1
    assert not clean_tab.errors, clean_tab.errors


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("scheme", ["default", "slate"])
def test_widgets_text_stands_out(clean_tab, served, lang, scheme):
    """Light and dark: every piece of text a widget draws (HTML and SVG) contrasts with what is behind it."""
    clean_tab.set_scheme(scheme)
    try:
        page = clean_tab.page
        for name in WIDGETS:
            _open(clean_tab, served, lang, name)
            clean_tab.scheme_is(scheme)
            _use(page, name)  # verdicts and explanations show too
            got = contrast(page, _sel(name))
            assert got["n"] >= 3, (name, got)
            ratio, where = got["worst"][0]
            assert ratio >= 4.5, f"{lang} {scheme} {name}: contrast {ratio:.2f} at {where}"
    finally:
        clean_tab.set_scheme("default")
    assert not clean_tab.errors, clean_tab.errors


@pytest.mark.parametrize("lang", LANGS)
def test_widgets_without_javascript(browser, served, lang):
    """Without JavaScript: no empty widget boxes, and the static content each one enhances is there."""
    ctx = browser.new_context(java_script_enabled=False, color_scheme="light")
    ctx.route("**/*", lambda r: r.continue_() if r.request.url.startswith(served.base) else r.abort())
    try:
        page = ctx.new_page()
        for name, rel in PAGES.items():
            page.goto(served.url(lang, rel))
            assert page.locator(_sel(name)).count() == 1 and not page.locator(_sel(name)).is_visible(), name
            if name == "softmax-saturation":
                img = page.locator("#fig-softmax_saturation img").first
                img.scroll_into_view_if_needed()
                assert img.is_visible()
            elif name == "layer-explorer":
                assert page.locator("article table").count() >= 2
            elif name == "quiz":
                first = page.locator("div.nr-quiz").first
                assert page.locator("div.nr-quiz").count() >= 3 and first.is_visible()
                first.locator("details summary").click()  # the static answer still opens
                assert first.locator("details").get_attribute("open") is not None
            else:
                assert page.locator("article h3.nr-gloss-term:visible").count() == len(_glossary_data(lang))
    finally:
        ctx.close()


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("scheme", ["default", "slate"])
def test_widgets_accessibility(clean_tab, served, lang, scheme):
    """axe-core on each mounted widget, after it has been used with the keyboard (a slider moved,
    a wrong and a right verdict shown, the filter applied)."""
    found = {}
    clean_tab.set_scheme(scheme)
    try:
        page = clean_tab.page
        for name in WIDGETS:
            _open(clean_tab, served, lang, name)
            clean_tab.scheme_is(scheme)
            _use(page, name)
            bad = axe_violations(page, context=_sel(name))
            if bad:
                found[name] = bad
    finally:
        clean_tab.set_scheme("default")
    assert not found, found
    assert not clean_tab.errors, clean_tab.errors


@pytest.mark.parametrize("lang", LANGS)
def test_widget_code_loads_only_where_used(clean_tab, served, lang):
    """Issue F: a page without widgets fetches neither widgets.js nor widgets.css. Reaching widget
    pages from it by instant navigation (the loader then arrives with the swapped body, and runs
    again on the next widget page) mounts each widget once, styled, without errors."""
    page = clean_tab.page
    fetched = "() => performance.getEntriesByType('resource').map(e => e.name.split('?')[0].split('/').pop())"
    clean_tab.goto(served.url(lang, "performance/"))
    assert page.evaluate("window.nrWidgets === undefined")
    assert not {"widgets.js", "widgets.css"} & set(page.evaluate(fetched))
    clean_tab.mark()
    for name in ("softmax-saturation", None, "quiz", "glossary-filter"):
        clean_tab.instant(served.url(lang, PAGES[name] if name else "performance/"))
        assert clean_tab.marked(), "instant navigation did not happen"
        if name is None:  # the URL changes before Material swaps the body: wait for the swap
            page.wait_for_function("() => !document.querySelector('[data-nr-widget]')")
            continue
        page.wait_for_selector(f"{_sel(name)} {READY[name]}")
        assert page.locator(f"{_sel(name)} .nr-widget__title").count() <= 1
        assert page.locator(f"{_sel(name)} {READY[name]}").first.is_visible(), name
        # widgets.css applies: the widget's box has its border.
        assert page.evaluate(f"getComputedStyle(document.querySelector('{_sel(name)}')).borderTopStyle") == "solid"
    assert {"widgets.js", "widgets.css"} <= set(page.evaluate(fetched))
    assert not clean_tab.errors, clean_tab.errors
