"""The print edition (print/) and its PDFs (`make pdf`, tools/pdf.py).

Unit tests of normsite.printed, then the built print pages (every chapter of the
nav in order, light figures, math, snippets with output, the glossary, links that
stay inside), then the two PDFs made by Chromium from the test build: every
chapter title in reading order, every figure (caption and drawing) on its page,
in the page's language, with the fonts embedded and Chinese as real text (the
characters themselves, not the look-alike radicals, and in a real CJK font).
"""

from __future__ import annotations

import json
import re
import unicodedata
from pathlib import Path

import pytest
import yaml
from bs4 import BeautifulSoup

from support import CHROMIUM, LANGS, ROOT, lang_root, load_tool
from normsite.content import glossary as gl
from normsite import printed

RADICALS = re.compile(r"[\u2e80-\u2fdf\u31c0-\u31ef]")
HAN = re.compile(r"[\u4e00-\u9fff]")

# ---------------------------------------------------------------- unit


def _chapters():
    return [
        printed.Chapter("", "Home", '<link rel="stylesheet" href="assets/katex/katex.min.css">'
                        '<h1 id="home">Home</h1><p>See <a href="toll-booth/#evidence-2">evidence</a>, '
                        '<a href="#home">top</a>, <a href="notebooks/x/">a notebook</a> and '
                        '<a href="https://arxiv.org/abs/1910.07467">the paper</a>.</p>'
                        '<figure class="nr-figure" id="fig-a"><a class="nr-zoom" href="figures/a-light.svg#only-light">'
                        '<img alt="A" loading="lazy" src="figures/a-light.svg#only-light">'
                        '<img alt="A" src="figures/a-dark.svg#only-dark"></a>'
                        '<figcaption>Cap</figcaption></figure>'
                        '<div class="nr-widget" data-nr-widget="w" hidden><label for="x">L</label></div>'
                        '<template class="nr-data" id="nr-data-w"><script type="application/json">{}</script></template>'
                        '<script src="assets/javascripts/widgets.js"></script>'),
        printed.Chapter("toll-booth/", "Toll booth", '<h1 id="toll-booth">Toll<a class="headerlink" href="#toll-booth">¶</a></h1>'
                        '<h2 id="evidence-2">E2</h2><details class="question"><summary>Q</summary><p>A</p></details>'
                        '<p><a class="nr-term" href="../glossary/#rmsnorm" title="short">RMSNorm</a> '
                        '<img src="../figures/b-light.svg#only-light"></p>'),
        printed.Chapter("glossary/", "Glossary", '<h1 id="glossary">G</h1><h3 id="rmsnorm">RMSNorm</h3>'),
    ]


def test_assemble_keeps_chapters_in_order_and_links_inside():
    html = printed.assemble(_chapters(), "print/", katex_css="assets/katex/katex.min.css")
    soup = BeautifulSoup(html, "html.parser")
    assert [s["data-nr-chapter"] for s in soup.select("section.nr-print-chapter")] == ["home", "toll-booth", "glossary"]
    assert not soup.select("section[id]")  # Material would name every code block in it after that id
    assert [a["href"] for a in soup.select("ol.nr-print-contents a")] == \
        ["#home--home", "#toll-booth--toll-booth", "#glossary--glossary"]
    ids = [e["id"] for e in soup.select("[id]")]
    assert len(ids) == len(set(ids)) and "toll-booth--evidence-2" in ids and "glossary--rmsnorm" in ids
    hrefs = [a["href"] for a in soup.select("section a[href]")]
    assert "#toll-booth--evidence-2" in hrefs and "#home--home" in hrefs and "#glossary--rmsnorm" in hrefs
    assert "../notebooks/x/" in hrefs  # not in the edition: kept, relative to print/
    ext = soup.find("a", href="https://arxiv.org/abs/1910.07467")
    assert "nr-print-ext" in ext["class"]
    # light figures only, without the theme marker, loaded eagerly, not wrapped in zoom links
    srcs = [i["src"] for i in soup.select("img")]
    assert srcs == ["../figures/a-light.svg", "../figures/b-light.svg"]
    assert not soup.select("img[loading]") and not soup.select("a.nr-zoom")
    # what only works on screen is gone; answers are open
    assert not soup.select("script, template, [data-nr-widget], .headerlink")
    assert soup.select_one("details").has_attr("open")
    assert not soup.select("a.nr-term[title]")
    assert [l["href"] for l in soup.select("link")] == ["../assets/katex/katex.min.css"]


