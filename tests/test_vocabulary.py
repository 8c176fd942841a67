"""One vocabulary, one voice: the glossary's banned variants never appear on a page.

The glossary (normref/glossary.yml) is the site's dictionary: each term has one
Chinese and one English name, and lists under ``banned`` the variants that must
not be used instead (per language); its ``style`` block lists house-style bans
that belong to no single term (British spellings, translated phrasing). This
test fails, naming the page, the line and the variant, when a page's prose uses
one. It reads

- every page's Markdown (docs/<lang>/*.md), prose only: code, math, directives,
  HTML tags and link targets are left out;
- the figure captions and alt texts, the quiz and the claim ledger, which reach
  the pages through directives;
- the built pages' prose, which also holds every value dropped into a sentence
  (marked ``build``).

It also checks the Chinese voice: full-width “” quotes, bold rather than
italics for emphasis, and tooltips without long 的-chains.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from normref import figures
from normref import glossary as gl

ROOT = Path(__file__).resolve().parent.parent
LANGS = ("zh", "en")
FRONT = re.compile(r"\A---\n(.*?)\n---\n", re.S)


def prose(md: str) -> str:
    """The prose of a page's Markdown, line by line (line numbers kept).

    Kept: the front matter's description, headings, paragraphs, list items,
    table cells, admonition and question titles. Removed: code (fenced and
    inline), math, [[directives]], HTML tags and their attributes, link
    targets, heading ids, and <span class="nr-noterm"> (quoted titles and prompts).
    """
    lines = md.split("\n")
    m = FRONT.match(md)
    if m:
        n = m.group(0).count("\n")
        meta = yaml.safe_load(m.group(1)) or {}
        lines = [str(meta.get("description", ""))] + [""] * (n - 1) + lines[n:]
    text = "\n".join(lines)

    def blank(mt):  # keep the line count
        return "\n" * mt.group(0).count("\n")

    text = re.sub(r"^(```|~~~).*?^\1\s*$", blank, text, flags=re.S | re.M)
    text = re.sub(r"\$\$.*?\$\$", blank, text, flags=re.S)
    text = re.sub(r"`[^`\n]*`", " ", text)
    text = re.sub(r"\$[^$\n]+\$", " ", text)
    text = re.sub(r"\[\[[^\]]*\]\]", " ", text)
    text = re.sub(r'<span class="nr-noterm">.*?</span>', " ", text, flags=re.S)
    text = re.sub(r"<[^>]*>", blank, text, flags=re.S)
    text = re.sub(r"\]\([^)\n]*\)", "]", text)
    text = re.sub(r"\{[^{}\n]*#[\w-]+[^{}\n]*\}", " ", text)
    # Admonition and question titles: keep the title, not the syntax's quotes.
    text = re.sub(r'^(\s*)(!!!|\?\?\?\+?)\s+[\w-]+(?:\s+inline)?\s+"(.*)"\s*$', r"\1\3", text, flags=re.M)
    return text


def pages(lang: str) -> list[Path]:
    return sorted((ROOT / "docs" / lang).glob("*.md"))  # notebooks/ are not prose pages


def _pattern(variant: str) -> re.Pattern:
    pat = re.escape(variant).replace(r"\ ", r"\s+")
    if re.match(r"[A-Za-z0-9]", variant):
        pat = r"(?<![A-Za-z0-9_-])" + pat
    if re.search(r"[A-Za-z0-9]$", variant):
        pat += r"(?![A-Za-z0-9_])"
    return re.compile(pat)


def _banned(lang: str) -> dict[str, str]:
    return gl.default().banned(lang)


def _house_names(lang: str) -> list[str]:
    """The glossary's own names that contain a banned variant (高带宽显存 holds 显存), longest first."""
    banned = _banned(lang)
    names = {t.name[lang] for t in gl.default().terms}
    return sorted((n for n in names if any(v in n and v != n for v in banned)), key=len, reverse=True)


def _hits(text: str, lang: str) -> list[tuple[int, str, str]]:
    if lang == "zh":  # an English text quoted in Chinese (a prompt, a title) is not Chinese prose
        text = re.sub(r"“[^”\u4e00-\u9fff]*”", " ", text)
    for name in _house_names(lang):  # the house name itself is not the banned part it contains
        text = text.replace(name, " " * len(name))
    out = []
    for variant, owner in _banned(lang).items():
        pat = _pattern(variant)
        for i, line in enumerate(text.split("\n"), 1):
            if pat.search(line):
                out.append((i, variant, owner))
    return out


# ---------------------------------------------------------------- the dictionary itself


