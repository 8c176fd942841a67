"""The formulas, toll-booth and interview pages state what normref computes; math and quiz render."""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch
from bs4 import BeautifulSoup
from torch.autograd.functional import jacobian

import normref
import normref.nn
from normref import data, values
from normsite.content.quiz import LETTERS, QUIZ, quiz
from normsite.quiz import render_markdown
from normref.experiments import formulas as fx
from normref.experiments import softmax as sm
from normref.values import fmt, fmt_vec
from normref.values.basics import WORKED_X

from support import LANGS, ROOT, lang_root, run_snippet

PAGES = ("formulas", "toll-booth", "interview")
DIRECTIVE = re.compile(r"\[\[value:\s*([^\]\s]+)\s*\]\]")


def _article(site, lang, page) -> BeautifulSoup:
    html = (lang_root(site, lang) / page / "index.html").read_text(encoding="utf-8")
    return BeautifulSoup(html, "html.parser").find("article")


def _text(article) -> str:
    """Visible prose of a page: without code, KaTeX's MathML copies or scripts."""
    art = BeautifulSoup(str(article), "html.parser")
    for tag in art.find_all(["code", "pre", "script", "annotation", "math"]):
        tag.decompose()
    return art.get_text(" ")


# ------------------------------------------------------------------ numbers on the pages


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("page", PAGES)
def test_every_value_on_the_page_is_what_normref_computes(site, lang, page):
    names = DIRECTIVE.findall((ROOT / "docs" / lang / f"{page}.md").read_text(encoding="utf-8"))
    assert names, f"{page} uses no values"
    text = _text(_article(site, lang, page))
    for name in set(names):
        assert values.get(name, lang) in text, (page, name, values.get(name, lang))


@pytest.mark.parametrize("lang", LANGS)
def test_formulas_page_numbers_recomputed_from_normref(site, lang):
    """Recompute the key numbers straight from normref (not through the value registry) and find them."""
    text = _text(_article(site, lang, "formulas"))
    x = WORKED_X
    mu = float(np.mean(x))
    expected = [
        fmt(mu, 2), fmt_vec(x - mu, 0), fmt(float(normref.variance(x)), 2), fmt(float(normref.std(x)), 2),
        fmt_vec(normref.layer_norm(x), 2), fmt_vec(normref.rms_norm(x), 2), fmt(float(normref.rms(x)), 2),
        fmt(float(np.linalg.norm(normref.layer_norm(x))), 2),
    ]
    sq = fx.sqrt_d_demo()
    expected += [fmt(sq["sqrt_d"], 2), fmt(sq["l2_gain"], 2)]
    p1 = sm.softmax(sm.SCORES)
    expected += [fmt(float(p1.max()), 3), fmt(float(sm.softmax(16 * sm.SCORES).max()), 3)]
    for s in expected:
        assert s in text, s
    # LayerNorm(x) = RMSNorm(x - mean): the page's identity, checked on normref itself.
    steps = fx.layernorm_steps(x)
    assert np.allclose(steps["layer_norm"], steps["rms_norm_of_centred"], atol=1e-6)


def test_ln_jacobian_closed_form_matches_autograd_and_lemma3():
    x = np.random.default_rng(3).standard_normal(12) * 4 + 1
    J = fx.ln_jacobian(x)
    J_auto = jacobian(lambda v: normref.nn.layer_norm(v, eps=1e-5), torch.from_numpy(x)).numpy()
    assert np.allclose(J, J_auto, atol=1e-8)
    for c, length, spectral, bound in fx.ln_jacobian_sweep()["rows"]:
        assert spectral == pytest.approx(bound, rel=1e-2 if c < 1 else 1e-4)
    rows = fx.ln_jacobian_sweep()["rows"]
    assert rows[0][2] > rows[-1][2] * 100  # longer input, smaller Jacobian


def test_softmax_saturation_properties():
    r = sm.saturation()
    assert np.allclose(r["p"].sum(axis=1), 1)
    assert np.all(np.diff(r["top"]) > 0)  # the top probability only rises with the magnitude
    assert np.all(np.argmax(r["p"], axis=1) == 0)  # the pattern never changes: A stays on top
    assert r["top"][-1] > 0.99 and r["jacobian_norm"][-1] < 0.01
    assert r["entropy"][0] > r["entropy"][-1]
    for c in sm.SHOWN_SCALES:
        assert c in r["scales"]
    with pytest.raises(ValueError, match="scores"):
        sm.saturation(scores=[1.0])
    with pytest.raises(ValueError, match="lo < hi"):
        sm.saturation(lo=2, hi=1)
    with pytest.raises(ValueError, match="NaN"):
        sm.softmax([1.0, float("nan")])
    with pytest.raises(ValueError, match="1-d"):
        sm.softmax_jacobian(np.ones((2, 2)))
    # The widget data carries the same numbers.
    w = data.get("softmax_saturation", "en")
    assert np.allclose(w["top"], r["top"], atol=1e-6)


def test_formula_helpers_reject_bad_input():
    with pytest.raises(ValueError, match="1-d"):
        fx.layernorm_steps(np.ones((2, 3)))
    with pytest.raises(TypeError, match="floating-point"):
        fx.ln_jacobian(np.array([1, 2, 3]))
    with pytest.raises(ValueError, match="d must be a positive integer"):
        fx.sqrt_d_demo(d=0)


