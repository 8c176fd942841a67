"""The placement page's widget (placement-compare) in a real browser (Chromium via Playwright).

Driven with the keyboard alone (Tab to a select, arrow keys to change it), in both languages; after
every change the numbers it shows are compared with normref's placement_lab dataset, and the data
itself with normref's measurements. Also: it mounts after Material's instant navigation (reached from
the toll-booth page's link), its text stands out in light and dark mode, axe finds nothing serious,
and without JavaScript the static figures show and the widget's box does not.
"""

from __future__ import annotations

import pytest

from support import LANGS, Tab, axe_violations, contrast

NAME = "placement-compare"
SEL = f'[data-nr-widget="{NAME}"]'
PAGE = "placement/"


def _data(lang):
    from normref import data as nrdata

    return nrdata.get("placement_lab", lang)


def _open(tab: Tab, served, lang: str):
    tab.goto(served.url(lang, PAGE))
    tab.page.wait_for_selector(f"{SEL} table td")
    return tab.page


def _reading(page) -> dict:
    return page.evaluate(
        """(sel) => {
            const w = document.querySelector(sel);
            const out = {};
            w.querySelectorAll('[data-nr-value]').forEach(td => { out[td.dataset.nrValue] = td.textContent; });
            const charts = [...w.querySelectorAll('svg.nr-place__chart')].map(svg => ({
                label: svg.getAttribute('aria-label'),
                lines: [...svg.querySelectorAll('polyline')].map(p => [p.classList.contains('nr-place__line--a') ? 'a' : 'b',
                                                                    +p.dataset.nrPoints]),
            }));
            return {values: out, a: w.dataset.nrA, b: w.dataset.nrB, setting: w.dataset.nrSetting, charts,
                    selects: [...w.querySelectorAll('select')].map(s => s.value)};
        }""",
        SEL,
    )


def _num(s: str) -> float:
    return float(s.strip().rstrip("×").replace("\u2212", "-"))


def _fmt(v: float, digits: int) -> str:
    from normref.values import fmt

    return fmt(v, digits)


def _check(got: dict, d: dict, a: str, b: str, setting: str, where: str):
    assert (got["a"], got["b"], got["setting"]) == (a, b, setting), where
    assert got["selects"] == [a, b, setting], where
    v = got["values"]
    for side, var in (("a", a), ("b", b)):
        assert v[f"grad_ratio.{side}"] == _fmt(d["grad"]["ratio"][var], 2), (where, side)
        for n, st in d["stream"].items():
            assert v[f"growth{n}.{side}"] == _fmt(st["growth"][var], 2) + "×", (where, side, n)
        f = d["loss"]["final"][var][setting]
        assert v[f"final.{side}"] == (_fmt(f["final"], 2) if f["final"] is not None else v[f"final.{side}"]), (where, side)
        assert v[f"failed.{side}"] == f"{f['diverged']} / {f['stalled']} / {f['seeds']}", (where, side)
    grad, stream, loss = got["charts"]
    deep = max(d["stream"], key=int)
    n_layers, n_stream = len(d["grad"]["layers"]), len(d["stream"][deep]["layers"])
    assert grad["lines"] == [["a", n_layers], ["b", n_layers]], where
    assert stream["lines"] == [["a", n_stream], ["b", n_stream]], where
    want = [[side, len(d["loss"]["curves"][var][setting]["steps"])] for side, var in (("a", a), ("b", b))
            if d["loss"]["curves"][var][setting] is not None]
    assert loss["lines"] == want, where
    assert d["names"][a] in grad["label"] and d["names"][b] in loss["label"], where


@pytest.mark.parametrize("lang", LANGS)
def test_placement_widget_matches_normref_by_keyboard(clean_tab, served, lang):
    d = _data(lang)
    page = _open(clean_tab, served, lang)
    variants, settings = d["variants"], [s["key"] for s in d["loss"]["settings"]]
    title = page.get_attribute(SEL, "data-label-title")
    assert any("\u4e00" <= ch <= "\u9fff" for ch in title) == (lang == "zh")
    got = _reading(page)
    _check(got, d, "post", "pre", settings[-1], "initial")

    # Keyboard only: focus layout A's select, walk it with the arrow keys through every variant.
    a_label, b_label = page.get_attribute(SEL, "data-label-a"), page.get_attribute(SEL, "data-label-b")
    page.get_by_label(a_label, exact=True).focus()
    page.keyboard.press("Home")
    _check(_reading(page), d, variants[0], "pre", settings[-1], "A: Home")
    for i in range(1, len(variants)):
        page.keyboard.press("ArrowDown")
        _check(_reading(page), d, variants[i], "pre", settings[-1], f"A: ArrowDown x{i}")
    # Tab to layout B and pick the last variant; Tab to the training setting and walk it.
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.id") == page.evaluate(
        "(l) => [...document.querySelectorAll('label')].find(x => x.textContent === l).htmlFor", b_label)
    page.keyboard.press("End")
    _check(_reading(page), d, variants[-1], variants[-1], settings[-1], "B: End")
    page.keyboard.press("Tab")
    page.keyboard.press("Home")
    for i, key in enumerate(settings):
        if i:
            page.keyboard.press("ArrowDown")
        _check(_reading(page), d, variants[-1], variants[-1], key, f"setting {key}")
    assert not clean_tab.errors, clean_tab.errors