def test_every_concept_has_banned_variants_where_the_site_drifted():
    g = gl.default()
    for tid, lang, variant in [("token", "zh", "token"), ("reduction", "zh", "规约"), ("fused-kernel", "zh", "融合算子"),
                               ("hbm", "zh", "显存"), ("residual-stream", "zh", "主干"), ("residual-stream", "en", "main path"),
                               ("latent-dim", "zh", "潜宽度"), ("hidden-dim", "zh", "隐藏宽度"), ("hidden-dim", "en", "hidden width"),
                               ("rescaling-invariance", "zh", "缩放不变性"), ("pre-ln", "en", "pre-norm"),
                               ("pre-rmsnorm", "en", "pre-RMSNorm"), ("normalization", "en", "normalise")]:
        assert variant in g.get(tid).banned[lang], (tid, lang, variant)
    for lang, variant in [("en", "slip road"), ("en", "Honestly"), ("en", "initialisation"), ("zh", "decoder"),
                          ("zh", "如实地说")]:
        assert variant in g.style[lang], (lang, variant)


def test_a_term_never_bans_its_own_name():
    g = gl.default()
    for t in g.terms:
        for lang in LANGS:
            assert t.name[lang] not in t.banned[lang], t.id


# ---------------------------------------------------------------- pages


@pytest.mark.parametrize("lang", LANGS)
def test_pages_use_one_vocabulary(lang):
    problems = []
    for page in pages(lang):
        for line, variant, owner in _hits(prose(page.read_text(encoding="utf-8")), lang):
            problems.append(f"docs/{lang}/{page.name}:{line}: {variant!r} (the glossary says: {owner})")
    assert not problems, "banned variants on pages:\n  " + "\n  ".join(problems)


@pytest.mark.parametrize("lang", LANGS)
def test_figure_captions_and_alt_texts_use_one_vocabulary(lang):
    problems = []
    for name in figures.names():
        spec = figures.get(name)
        for what in ("caption", "alt"):
            for _, variant, owner in _hits(getattr(spec, what)[lang], lang):
                problems.append(f"figure {name} {what}: {variant!r} ({owner})")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("lang", LANGS)
def test_quiz_and_claim_ledger_use_one_vocabulary(lang):
    from normref.data.quiz import quiz
    from normsite import ledger

    texts = [f"quiz {q['id']}: " + " ".join([q["prompt"], q["explain"], *q["options"]]) for q in quiz(lang)]
    texts += [f"claim {c.id}: {c.claim[lang]} {c.why[lang]} {c.met[lang]}" for c in ledger.load().claims]
    problems = [f"{t.split(':')[0]}: {v!r} ({o})" for t in texts for _, v, o in _hits(re.sub(r"\[\[[^\]]*\]\]|\$[^$]*\$|`[^`]*`", " ", t), lang)]
    assert not problems, "\n".join(problems)


def notebook_prose(source: str) -> str:
    """The Markdown cells of a jupytext percent-format notebook, as a page's prose (line numbers kept)."""
    out, in_md = [], False
    for line in source.split("\n"):
        if line.startswith("# %%"):
            in_md = "[markdown]" in line
            out.append("")
        elif in_md and (line.startswith("# ") or line == "#"):
            out.append(line[2:])
        else:
            out.append("")
    return prose("\n".join(out))


@pytest.mark.parametrize("lang", LANGS)
def test_notebook_prose_uses_one_vocabulary(lang):
    """The notebooks' Markdown cells are read like pages (they open in Colab without the site around them)."""
    problems = []
    for nb in sorted((ROOT / "docs" / lang / "notebooks").glob("*.py")):
        for line, variant, owner in _hits(notebook_prose(nb.read_text(encoding="utf-8")), lang):
            problems.append(f"docs/{lang}/notebooks/{nb.name}:{line}: {variant!r} (the glossary says: {owner})")
    assert not problems, "banned variants in notebooks:\n  " + "\n  ".join(problems)


def test_house_names_that_contain_a_banned_variant_are_not_hits():
    assert "高带宽显存" in _house_names("zh")
    assert not _hits("高带宽显存的带宽", "zh")
    assert _hits("显存的带宽", "zh")


@pytest.mark.parametrize("lang", LANGS)
def test_glossary_definitions_use_one_vocabulary(lang):
    """A term's tooltip and definition are prose too (its names and aliases are not: they list variants)."""
    problems = []
    for t in gl.default().terms:
        for what in ("short", "definition"):
            text = re.sub(r"`[^`]*`|\$[^$]*\$", " ", getattr(t, what)[lang])
            for _, variant, owner in _hits(text, lang):
                problems.append(f"glossary {t.id} {what}: {variant!r} ({owner})")
    assert not problems, "\n".join(problems)