def test_a_chapter_without_a_titled_h1_is_reached_at_an_anchor_of_its_own():
    chapters = [printed.Chapter("a/", "A", '<h1>No id</h1><p id="p">x <a href="../b/">b</a></p>'),
                printed.Chapter("b/", "B", '<h1 id="b">B</h1><p><a href="../a/">a</a> &amp; <a href="../a/#p">p</a>'
                                           '\u00a0<code>&lt;x&gt;</code></p>')]
    soup = BeautifulSoup(printed.assemble(chapters, "print/"), "html.parser")
    ids = {e["id"] for e in soup.select("[id]")}
    assert {"a--__a", "a--p", "b--b"} <= ids and not soup.select("section[id]")
    assert [a["href"] for a in soup.select("section a[href]")] == ["#b--b", "#a--__a", "#a--p"]
    assert [a["href"] for a in soup.select("ol.nr-print-contents a")] == ["#a--__a", "#b--b"]
    # text, entities and the no-break space read back as they were written
    assert soup.select("section")[1].get_text() == "\nBa & p\u00a0<x>\n"


def test_assemble_rejects_bad_input():
    with pytest.raises(ValueError, match="chapters"):
        printed.assemble([], "print/")
    with pytest.raises(ValueError, match="distinct"):
        printed.assemble(_chapters()[:1] * 2, "print/")
    with pytest.raises(TypeError, match="Chapter.html"):
        printed.Chapter("x/", "X", None)


def test_slug_and_manifest():
    assert [printed.slug(u) for u in ("", "toll-booth/", "notebooks/x/")] == ["home", "toll-booth", "notebooks-x"]
    assert json.loads(printed.pdf_manifest("zh", None)) == {"lang": "zh", "pdf": None}
    with pytest.raises(ValueError, match="lang"):
        printed.pdf_manifest("fr", None)


def test_cjk_font_maps_the_characters_not_the_radicals():
    from fontTools.ttLib import TTFont
    import io

    chars = printed.cjk_chars("归一化：首页 RMSNorm ⼀")
    assert chars == "".join(sorted("归一化：首页"))  # Latin and the radical ⼀ (U+2F00) left out
    font = TTFont(io.BytesIO(printed.cjk_font(chars)))
    cmap = font.getBestCmap()
    assert {chr(c) for c in cmap} == set(chars)
    assert "glyf" in font and "CFF " not in font  # TrueType outlines: embedded as a font
    assert font["name"].getDebugName(6).startswith("NotoSansCJKsc")
    assert printed.cjk_font(chars) == printed.cjk_font(chars)
    with pytest.raises(ValueError, match="chars"):
        printed.cjk_font("")


def test_the_font_begun_in_its_own_process_is_the_font_cut_here(tmp_path, monkeypatch):
    """cjk_font_begun (the build's print page): a process of its own cuts the subset into the cache while the build
    goes on; the bytes are cjk_font's, the log names the font once, and a cached font starts no process."""
    from normref import cache

    monkeypatch.setenv("NORMREF_CACHE", str(tmp_path / "cache"))
    chars = printed.cjk_chars("均方根归一化")
    n_why = len(cache.WHY)
    done = printed.cjk_font_begun(chars, name="cjk-test")
    assert [w.split(":")[0] for w in cache.WHY[n_why:]] == ["fonts/cjk-test"]
    got = done()
    assert len(cache.WHY) == n_why + 1, "cut once, in the other process"
    assert got == printed.cjk_font(chars, name="cjk-test") and got[:4] == b"\x00\x01\x00\x00"
    import subprocess

    monkeypatch.setattr(subprocess, "Popen", None)  # cached now: no process
    assert printed.cjk_font_begun(chars, name="cjk-test")() == got


# ---------------------------------------------------------------- the built print pages


class _Loader(yaml.SafeLoader):
    pass


_Loader.add_multi_constructor("!", lambda loader, suffix, node: None)