@pytest.mark.usefixtures("built_cache")
def test_placement_widget_data_is_normref_numbers():
    """The embedded data against normref's own functions (the widget shows the data, checked above), read from
    the build's cache: the build computed each of them (test_experiment_tasks checks that it did)."""
    from normref.experiments import placement as pl
    from normref.results import placement as results

    d = _data("en")
    g = pl.grad_per_layer()
    for v in pl.VARIANTS:
        assert d["grad"]["ratio"][v] == pytest.approx(pl.grad_ratio(g, v), abs=1e-4)
        for n in pl.STREAM["depths"]:
            assert d["stream"][str(n)]["growth"][v] == pytest.approx(pl.stream_growth(pl.stream_lengths(n), v), abs=1e-4)
        for s in d["loss"]["settings"]:
            e = results.summary()[(v, s["lr"], s["warmup"])]
            f = d["loss"]["final"][v][s["key"]]
            assert (f["diverged"], f["stalled"]) == (e["diverged"], e["stalled"])
            assert f["final"] == pytest.approx(e["final"], abs=1e-4)


@pytest.mark.parametrize("lang", LANGS)
def test_placement_widget_after_instant_navigation(clean_tab, served, lang):
    """Reach the page by following the toll-booth page's link (no reload): the widget mounts and works."""
    d = _data(lang)
    page = clean_tab.page
    clean_tab.goto(served.url(lang, "toll-booth/"))
    clean_tab.mark()
    clean_tab.instant(served.url(lang, PAGE))
    assert clean_tab.marked(), "instant navigation did not happen"
    page.wait_for_selector(f"{SEL} table td")
    assert page.locator(SEL).is_visible()
    page.get_by_label(page.get_attribute(SEL, "data-label-b"), exact=True).focus()
    page.keyboard.press("End")
    _check(_reading(page), d, "post", d["variants"][-1], d["loss"]["settings"][-1]["key"], "after instant navigation")
    assert page.locator(f"{SEL} .nr-widget__title").count() == 1  # mounted once
    # And away and back again: still one widget, still working.
    clean_tab.instant(served.url(lang, "toll-booth/"))
    page.wait_for_function("() => !document.querySelector('[data-nr-widget]')")
    clean_tab.instant(served.url(lang, PAGE))
    page.wait_for_selector(f"{SEL} table td")
    assert page.locator(f"{SEL} .nr-widget__title").count() == 1
    assert not clean_tab.errors, clean_tab.errors


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("scheme", ["default", "slate"])
def test_placement_widget_contrast_and_axe(clean_tab, served, lang, scheme):
    clean_tab.set_scheme(scheme)
    try:
        page = _open(clean_tab, served, lang)
        clean_tab.scheme_is(scheme)
        got = contrast(page, SEL)
        assert got["n"] >= 10, got
        ratio, where = got["worst"][0]
        assert ratio >= 4.5, f"{lang} {scheme}: contrast {ratio:.2f} at {where}"
        bad = axe_violations(page, context=SEL)
        assert not bad, bad
    finally:
        clean_tab.set_scheme("default")
    assert not clean_tab.errors, clean_tab.errors


@pytest.mark.parametrize("lang", LANGS)
def test_placement_page_without_javascript(browser, served, lang):
    ctx = browser.new_context(java_script_enabled=False, color_scheme="light")
    ctx.route("**/*", lambda r: r.continue_() if r.request.url.startswith(served.base) else r.abort())
    try:
        page = ctx.new_page()
        page.goto(served.url(lang, PAGE))
        assert page.locator(SEL).count() == 1 and not page.locator(SEL).is_visible()
        for fig in ("placement_map", "placement_init", "placement_training", "placement_logits"):
            img = page.locator(f"#fig-{fig} img").first
            img.scroll_into_view_if_needed()
            assert img.is_visible(), fig
        assert page.locator("article table").count() >= 2  # the map's table and the lab's table
    finally:
        ctx.close()
