"""Figures as the reader sees them (Debian's Chromium via Playwright): legible on a desktop,
and a "tap to zoom" hint under the figures a phone shrinks past reading.

Legibility. The figures are matplotlib SVGs with their glyphs drawn as paths
(svg.fonttype "path"), so the text's size is in the SVG itself: each text group
`<g id="text_N">` draws its glyphs under `scale(s -s)`, a font size of 100·s user
units (mathtext's sub- and superscripts scale that again, `scale(k)` on a glyph).
Shown `w` px wide, a viewBox `W` units wide draws a size of `u` units at u·w/W px.
Chromium gives w, the width each figure is displayed at in the built page at 1280 px.
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from support import LANGS, Served, open_tab

# No module-wide browser marker: the tests that open Chromium are marked by its fixture
# (conftest.py); the measurement's own test and the notebook palette's run in the fast tier.

MIN_PX = 9.0  # the smallest text, as displayed on a desktop
DESKTOP = {"width": 1280, "height": 900}
# Figures still under MIN_PX on a desktop, with the smallest size they have now (px): they
# may not get smaller, and one that reaches MIN_PX must leave this list. Each needs a new
# layout (wide multi-panel figures shrunk to the column); on a phone they carry a
# "tap to zoom" hint. Empty it, figure by figure.
STILL_SMALL: dict[str, float] = {}
PHONE = {"width": 390, "height": 844}

_TEXT = re.compile(r'<g id="text_\d+">(.*?)(?=<g id="text_\d+">|\Z)', re.S)
_LABEL = re.compile(r"<!-- (.*?) -->", re.S)
_SIZE = re.compile(r'<g\b[^>]*transform="[^"]*scale\(([\d.]+) -[\d.]+\)"')
_SUB = re.compile(r'<use\b[^>]*transform="[^"]*scale\(([\d.]+)\)"')
_VIEWBOX = re.compile(r'<svg\b[^>]*viewBox="[-\d.]+ [-\d.]+ ([\d.]+) [\d.]+"')


def svg_texts(svg: str) -> tuple[float, list[tuple[float, str]]]:
    """(viewBox width, [(font size in user units, text), …]) of a matplotlib SVG with path glyphs."""
    m = _VIEWBOX.search(svg)
    if not m:
        raise ValueError("svg: expected an <svg> element with a viewBox")
    out = []
    for group in _TEXT.findall(svg):
        size = _SIZE.search(group)
        if not size:
            continue
        scale = min([float(k) for k in _SUB.findall(group)] + [1.0])
        label = _LABEL.search(group)
        out.append((float(size.group(1)) * 100 * scale, label.group(1).strip() if label else "?"))
    return float(m.group(1)), out


def smallest_px(svg: str, shown_px: float) -> tuple[float, str]:
    """The smallest text of the SVG, in CSS px, at `shown_px` wide, and what it says."""
    width, texts = svg_texts(svg)
    if not texts:
        return float("inf"), ""
    size, label = min(texts)
    return size * shown_px / width, label


# The figures shown in a page (its light variant, as the test's light tab shows it):
# every image loads now (loading="lazy" waits for a scroll), then its displayed width.
_SHOWN = """async () => {
    const imgs = [...document.querySelectorAll('article figure.nr-figure img')];
    imgs.forEach(i => { i.loading = 'eager'; });
    await Promise.all(imgs.map(i => i.complete ? null : new Promise(ok => {
        i.addEventListener('load', ok, {once: true}); i.addEventListener('error', ok, {once: true}); })));
    return imgs.filter(i => i.offsetParent !== null).map(i => ({
        figure: i.closest('figure').id, src: i.src, width: i.getBoundingClientRect().width,
        hint: (i.closest('figure').querySelector('.nr-zoom-hint') || {}).textContent || null,
        hintShown: !!(i.closest('figure').querySelector('.nr-zoom-hint') || {}).offsetParent}));
}"""


def _shown(tab, served: Served, lang: str, rel: str) -> list[dict]:
    tab.goto(served.url(lang, rel))
    return tab.page.evaluate(_SHOWN)


def _svg_file(served: Served, url: str) -> Path:
    return served.root / urlsplit(url).path.lstrip("/")


def _pages(served: Served, lang: str) -> list[str]:
    return [r for r in served.pages(lang) if r != "404.html" and not r.startswith("print/")]


def test_smallest_text_of_a_figure():
    """The measurement itself, on a made-up SVG: 8-unit text in a 864-unit viewBox shown 688 px
    wide is 6.4 px; a mathtext superscript at 0.7 of a 10-unit label counts as 7 units."""
    svg = ('<svg viewBox="0 0 864 230.4"><g id="text_1"><!-- label -->'
           '<g transform="translate(1 2) scale(0.08 -0.08)"></g></g>'
           '<g id="text_2"><!-- 10^-1 --><g transform="translate(1 2) scale(0.1 -0.1)">'
           '<use xlink:href="#a" transform="translate(0 0.6)"/><use xlink:href="#b" transform="translate(9 4) scale(0.7)"/>'
           '</g></g></svg>')
    assert svg_texts(svg) == (864.0, [(8.0, "label"), (pytest.approx(7.0), "10^-1")])
    px, label = smallest_px(svg, 688)
    assert label == "10^-1" and px == pytest.approx(7.0 * 688 / 864)
    with pytest.raises(ValueError, match="viewBox"):
        svg_texts("<svg></svg>")


@pytest.mark.parametrize("lang", LANGS)
def test_figure_text_is_legible_on_a_desktop(browser, served, lang):
    """Every figure's smallest text, at the width the page shows it at 1280 px, is at least 9 px."""
    small, seen = [], 0
    with open_tab(browser, served) as tab:
        tab.page.set_viewport_size(DESKTOP)
        for rel in _pages(served, lang):
            for fig in _shown(tab, served, lang, rel):
                assert fig["width"] > 0, f"{lang}/{rel} #{fig['figure']}: not displayed"
                for theme in ("light", "dark"):
                    svg = _svg_file(served, fig["src"].replace("-light.svg", f"-{theme}.svg"))
                    px, label = smallest_px(svg.read_text(encoding="utf-8"), fig["width"])
                    seen += 1
                    known = STILL_SMALL.get(fig["figure"].removeprefix("fig-"))
                    if known is not None:
                        if px >= MIN_PX:
                            small.append(f"{fig['figure']} now reaches {MIN_PX} px ({px:.1f}): remove it from STILL_SMALL")
                        elif px < known - 0.05:
                            small.append(f"{lang}/{rel} #{fig['figure']} ({theme}): {px:.1f} px for {label!r}, "
                                         f"smaller than the {known} px it had")
                    elif px < MIN_PX:
                        small.append(f"{lang}/{rel} #{fig['figure']} ({theme}, shown {fig['width']:.0f} px wide): "
                                     f"{px:.1f} px for {label!r}")
    assert seen, f"no figures measured in {lang}"
    assert not small, f"figure text under {MIN_PX} px on a 1280 px screen:\n  " + "\n  ".join(small)