# ------------------------------------------------------------------ math renders


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("page", PAGES)
def test_no_raw_tex_left(site, lang, page):
    """Every $...$ became KaTeX: no dollar signs or TeX commands left in the prose."""
    art = _article(site, lang, page)
    text = _text(art)
    assert "$" not in text, text[max(0, text.find("$") - 80): text.find("$") + 80]
    assert not re.search(r"\\(mathrm|frac|sqrt|lVert|approx|mu|sigma)\b", text)
    assert art.select(".katex"), "no math rendered"


# ------------------------------------------------------------------ quiz and self-test


def test_quiz_data_is_complete_in_both_languages():
    assert len(QUIZ) == 5
    for lang in LANGS:
        qs = quiz(lang)
        assert [q["id"] for q in qs] == [q["id"] for q in QUIZ]
        for q in qs:
            assert len(q["options"]) >= 3 and 0 <= q["answer"] < len(q["options"])
            assert q["prompt"] and q["explain"]
    assert data.get("quiz", "zh")[0]["prompt"] != data.get("quiz", "en")[0]["prompt"]
    with pytest.raises(ValueError, match="lang"):
        render_markdown("fr")


@pytest.mark.parametrize("lang", LANGS)
def test_quiz_and_self_test_render_with_answers_hidden(site, lang):
    art = _article(site, lang, "interview")
    blocks = art.select("div.nr-quiz")
    assert len(blocks) == len(QUIZ)
    for block, q in zip(blocks, quiz(lang)):
        assert block["data-quiz-id"] == q["id"]
        options = [li.get_text(" ", strip=True) for li in block.select("ul.nr-quiz-options > li")]
        assert len(options) == len(q["options"])
        for i, (shown, opt) in enumerate(zip(options, q["options"])):
            # Glossary links split the text into several nodes; compare without whitespace.
            assert shown.startswith(LETTERS[i] + ".") and "".join(opt.split()) in "".join(shown.split())
        # The answer is inside a collapsed <details>, not in the visible part.
        details = block.find("details")
        assert details is not None and not details.has_attr("open")
        assert details.get_text(" ", strip=True).find(f"{LETTERS[q['answer']]}.") >= 0
        assert q["explain"][:20] in details.get_text()
        visible = BeautifulSoup(str(block), "html.parser")
        visible.find("details").decompose()
        assert q["explain"][:20] not in visible.get_text()
    # Five self-test questions (Q1–Q5), each a collapsed question block.
    selftest = [d for d in art.select("details.question") if d.find("summary").get_text().startswith("Q")]
    assert [d.find("summary").get_text()[:2] for d in selftest] == ["Q1", "Q2", "Q3", "Q4", "Q5"]
    assert not any(d.has_attr("open") for d in selftest)


@pytest.mark.parametrize("lang", LANGS)
def test_pages_are_in_the_nav(site, lang):
    html = (lang_root(site, lang) / "index.html").read_text(encoding="utf-8")
    nav = BeautifulSoup(html, "html.parser").select("nav.md-nav--primary a.md-nav__link")
    hrefs = [a.get("href", "") for a in nav]
    positions = [next(i for i, h in enumerate(hrefs) if h.rstrip("/").endswith(p)) for p in PAGES]
    assert positions == sorted(positions)


# ------------------------------------------------------------------ snippets' own claims


def test_residual_paths_snippet_shows_the_identity_path():
    out = run_snippet("residual_paths.py", timeout=300)
    assert "x_L == x_0 + sum of branches: True" in out
    assert re.search(r"pre-LN, branches off: dx_L/dx_0 == I \? True", out)
    assert re.search(r"post-LN, branches off: dx_L/dx_0 == I \? False", out)


def test_ln_jacobian_snippet_agrees_with_lemma3_and_the_page():
    out = run_snippet("ln_jacobian.py", timeout=300)
    rows = [line.split() for line in out.splitlines()[1:]]
    for c, _, spectral, bound in rows:
        assert float(spectral) == pytest.approx(float(bound), rel=1e-2)
    by_c = {float(r[0]): float(r[2]) for r in rows}
    assert fmt(by_c[1.0], 2) == values.get("jac.at_1", "en")
    assert fmt(by_c[10.0], 3) == values.get("jac.at_10", "en")


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("page", PAGES)
def test_front_matter_parsed_and_toc_clean(site, lang, page):
    html = (lang_root(site, lang) / page / "index.html").read_text(encoding="utf-8")
    soup = BeautifulSoup(html, "html.parser")
    md = (ROOT / "docs" / lang / f"{page}.md").read_text(encoding="utf-8")
    title = next(re.sub(r"\s*\{[^}]*\}$", "", line[2:]).strip() for line in md.splitlines() if line.startswith("# "))
    assert soup.find("article").find("h1").get_text(strip=True).rstrip("¶") == title
    assert "description:" not in soup.find("article").get_text()
    meta = soup.find("meta", attrs={"name": "description"})
    assert meta is not None and len(meta["content"]) > 40
    toc = " ".join(a.get_text() for a in soup.select("nav.md-nav--secondary a"))
    assert "\\(" not in toc and "$" not in toc