def test_chinese_prose_has_no_space_between_two_chinese_characters():
    """A space between two Chinese characters is a leftover of an edit (“每个词元 得到”)."""
    pat = re.compile(r"[\u4e00-\u9fff] +[\u4e00-\u9fff]")
    problems = []
    for page in pages("zh"):  # the source text (prose() blanks code and math, which would leave spaces)
        text = re.sub(r"^(```|~~~).*?^\1\s*$", lambda m: "\n" * m.group(0).count("\n"),
                      page.read_text(encoding="utf-8"), flags=re.S | re.M)
        for i, line in enumerate(text.split("\n"), 1):
            if pat.search(line) and "data-label" not in line:
                problems.append(f"docs/zh/{page.name}:{i}: {pat.search(line).group(0)!r}")
    for t in gl.default().terms:
        for what in ("short", "definition"):
            if pat.search(getattr(t, what)["zh"]):
                problems.append(f"glossary {t.id} {what}: {pat.search(getattr(t, what)['zh']).group(0)!r}")
    assert not problems, "\n".join(problems)


def test_chinese_pages_use_full_width_quotes_and_bold():
    problems = []
    for page in pages("zh"):
        for i, line in enumerate(prose(page.read_text(encoding="utf-8")).split("\n"), 1):
            if '"' in line:
                problems.append(f"docs/zh/{page.name}:{i}: ASCII quote (use “”): {line.strip()[:60]}")
            if re.search(r"(?<![*\w\\])\*(?![*\s])[^*\n]+(?<![*\s])\*(?![*\w])", line) or re.search(r"(?<!\w)_[^_\s][^_\n]*_(?!\w)", line):
                problems.append(f"docs/zh/{page.name}:{i}: italics (use **bold**): {line.strip()[:60]}")
    assert not problems, "\n".join(problems)


def test_chinese_tooltips_have_no_long_de_chains():
    """A tooltip is read in one glance: at most two 的 in a Chinese short definition."""
    long = [(t.id, t.short["zh"]) for t in gl.default().terms if t.short["zh"].count("的") > 2]
    assert not long, long


def test_the_prose_helper_keeps_prose_and_drops_the_rest():
    md = ('---\ndescription: "A page about x"\n---\n\n# Title { #t }\n\nSome `pre-norm` code, $\\mathrm{main\\ path}$ math,\n'
          '[[value: pre-norm.x]], <span class="nr-noterm">slip road</span> and a [link](pre-norm.md).\n\n'
          '```python\nnormalise = 1\n```\n\n!!! note "Honestly"\n    body\n')
    text = prose(md)
    assert "A page about x" in text and "Title" in text and "Honestly" in text and "link" in text
    for gone in ("pre-norm", "main", "slip road", "normalise", "#t"):
        assert gone not in text, gone
    assert text.count("\n") == md.count("\n")


# ---------------------------------------------------------------- the built site


@pytest.mark.build
@pytest.mark.parametrize("lang", LANGS)
def test_built_pages_prose_uses_one_vocabulary(site, lang):
    """The built prose also holds the values dropped into sentences and the figure captions."""
    from bs4 import BeautifulSoup

    from support import pages as built_pages

    problems = []
    for html_page in built_pages(site, lang):
        rel = html_page.relative_to(site if lang == "zh" else site / "en")
        if rel.parts[0] in ("glossary", "notebooks", "404.html"):
            continue  # the glossary lists every alias on purpose; notebooks hold code output
        art = BeautifulSoup(html_page.read_text(encoding="utf-8"), "html.parser").find("article")
        if art is None:
            continue
        for tag in art.find_all(["code", "pre", "script", "style", "math", "annotation", "template"]):
            tag.decompose()
        # The print edition's glossary chapter lists every alias on purpose, as the glossary page does.
        for tag in art.select('.katex, .nr-noterm, section.nr-print-chapter[data-nr-chapter="glossary"]'):
            tag.decompose()
        for _, variant, owner in _hits(art.get_text(" "), lang):
            problems.append(f"{lang}/{rel}: {variant!r} ({owner})")
    assert not problems, "\n".join(sorted(set(problems)))


def test_validator_rejects_bad_banned_lists():
    raw = yaml.safe_load(gl.DATA.read_text(encoding="utf-8"))
    token = next(t for t in raw["terms"] if t["id"] == "token")
    token["banned"] = {"zh": ["词元"]}
    with pytest.raises(gl.GlossaryError, match="term 'token': banned\\['zh'\\] lists the term's own zh name '词元'"):
        gl.parse(raw)
    token["banned"] = {"fr": ["jeton"]}
    with pytest.raises(gl.GlossaryError, match="term 'token': 'banned' must map 'zh' and/or 'en'"):
        gl.parse(raw)
    token["banned"] = {"zh": ["规约"]}  # also banned by the term 'reduction'
    with pytest.raises(gl.GlossaryError, match="banned zh variant '规约' is also listed by"):
        gl.parse(raw)
    raw = yaml.safe_load(gl.DATA.read_text(encoding="utf-8"))
    raw["style"] = {"en": "towards"}
    with pytest.raises(gl.GlossaryError, match="style"):
        gl.parse(raw)
    with pytest.raises(ValueError, match="lang"):
        gl.default().banned("fr")