def _strings(served: Served, lang: str, rel: str) -> dict:
    m = re.search(r'<script type="application/json" id="nr-strings">(.*?)</script>', served.html(lang, rel), re.S)
    assert m, f"{lang}/{rel}: no nr-strings (overrides/main.html)"
    import json

    return json.loads(m.group(1))


@pytest.mark.parametrize("lang", LANGS)
def test_many_panel_figures_say_tap_to_zoom_on_a_phone(browser, served, lang):
    """On a phone every figure shown at under 1/2.4 of its size (the placement lab's training grid)
    carries a hint in the page's language, from the site's strings; one shown larger (the placement
    map, four rows of two) carries none; on a desktop, none shows."""
    hint = _strings(served, lang, "placement/")["zoomHint"]
    assert hint and (re.search(r"[\u4e00-\u9fff]", hint) is not None) == (lang == "zh"), hint
    with open_tab(browser, served) as tab:
        tab.page.set_viewport_size(PHONE)
        shown = {f["figure"]: f for rel in ("placement/", "real-models/") for f in _shown(tab, served, lang, rel)}
        for name in ("fig-placement_training",):
            assert shown[name]["hint"] == hint and shown[name]["hintShown"], f"{lang} {name} on a phone: {shown[name]}"
        for name in ("fig-models_forward_strip", "fig-placement_map"):
            assert not shown[name]["hint"], f"{name}: shown at over 1/2.4 of its size: no hint"
        tab.page.set_viewport_size(DESKTOP)
        shown = {f["figure"]: f for f in _shown(tab, served, lang, "placement/")}
        assert not any(f["hintShown"] for f in shown.values()), f"hint shown on a desktop: {shown}"


# ---------------------------------------------------------------- notebook plots (no browser)


def test_notebooks_plot_in_the_figures_palette():
    """The notebooks draw with the figures' palette (normref.figures.palette, the one figures/_style.py
    uses): Post-LN and Pre-LN in the figures' colors, on no background, so the dark scheme can
    turn the plots (overrides' normref.css) instead of showing white boxes."""
    import ast

    import normref.figures.palette as palette
    from support import ROOT

    assert palette.POST_LN == palette.PALETTES["light"]["c"][0] and palette.PRE_LN == palette.PALETTES["light"]["c"][1]
    rc = palette.rc("dark")
    assert rc["figure.facecolor"] == "none" and rc["savefig.transparent"] is True
    assert [c["color"] for c in rc["axes.prop_cycle"]] == palette.PALETTES["dark"]["c"]
    with pytest.raises(ValueError, match="theme"):
        palette.rc("sepia")
    style = ast.parse((ROOT / "normref/figures/_style.py").read_text(encoding="utf-8"))
    assert any(isinstance(n, ast.ImportFrom) and n.module == "palette" and any(a.name == "PALETTES" for a in n.names)
               for n in ast.walk(style)), "figures/_style.py draws with palette.PALETTES"
    for nb in sorted((ROOT / "docs").glob("*/notebooks/*.py")):
        src = nb.read_text(encoding="utf-8")
        if "matplotlib.pyplot" in src:
            assert "plt.rcParams.update(palette.rc())" in src, f"{nb.relative_to(ROOT)}: plots without the figures' palette"
    assert "jp-RenderedImage" in (ROOT / "overrides/assets/stylesheets/normref.css").read_text(encoding="utf-8")