def nav_chapters(lang: str) -> list[tuple[str, str]]:
    """(docs path, title) of the nav's Markdown pages in reading order: the edition's chapters."""
    cfg = yaml.load((ROOT / ("mkdocs.yml" if lang == "zh" else "mkdocs.en.yml")).read_text(encoding="utf-8"),
                    Loader=_Loader)
    out = []

    def walk(items):
        for item in items:
            for title, target in item.items():
                if isinstance(target, str):
                    if target.endswith(".md"):
                        out.append((target, title))
                else:
                    walk(target)

    walk(cfg["nav"])
    return out


def _url(docs_path: str) -> str:
    return "" if docs_path == "index.md" else docs_path[: -len(".md")] + "/"


def _print_page(site: Path, lang: str) -> BeautifulSoup:
    return BeautifulSoup((lang_root(site, lang) / "print" / "index.html").read_text(encoding="utf-8"), "html.parser")


@pytest.mark.build
@pytest.mark.parametrize("lang", LANGS)
def test_print_page_holds_every_chapter_in_reading_order(site, lang):
    root = lang_root(site, lang)
    soup = _print_page(site, lang)
    art = soup.select_one("article.md-content__inner")
    chapters = nav_chapters(lang)
    assert len(chapters) >= 5
    sections = art.select("section.nr-print-chapter")
    assert [s["data-nr-chapter"] for s in sections] == [printed.slug(_url(p)) for p, _ in chapters]
    assert [a.get_text() for a in art.select("ol.nr-print-contents a")] == [t for _, t in chapters]
    for (path, _), sec in zip(chapters, sections):
        page = BeautifulSoup((root / _url(path) / "index.html").read_text(encoding="utf-8"), "html.parser")
        want = page.select_one("article h1").get_text(" ", strip=True).rstrip("¶").strip()
        assert sec.select_one("h1").get_text(" ", strip=True) == want, path
        # each chapter's figures (light), formulas and snippet outputs are all there
        src = page.select_one("article")
        for cite in src.select("aside.nr-cite"):  # each page's own citation block is not printed in its chapter
            cite.decompose()
        assert len(sec.select("figure.nr-figure")) == len(src.select("figure.nr-figure")), path
        assert len(sec.select(".katex")) == len(src.select(".katex")), path
        assert len(sec.select("pre")) == len(src.select("pre")), path
    # ids are unique and every link to a section lands on one
    ids = [e["id"] for e in soup.select("[id]")]
    assert len(ids) == len(set(ids))
    missing = [a["href"] for a in art.select('a[href^="#"]') if a["href"][1:] not in set(ids)]
    assert not missing, missing[:10]
    # the glossary, entry by entry
    for t in gl.default().terms:
        assert f"glossary--{t.id}" in ids, t.id
    # light figures only, every one a file of this site
    imgs = art.select("img")
    assert imgs and not [i for i in imgs if "dark" in i["src"] or "#" in i["src"] or i.get("loading") == "lazy"]
    for i in imgs:
        assert (root / "print" / i["src"]).resolve().is_file(), i["src"]
    assert art.select_one('link[href$="katex/katex.min.css"]') is not None
    assert [s["src"] for s in art.select("script[src]")] == ["../assets/javascripts/pdf-link.js"]
    assert not art.select("template, [data-nr-widget]")
    label = "输出" if lang == "zh" else "Output"
    assert art.select(f'span.filename:-soup-contains("{label}")'), "no snippet output"


@pytest.mark.build
@pytest.mark.parametrize("lang", LANGS)
def test_print_page_is_out_of_search_and_says_no_pdf_yet(site, lang):
    root = lang_root(site, lang)
    idx = json.loads((root / "search" / "search_index.json").read_text(encoding="utf-8"))
    assert not [d["location"] for d in idx["docs"] if d["location"].startswith("print/")]
    assert json.loads((root / "print" / "pdf.json").read_text(encoding="utf-8")) == {"lang": lang, "pdf": None}
    # the home page links the edition, and the PDF only through the manifest (hidden until it exists)
    home = BeautifulSoup((root / "index.html").read_text(encoding="utf-8"), "html.parser")
    box = home.select_one(".nr-print-links")
    assert box.select_one('a[href="print/"]') is not None
    pdf = box.select_one("[data-nr-pdf]")
    assert pdf["data-nr-pdf"] == "print/pdf.json" and pdf.has_attr("hidden") and not pdf.has_attr("href")


