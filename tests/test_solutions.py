"""Worked solutions: every exercise of every page has a collapsible solution, in both languages, whose
numbers are normref's (value and table directives, computed at build time), and those numbers are right.

An exercise section is a heading with one of EXERCISE_IDS. Its exercises are the pymdownx.details blocks
under it (``??? question "the question"``, the body is the solution), and, where the section asks
numbered questions in the open (real-models), one solution block answers them item by item.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from bs4 import BeautifulSoup

from normref import values
from normref.values import fmt, fmt_vec

from support import LANGS, ROOT, lang_root

EXERCISE_IDS = ("exercises", "exercise", "self-test", "check-yourself")
# Pages that have exercises today: losing a page's exercises (or its solutions) is a regression.
PAGES_WITH_EXERCISES = ("formulas", "toll-booth", "placement", "real-models", "k3-latentmoe", "performance",
                        "interview")
HEADING = re.compile(r"^(#{1,6}) .*\{ #([\w-]+) \}\s*$")
DETAILS = re.compile(r'^\?\?\?\+? (\w+)(?: "(.*)")?\s*$')
DIRECTIVE = re.compile(r"\[\[(value|table):\s*([^\]\s]+)\s*\]\]")
# Numbers a solution may state although no directive computes them: quoted from a cited source.
QUOTED = {
    ("performance", "6.25%"): "the RMSNorm paper's pRMSNorm setting (Zhang & Sennrich 2019, Table 8), quoted",
}


def exercises(text: str) -> list[dict]:
    """Each solution block of a page's exercise sections: {"section", "kind", "title", "body", "asked"}
    (``asked``: the numbered questions in the open just before it, for a block that answers several)."""
    lines = text.splitlines()
    out, section, level, asked = [], None, 0, []
    i = 0
    while i < len(lines):
        line = lines[i]
        if m := HEADING.match(line):
            if section is None or len(m.group(1)) <= level:
                section, level, asked = (m.group(2), len(m.group(1)), []) if m.group(2) in EXERCISE_IDS else (None, 0, [])
            i += 1
            continue
        if section and re.match(r"^\d+\. ", line):
            asked.append(line)
        if section and (m := DETAILS.match(line)):
            body = []
            i += 1
            while i < len(lines) and (lines[i].startswith("    ") or not lines[i].strip()):
                body.append(lines[i][4:])
                i += 1
            out.append({"section": section, "kind": m.group(1), "title": m.group(2) or "",
                        "body": "\n".join(body).strip(), "asked": asked})
            asked = []
            continue
        i += 1
    return out


def _page(lang: str, page: str) -> str:
    return (ROOT / "docs" / lang / f"{page}.md").read_text(encoding="utf-8")


def pages_with_exercises(lang: str) -> dict[str, list[dict]]:
    found = {}
    for md in sorted((ROOT / "docs" / lang).glob("*.md")):
        if ex := exercises(md.read_text(encoding="utf-8")):
            found[md.stem] = ex
    return found


# ------------------------------------------------------------------ every exercise has a solution


def test_pages_with_exercises_are_the_same_in_both_languages():
    zh, en = pages_with_exercises("zh"), pages_with_exercises("en")
    assert set(zh) == set(en)
    assert set(PAGES_WITH_EXERCISES) <= set(zh), f"exercises lost on {set(PAGES_WITH_EXERCISES) - set(zh)}"
    for page in zh:
        assert len(zh[page]) == len(en[page]), (page, len(zh[page]), len(en[page]))
        assert [e["section"] for e in zh[page]] == [e["section"] for e in en[page]], page


@pytest.mark.parametrize("lang", LANGS)
def test_every_exercise_has_a_collapsible_solution(lang):
    for page, blocks in pages_with_exercises(lang).items():
        for e in blocks:
            where = f"{lang}/{page}.md: {e['title'] or e['section']!r}"
            assert e["kind"] == "question", f"{where}: a solution is a ??? question block (closed), got {e['kind']}"
            assert len(e["body"]) > 80, f"{where}: the solution is missing or a stub"
            if e["asked"]:  # questions asked in the open: answered one by one, in order
                answered = re.findall(r"^(\d+)\. ", e["body"], flags=re.M)
                assert answered == [str(n) for n in range(1, len(e["asked"]) + 1)], \
                    f"{where}: {len(e['asked'])} questions asked, answers numbered {answered}"


@pytest.mark.parametrize("lang", LANGS)
def test_every_solution_links_to_its_evidence(lang):
    """A reasoned answer points at what backs it: a section of this site (page#anchor or #anchor)."""
    missing = [f"{page}.md: {e['title']!r}" for page, blocks in pages_with_exercises(lang).items() for e in blocks
               if not re.search(r"\]\((?:[\w-]+\.md)?#[\w-]+\)", e["body"])]
    assert not missing, f"{lang}: solutions without a link to their evidence:\n" + "\n".join(missing)


def test_the_parser_sees_a_missing_solution():
    """The check above fails on a page whose exercise has no solution body, or skips one of several."""
    page = ('## Exercises { #exercises }\n\n??? question "1. Why?"\n\n## Next { #next }\n\n'
            '??? question "Not an exercise"\n    Because of a long and careful reason that is not counted here.\n')
    (e,) = exercises(page)
    assert e["body"] == "" and e["section"] == "exercises"
    asked = "## Try it { #exercise }\n\n1. One?\n2. Two?\n\n??? question \"Answers\"\n    1. One.\n"
    (e,) = exercises(asked)
    assert len(e["asked"]) == 2 and re.findall(r"^(\d+)\. ", e["body"], flags=re.M) == ["1"]


# ------------------------------------------------------------------ no typed numbers


def typed_numbers(block: dict) -> list[str]:
    """Numbers a solution types instead of computing: decimals, percentages and whole numbers from 10 up,
    outside value/table directives, code, link targets, equation and table references and years; a
    number the question itself states (the exercise's given) is allowed."""
    body = DIRECTIVE.sub(" ", block["body"])
    body = re.sub(r"`[^`]*`", " ", body)
    body = re.sub(r"\]\([^)]*\)", "]", body)
    body = re.sub(r"(式|Eq\.) \(\d+\)|(表|Table) \d+|\b(19|20)\d\d\b", " ", body)
    given = set(re.findall(r"\d+(?:\.\d+)?%?", block["title"]))
    found = re.findall(r"(?<![\w.^_{])(?<![A-Za-z]-)(\d+\.\d+%?|\d+%|[1-9]\d+)(?![\w])", body)
    return [n for n in found if n not in given]


@pytest.mark.parametrize("lang", LANGS)
def test_solutions_compute_their_numbers(lang):
    bad = []
    for page, blocks in pages_with_exercises(lang).items():
        for e in blocks:
            bad += [f"{lang}/{page}.md {e['title']!r}: {n}" for n in typed_numbers(e) if (page, n) not in QUOTED]
    assert not bad, "numbers typed into solutions (use [[value: …]] or [[table: …]]):\n" + "\n".join(bad)


def test_the_typed_number_check_sees_the_old_hand_computed_solution():
    """The formulas page's first solution as it was before it used values: its numbers are caught."""
    old = {"title": "1. 对 $x = (1, 1, 1, 5)$ 手算 LayerNorm", "body":
           r"$\mu = 2$，$\sigma^2 = (1+1+1+9)/4 = 3$，$\sigma = \sqrt{3} \approx 1.732$，所以 "
           r"$\mathrm{LN}(x) \approx (-0.577, -0.577, -0.577, 1.732)$。"}
    assert {"1.732", "0.577"} <= set(typed_numbers(old))
    new = {"title": old["title"], "body": "$\\sigma$ = [[value: formulas.ex.std]]，`np.array([1., 1, 1, 5])`"}
    assert typed_numbers(new) == []


@pytest.mark.parametrize("lang", LANGS)
def test_every_solution_number_is_a_registered_directive(lang):
    names, tables = set(values.names()), set(values.table_names())
    for page, blocks in pages_with_exercises(lang).items():
        for e in blocks:
            for kind, name in DIRECTIVE.findall(e["body"]):
                assert name in (names if kind == "value" else tables), f"{lang}/{page}.md: unknown {kind} {name}"


# ------------------------------------------------------------------ the numbers are right

X = np.array([1.0, 1.0, 1.0, 5.0])


def test_layer_norm_by_hand_matches_the_formula():
    mu = X.mean()
    var = ((X - mu) ** 2).mean()
    y = (X - mu) / math.sqrt(var + 1e-5)
    assert values.get("formulas.ex.mean") == fmt(mu, 0) == "2"
    assert values.get("formulas.ex.var") == fmt(var, 0) == "3"
    assert values.get("formulas.ex.std") == fmt(math.sqrt(3), 3)
    assert values.get("formulas.ex.centred") == fmt_vec(X - mu, 0)
    assert values.get("formulas.ex.y") == fmt_vec(y, 3)
    assert values.get("formulas.ex.l2") == fmt(math.sqrt(len(X)), 2)
    # the question's vector is the one the build computes with
    assert "(1, 1, 1, 5)" in _page("zh", "formulas") and "(1, 1, 1, 5)" in _page("en", "formulas")


@pytest.mark.parametrize("lang", LANGS)
def test_shift_table_layer_norm_unchanged_rms_norm_toward_ones(lang):
    t = values.table("formulas.ex.shift", lang)
    shifts = [float(r[0]) for r in t.rows]
    assert shifts[0] == 0 and 10 in shifts, "the table starts at x itself and holds the exercise's shift"
    assert len({r[1] for r in t.rows}) == 1, "LayerNorm(x + c) must not depend on c"
    gaps = []
    for c, row in zip(shifts, t.rows):
        z = X + c
        assert row[2] == fmt_vec(z / np.sqrt(np.mean(z ** 2) + 1e-6), 2) or \
            row[2] == fmt_vec(z / np.sqrt(np.mean(z ** 2)), 2), (c, row)
        gaps.append(float(np.abs(z / np.sqrt(np.mean(z ** 2)) - 1).max()))
    assert gaps == sorted(gaps, reverse=True), "RMSNorm(x + c) creeps toward the all-ones vector"
    assert values.get("formulas.ex.shift_ln_change") == "0"


def test_deeper_stack_table_extends_the_pages_measurement(built_cache):
    """The 12-layer row is the toll-booth page's own measurement (its value), the deeper rows rerun it. The
    measurements at every depth are read from the build's cache (build tier)."""
    from normref.experiments.toll_booth import GRAD, grad_per_layer

    t = values.table("toll.ex.depth", "en")
    by_layers = {int(r[0]): r for r in t.rows}
    assert GRAD["n_layer"] in by_layers and 24 in by_layers, "the page's depth and the exercise's 24"
    assert by_layers[GRAD["n_layer"]][3] == values.get("grad.last_post_over_pre")
    g = grad_per_layer(n_layer=24)
    assert by_layers[24][1] == fmt(float(g["post"].mean(0)[-1]), 2)
    assert by_layers[24][2] == fmt(float(g["pre"].mean(0)[-1]), 2)
    ratios = [float(r[3]) for r in t.rows]
    assert ratios == sorted(ratios), "the last-layer gap widens with depth"
    widen = float(values.get("toll.ex.widen"))
    assert abs(widen - ratios[1] / ratios[0]) < 0.05
    assert values.get("toll.ex.sqrt2") == "1.41"


def test_final_norm_layouts_are_read_from_the_models():
    from normref.blocks import PLACEMENTS

    none = values.get("placement.ex.final_norm_none", "en").replace("`", "").split(", ")
    with_ = values.get("placement.ex.final_norm_with", "en").replace("`", "").split(", ")
    assert sorted(none + with_) == sorted(PLACEMENTS)
    assert set(none) == {"post", "deepnorm"}  # the two layouts that end every block with a norm
    assert values.get("placement.ex.final_norm_with", "zh").count("、") == len(with_) - 1


def test_deepnorm_stream_share_grows_with_alpha():
    from normref.blocks import deepnorm_alpha
    from normref.experiments.exercises import stream_share

    r = stream_share()
    assert values.get("placement.ex.alpha") == fmt(deepnorm_alpha(r["n_layer"]), 2)
    # α scales the stream up and β the branch down: the stream outweighs the branch by more than α alone
    assert r["deepnorm"]["ratio"] > r["deepnorm"]["alpha"] * r["post"]["ratio"]


def test_moe_variants_start_from_the_pages_base_point(built_cache):  # the page's run, as the build computed it
    from normref.experiments.exercises import moe_variants

    r = moe_variants()
    # Renormalized, the recomputed base point is the K3 page's own measurement.
    assert values.get("moe.ex.renorm_cv_u") == values.get("moe.cv_u")
    assert r["no_renorm"]["cv_u_kept"] > r["no_renorm"]["cv_u"], "dropping the renormalization adds spread"
    assert 0 < r["no_renorm"]["kept_mean"] < 1
    assert r["no_renorm"]["cv_u_kept_normed"] < 0.05, "and the RMSNorm removes it"
    assert 0 < r["top1_identical"]["cv_u_over_z2"] < r["top1_identical"]["cv_u"]


# ------------------------------------------------------------------ the built pages


def _solutions_html(site, lang: str, page: str) -> list:
    html = (lang_root(site, lang) / page / "index.html").read_text(encoding="utf-8")
    art = BeautifulSoup(html, "html.parser").find("article")
    out, inside = [], False
    for el in art.find_all(["h1", "h2", "h3", "h4", "details"]):
        if el.name != "details":
            inside = el.get("id") in EXERCISE_IDS if el.name in ("h2", "h1") or not inside else inside
            continue
        if inside and el.find_parent("details") is None and el.find_parent("aside") is None:  # not the citation
            out.append(el)
    return out


@pytest.mark.parametrize("lang", LANGS)
def test_built_solutions_are_closed_details_holding_their_numbers(site, lang):
    for page, blocks in pages_with_exercises(lang).items():
        built = _solutions_html(site, lang, page)
        assert len(built) == len(blocks), (lang, page, len(built), len(blocks))
        for el, e in zip(built, blocks):
            assert not el.has_attr("open"), (lang, page, e["title"])
            assert "question" in el.get("class", [])
            for tag in el.find_all(["annotation", "math", "script"]):
                tag.decompose()
            text = re.sub(r"\s+", "", el.get_text(" "))

            def squeezed(s: str) -> str:
                return re.sub(r"\s+", "", s.replace("`", ""))

            for kind, name in DIRECTIVE.findall(e["body"]):
                if kind == "value":
                    assert squeezed(values.get(name, lang)) in text, (lang, page, name)
                else:
                    for row in values.table(name, lang).rows:
                        assert all(squeezed(cell) in text for cell in row), (lang, page, name, row)


def test_a_table_directive_inside_a_solution_stays_inside_it():
    """A multi-line expansion on an indented line is indented as a whole (else it ends the details block)."""
    from normsite import directives

    md = '??? question "Q"\n    Text.\n\n    [[table: formulas.ex.shift]]\n\n    After.\n'
    out = directives.expand(md, "en", "formulas.md")
    body = out.split("\n")[3:-3]
    assert len(body) == len(values.table("formulas.ex.shift", "en").rows) + 2
    assert all(line.startswith("    |") for line in body), body
    flat = directives.expand("[[table: formulas.ex.shift]]", "en", "formulas.md")
    assert flat.startswith("| ") and "\n|" in flat  # unindented stays unindented
