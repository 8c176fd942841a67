"""Reading aids (issue L), without a browser: the section ids both editions share,
zoomable figures, the glossary entries search must find first, the search worker
every page uses, the term pairs for side-by-side reading. Unit tests of
normsite.reading first, then checks of the built site."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from support import LANGS, lang_root, pages
from normsite.content import glossary as gl
from normsite import glossary as site_glossary
from normsite import reading

# ---------------------------------------------------------------- unit: zoomable figures

FIG = ('<figure class="nr-figure" id="fig-a" markdown="span">\n'
       '<img alt="A" loading="lazy" src="../figures/a-light.svg#only-light" />\n'
       '<img alt="A" loading="lazy" src="../figures/a-dark.svg#only-dark" />\n'
       '<figcaption>Caption with a <a class="nr-term" href="../glossary/#x" title="t">term</a></figcaption>\n</figure>')


def test_zoomable_figures_wraps_both_variants_in_one_link_to_the_light_one():
    out, n = reading.zoomable_figures("<p>x</p>" + FIG + '<p><img src="other.png"></p>')
    assert n == 1
    assert ('<a class="nr-zoom" href="../figures/a-light.svg#only-light"><img alt="A" loading="lazy" '
            'src="../figures/a-light.svg#only-light" />\n<img alt="A" loading="lazy" src="../figures/a-dark.svg#only-dark" />'
            '</a>\n<figcaption>') in out
    assert '<p><img src="other.png"></p>' in out  # only figures of the build zoom
    again, n2 = reading.zoomable_figures(out)
    assert again == out and n2 == 0  # already wrapped: left alone


def test_zoomable_figures_rejects_non_text():
    with pytest.raises(TypeError, match="content"):
        reading.zoomable_figures(b"<figure></figure>")


def test_glightbox_files_come_from_the_pinned_package():
    files = reading.glightbox_files()
    assert set(files) == {"assets/javascripts/glightbox.min.js", "assets/stylesheets/glightbox.min.css"}
    assert b"GLightbox" in files["assets/javascripts/glightbox.min.js"]
    assert b".glightbox-container" in files["assets/stylesheets/glightbox.min.css"]
    assert b"plyr.io" not in files["assets/javascripts/glightbox.min.js"]  # no other host, even for video


# ---------------------------------------------------------------- unit: search


@pytest.fixture(scope="module")
def g() -> gl.Glossary:
    return gl.default()


def test_index_term_forms_puts_every_form_in_the_heading_hidden(g):
    t = g.get("rmsnorm")
    html = (f'<h3 class="nr-gloss-term" id="rmsnorm">{site_glossary.heading(t, "zh")}<a class="headerlink" href="#rmsnorm">¶</a></h3>'
            '<h2 id="group-norms">归一化算子</h2><h3 id="not-a-term" class="nr-gloss-term">x</h3>')
    out, n = reading.index_term_forms(html, g, "zh")
    assert n == 1
    span = re.search(r'<span class="nr-gloss-forms" hidden>(.*?)</span><a class="headerlink"', out).group(1)
    assert span.startswith(reading.FORMS_SEP)
    assert span.split(reading.FORMS_SEP)[1:] == t.forms()
    assert '<h2 id="group-norms">归一化算子</h2>' in out and '<h3 id="not-a-term" class="nr-gloss-term">x</h3>' in out
    with pytest.raises(ValueError, match="lang"):
        reading.index_term_forms(html, g, "fr")


def test_search_worker_is_our_rule_then_materials():
    out = reading.search_worker("addEventListener('message', e => postMessage(e))")
    assert out.endswith("\naddEventListener('message', e => postMessage(e))") and "glossary/#" in out
    with pytest.raises(ValueError, match="material_worker"):
        reading.search_worker("console.log(1)")


def test_term_pairs_json_holds_both_names_of_every_term(g):
    pairs = json.loads(reading.term_pairs_json(g))
    assert set(pairs) == set(g.ids())
    assert pairs["residual-stream"] == {"zh": g.get("residual-stream").name["zh"], "en": g.get("residual-stream").name["en"]}


# ---------------------------------------------------------------- built site: section ids


def _article(path: Path):
    soup = BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser")
    return soup.select_one("article.md-content__inner")


def _heading_ids(art) -> list[str]:
    return [h["id"] for h in art.find_all(re.compile(r"^h[1-6]$")) if h.has_attr("id")]


def _pairs(site: Path):
    zh_root, en_root = lang_root(site, "zh"), lang_root(site, "en")
    for p in pages(site, "zh"):
        rel = p.relative_to(zh_root)
        if rel.name == "404.html":
            continue
        yield rel, p, en_root / rel


def id_difference(zh, en) -> str | None:
    """How the section ids of two editions of a page differ (None: they do not).
    Notebook pages (mkdocs-jupyter: nbconvert derives their ids from the heading
    text and overwrites any other) must have the same number of sections instead:
    side-by-side reading pairs them in order."""
    ids_zh, ids_en = _heading_ids(zh), _heading_ids(en)
    if not ids_zh:
        return "no heading with an id"
    if zh.select_one(".jupyter-wrapper") is not None:
        return None if len(ids_zh) == len(ids_en) else f"(notebook) {len(ids_zh)} sections in zh, {len(ids_en)} in en"
    if ids_zh == ids_en:
        return None
    only_zh = [i for i in ids_zh if i not in ids_en]
    only_en = [i for i in ids_en if i not in ids_zh]
    return f"only zh {only_zh}, only en {only_en}" if only_zh or only_en else "same ids, different order"


def _art(html: str):
    return BeautifulSoup(f'<article class="md-content__inner">{html}</article>', "html.parser").article


def test_id_difference_names_what_differs():
    a = _art('<h1 id="a">甲</h1><h2 id="b">乙</h2>')
    assert id_difference(a, _art('<h1 id="a">A</h1><h2 id="b">B</h2>')) is None
    assert id_difference(a, _art('<h1 id="a">A</h1><h2 id="c">B</h2>')) == "only zh ['b'], only en ['c']"
    assert id_difference(a, _art('<h2 id="b">B</h2><h1 id="a">A</h1>')) == "same ids, different order"
    assert id_difference(_art("<p>x</p>"), a) == "no heading with an id"
    nb = '<div class="jupyter-wrapper"><h1 id="{}">t</h1></div>'
    assert id_difference(_art(nb.format("x")), _art(nb.format("y"))) is None
    assert "notebook" in id_difference(_art(nb.format("x")), _art(nb.format("y") + '<h2 id="z">u</h2>'))


@pytest.mark.build
def test_section_ids_are_the_same_in_both_editions(site):
    """Every page's headings carry the same ids, in the same order, in zh and en: what the
    language switch and side-by-side reading align by."""
    differ, checked = [], 0
    for rel, zh, en in _pairs(site):
        a, b = _article(zh), _article(en)
        assert a is not None and b is not None, rel
        d = id_difference(a, b)
        if d:
            differ.append(f"{rel}: {d}")
        checked += 1
    assert checked >= 5
    assert not differ, "section ids differ between the editions:\n" + "\n".join(differ)


# ---------------------------------------------------------------- built site: figures


@pytest.mark.build
@pytest.mark.parametrize("lang", LANGS)
def test_every_figure_zooms_and_no_page_carries_glightbox(site, lang):
    root = lang_root(site, lang)
    figures = 0
    for p in pages(site, lang):
        text = p.read_text(encoding="utf-8")
        assert "glightbox" not in text.lower(), f"{p.relative_to(root)} links GLightbox (it is loaded on the first zoom)"
        art = _article(p)
        if p.parent.name == "print":
            continue  # the print edition unwraps them (tests/test_print.py)
        for fig in art.select("figure.nr-figure") if art else []:
            links = fig.select("a.nr-zoom")
            imgs = fig.select("img")
            assert len(links) == 1 and imgs and all(i.parent is links[0] for i in imgs), \
                f"{p.relative_to(root)}: figure {fig.get('id')} does not zoom"
            light = [i["src"] for i in imgs if i["src"].endswith("#only-light")]
            assert light and links[0]["href"] == light[0]
            assert (p.parent / light[0].split("#")[0]).resolve().is_file(), light[0]
            figures += 1
    assert figures >= 10
    for f in ("assets/javascripts/glightbox.min.js", "assets/stylesheets/glightbox.min.css",
              "assets/javascripts/zoom.js", "assets/stylesheets/zoom.css"):
        assert (root / f).is_file(), f


# ---------------------------------------------------------------- built site: search


@pytest.mark.build
@pytest.mark.parametrize("lang", LANGS)
def test_glossary_headings_carry_every_name_and_alias(site, g, lang):
    art = _article(lang_root(site, lang) / "glossary" / "index.html")
    for t in g.terms:
        h = art.find(id=t.id)
        assert h is not None and h.name.startswith("h"), t.id
        span = h.select_one("span.nr-gloss-forms[hidden]")
        assert span is not None, t.id
        assert span.get_text().split(reading.FORMS_SEP)[1:] == t.forms(), t.id
        visible = "".join(s for s in h.find_all(string=True) if s.parent is h)
        assert reading.FORMS_SEP.strip() not in visible, f"{t.id}: the visible heading holds the separator"
    idx = json.loads((lang_root(site, lang) / "search" / "search_index.json").read_text(encoding="utf-8"))
    titles = {d["location"]: d["title"] for d in idx["docs"]}
    for t in g.terms:
        names = titles[f"glossary/#{t.id}"].replace("\u200b", "").split(reading.FORMS_SEP)[1:]
        assert [n.replace(" ", "") for n in names] == [f.replace(" ", "") for f in t.forms()], t.id


@pytest.mark.build
@pytest.mark.parametrize("lang", LANGS)
def test_every_page_searches_with_our_worker_around_materials(site, lang):
    root = lang_root(site, lang)
    workers = root / "assets" / "javascripts" / "workers"
    material = next(workers.glob("search.*.min.js"))
    ours = workers / (reading.SEARCH_WORKER_PREFIX + material.name[len("search."):])
    assert ours.read_text(encoding="utf-8").endswith("\n" + material.read_text(encoding="utf-8"))  # Material's, unchanged
    for p in pages(site, lang) + [root / "404.html"]:
        cfg = re.search(r'<script id="__config" type="application/json">(.*?)</script>', p.read_text(encoding="utf-8"), re.S)
        assert cfg, p
        url = json.loads(cfg.group(1))["search"]
        assert url.endswith("workers/" + ours.name), f"{p.relative_to(root)}: search worker {url}"


@pytest.mark.build
@pytest.mark.parametrize("lang", LANGS)
def test_term_pairs_are_served(site, g, lang):
    pairs = json.loads((lang_root(site, lang) / "assets" / "nr-terms.json").read_text(encoding="utf-8"))
    assert set(pairs) == set(g.ids())