@pytest.mark.build
@pytest.mark.parametrize("lang", LANGS)
def test_print_font_holds_every_chinese_character_of_the_page(site, lang):
    from fontTools.ttLib import TTFont

    root = lang_root(site, lang)
    font = TTFont(str(root / printed.CJK_FONT_PATH))
    cmap = set(font.getBestCmap())
    text = (root / "print" / "index.html").read_text(encoding="utf-8")
    need = {ord(c) for c in printed.cjk_chars(text)}
    assert need and need <= cmap, sorted(chr(c) for c in need - cmap)[:20]
    assert not [c for c in cmap if RADICALS.match(chr(c))]


# ---------------------------------------------------------------- the PDFs


@pytest.fixture(scope="module")
def pdfs(site, tmp_path_factory) -> dict[str, Path]:
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: run `make browser-deps`")
    out = tmp_path_factory.mktemp("pdf")
    return load_tool("pdf").make_pdfs(site, out=out)


def _squash(s: str) -> str:
    # NFKC: the PDF's text has ligatures (ﬁ) where the HTML has two letters
    # and the PDF's text may give an en dash (U+2013) as a figure dash (U+2012): both count as a hyphen
    return re.sub(r"\s+", "", unicodedata.normalize("NFKC", s)).translate({0x2012: "-", 0x2013: "-"})


FIGURE_PATHS = 1000  # a page with a figure draws thousands of path segments (its labels are outlines
                     # too); a page of text a few hundred (rules, table borders, math)


def _path_segments(page) -> int:
    """moveto/lineto/curveto operators drawn on the page, in its content and its forms."""
    streams, todo = [], [page]
    c = page.get_contents()
    if c is not None:
        streams.append(c.get_data())
    todo = [v.get_object() for v in ((page.get("/Resources") or {}).get("/XObject") or {}).values()]
    while todo:
        o = todo.pop()
        if o.get("/Subtype") == "/Form":
            streams.append(o.get_data())
            todo += [v.get_object() for v in ((o.get("/Resources") or {}).get("/XObject") or {}).values()]
    return sum(len(re.findall(rb"\s[mlc]\n", s)) for s in streams)


def _fonts(reader) -> dict[str, bool]:
    """{BaseFont: embedded} over every page."""
    out = {}
    for page in reader.pages:
        res = page.get("/Resources") or {}
        for f in (res.get("/Font") or {}).values():
            f = f.get_object()
            d = f["/DescendantFonts"][0].get_object() if "/DescendantFonts" in f else f
            desc = d.get("/FontDescriptor")
            desc = desc.get_object() if desc is not None else {}
            out[str(f.get("/BaseFont"))] = any(k in desc for k in ("/FontFile", "/FontFile2", "/FontFile3"))
    return out


@pytest.mark.browser
@pytest.mark.parametrize("lang", LANGS)
def test_pdf_has_every_chapter_and_figure_in_its_language_and_fonts(site, pdfs, lang):
    from pypdf import PdfReader

    reader = PdfReader(str(pdfs[lang]))
    texts = [p.extract_text() or "" for p in reader.pages]
    flat = [_squash(t) for t in texts]
    assert len(reader.pages) >= 10
    # the contents lists every chapter by its nav title; each chapter's own title (its h1)
    # follows in reading order, each on a later page than the one before
    soup = _print_page(site, lang)
    contents = flat[0] + (flat[1] if len(flat) > 1 else "")
    for _, title in nav_chapters(lang):
        assert _squash(title) in contents, f"{lang}: {title!r} is not in the contents"
    where, start = [], 1
    for sec in soup.select("section.nr-print-chapter"):
        h1 = _squash(sec.select_one("h1").get_text(" ", strip=True).rstrip("¶"))
        hit = next((i for i in range(start, len(flat)) if h1 in flat[i]), None)
        assert hit is not None, f"{lang}: chapter {sec['data-nr-chapter']!r} ({h1[:30]}) is not in the PDF after page {start}"
        where.append(hit)
        start = hit + 1
    assert len(where) == len(nav_chapters(lang))
    # every figure: its caption on a page that also draws a picture
    captions = [fc.get_text(" ", strip=True) for fc in soup.select("figure.nr-figure figcaption")]
    assert captions
    for cap in captions:
        # Many captions open with the same phrase (the SmolLM2 weights): the page must hold the caption's
        # start and its end (a figure does not break across pages, print.css), not just the shared opening.
        key, tail = _squash(cap)[:40], _squash(cap)[-30:]
        pages_ = [i for i, t in enumerate(flat) if key in t and tail in t]
        assert pages_, f"{lang}: figure caption {cap[:50]!r} not in the PDF"
        drawn = _path_segments(reader.pages[pages_[0]])
        assert drawn >= FIGURE_PATHS, f"{lang}: page {pages_[0] + 1} has the caption {cap[:40]!r} but no picture ({drawn})"
    # language: the text is this language's
    body = "".join(texts)
    han = len(HAN.findall(body))
    if lang == "zh":
        assert han > 2000, han
    else:
        assert han < 0.05 * len(re.findall(r"[A-Za-z]", body))
        assert "均方根归一化" in body  # the glossary's Chinese names, in the English edition too
    # Chinese is real text: the characters themselves (not the look-alike radicals), nothing unknown
    assert not RADICALS.findall(body), sorted(set(RADICALS.findall(body)))[:10]
    assert "\ufffd" not in body
    # fonts: embedded; Chinese in Noto Sans CJK SC (the print page's own subset), math in KaTeX's
    fonts = _fonts(reader)
    named = {k: v for k, v in fonts.items() if k != "None"}
    assert named and all(named.values()), [k for k, v in named.items() if not v]
    assert any("NotoSansCJKsc" in k for k in named), sorted(named)
    assert any("KaTeX_Main" in k for k in named), sorted(named)


def test_print_page_puts_the_chapters_where_the_directive_is(monkeypatch):
    page = "<html><body><article><h1 id='print'>P</h1><p>[[print-edition]]</p></article></body></html>"
    pages = [("index.md", "", "Home", "<h1 id='home'>Home</h1>"), ("print.md", "print/", "P", "x"),
             ("notebooks/n.py", "notebooks/n/", "N", "<h1 id='n'>N</h1>")]
    out = printed.print_page(page, "print/", pages)
    art = BeautifulSoup(out, "html.parser").article
    assert [s["data-nr-chapter"] for s in art.select("section")] == ["home"]  # not itself, not notebooks
    assert art.select_one('link[href="../assets/stylesheets/print.css"]') is not None
    assert art.select_one('script[src="../assets/javascripts/pdf-link.js"]') is not None
    with pytest.raises(ValueError, match="print-edition"):
        printed.print_page("<p>no directive</p>", "print/", pages)
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1764460800")
    assert printed.stamp("built [[print-date]]") == "built 2025-11-30"


def test_chapter_tops_read_the_title_as_beautifulsoup_does():
    """The print edition finds each chapter's title anchor from the HTML's text (so one chapter's cached work
    depends on the others only through that table): the same <h1> BeautifulSoup's find("h1", id=True) finds."""
    from bs4 import BeautifulSoup

    from normsite import printed

    htmls = ['<h1 id="t">A</h1>', "<h1 id='t'>A</h1>", '<h1 class="x" id="t">A</h1>', "<h1>A</h1><h1 id=t>B</h1>",
             '<h1>No id</h1><p id="p">x</p>', '<h2 id="h2">x</h2><h1 data-id="no" id="yes">A</h1>']
    for html in htmls:
        c = printed.Chapter("a/", "A", html)
        h1 = BeautifulSoup(html, "html.parser").find("h1", id=True)
        want = f"a--{h1['id']}" if h1 is not None else "a--__a"
        assert printed.chapter_tops([c]) == {"a/": want}, html


def test_the_fonts_key_covers_its_own_code_not_the_print_editions():
    """An edit to how chapters are assembled (normsite.printed) does not cut the CJK font again (2 s a language)."""
    from normref import cache

    mods = cache.closure(("normsite.printfont",))
    assert "normsite.printfont" in mods and "normsite.printed" not in mods
    assert "normsite.printfont" in cache.closure(("normsite.printed",))  # the edition's pages still follow it
