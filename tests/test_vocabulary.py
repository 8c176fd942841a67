"""One vocabulary, one voice: the glossary's banned variants never appear on a page.

The glossary (normsite/content/glossary.yml) is the site's dictionary: each term has one
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

import functools
import re
from pathlib import Path

import pytest
import yaml

from normref import figures
from normsite.content import glossary as gl
from support import LANGS, figure_texts_without_weights

ROOT = Path(__file__).resolve().parent.parent
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


GAP = "…"  # in a banned variant: up to a few more characters of the same clause (融合…算子 catches 融合的归一化算子)
_GAP = {"zh": r"[^\s，。；：、！？“”（）()]{0,6}?", "en": r"(?:[\w-]+\s+){0,2}?"}


# The helpers below read only the glossary (loaded once, normsite.content.glossary.default), so each answer is kept
# for the session: _hits runs once per page, card and caption, about 700 texts in all.
@functools.lru_cache(maxsize=None)
def _pattern(variant: str, lang: str = "zh") -> re.Pattern:
    parts = [re.escape(p.strip()).replace(r"\ ", r"\s+") for p in variant.split(GAP)]
    pat = (r"\s*" + _GAP[lang] + r"\s*" if lang == "en" else _GAP[lang]).join(parts) if len(parts) > 1 else parts[0]
    if re.match(r"[A-Za-z0-9]", variant):
        pat = r"(?<![A-Za-z0-9_-])" + pat
    if re.search(r"[A-Za-z0-9]$", variant):
        pat += r"(?![A-Za-z0-9_])"
    return re.compile(pat)


@functools.lru_cache(maxsize=None)
def _banned(lang: str) -> dict[str, str]:
    return gl.default().banned(lang)


@functools.lru_cache(maxsize=None)
def _house_names(lang: str) -> list[str]:
    """The glossary's own names that contain a banned variant or an alias (高带宽显存 holds 显存), longest first.

    In Chinese prose both names count (a zh page writes LayerNorm and Pre-LN too)."""
    g = gl.default()
    names = {t.name[lang] for t in g.terms} | ({t.name["en"] for t in g.terms} if lang == "zh" else set())
    others = {part for v in set(_banned(lang)) | set(_aliases(lang)) for part in v.split(GAP)}
    return sorted((n for n in names if any(v in n and v != n for v in others)), key=len, reverse=True)


@functools.lru_cache(maxsize=None)
def _aliases(lang: str) -> dict[str, str]:
    """{alias: what to write instead}: the aliases prose may not use (prose uses the glossary's name).

    An alias is there for search and for the glossary entry's alias line. English prose is checked
    for aliases in Latin script, Chinese prose for all of them; symbols (γ, σ², W↓) are left alone,
    and so is a term's English name on a Chinese page (a zh page writes LayerNorm) unless the
    term bans it.
    """
    g = gl.default()
    names = {t.name[lang] for t in g.terms} | ({t.name["en"] for t in g.terms} if lang == "zh" else set())
    out = {}
    for t in g.terms:
        for a in t.aliases:
            if a in names or len(re.findall(r"[A-Za-z\u4e00-\u9fff]", a)) < 2 or not re.fullmatch(r"[\w\s.'-]+", a):
                continue
            if lang == "en" and gl.is_han(a):
                continue
            out[a] = f"an alias of {t.id!r}: prose writes {t.name[lang]!r}"
    return out


@functools.lru_cache(maxsize=None)
def _allowed(lang: str, source: str) -> set[str]:
    """The aliases prose_exceptions allow in ``source`` (``zh/toll-booth.md``, ``en/quiz.yml``; ``zh/print.md``
    gathers every page, so every exception of its language applies)."""
    return {e.form for e in gl.default().prose_exceptions
            if e.lang == lang and (e.covers(source) or source.endswith("/print.md"))}


# 设置 the noun (“in the same setting”, “每种设置”, a table header) is 配置; 设置 the verb (设置学习率) stays.
# The noun shows by what comes before it (的/种/个/些/新/同一/基准/训练/论文 设置) or after it (设置与/里/下/中,
# 设置相同, 设置就是, 设置各跑, 设置逐条), or by standing alone in a table cell.
SETTING_NOUN = (r"(?:[的种个些]|(?<!重)新|同一|基准|训练|论文)\s*设置|设置(?:[里下中与]|相同|就是|各跑|逐条)"
                r"|(?:^|\|)\s*设置\s*(?=\||$)")
NAT = "奈特 for nat in Chinese prose: 2.77 奈特, 奈特/字符"
SETTING = "配置 for the noun “setting” (设置 is the verb: 设置学习率)"
BOLD_SPACE = "no space after a bold lead-in: **一句话：**RMSNorm"

# Rules that are patterns rather than words: (language, pattern, what to write instead).
RULES = [
    ("zh", r"[A-Za-z]\s*等\s*[（(\d]", "authors: “Xiong 等人（2020）”"),
    ("zh", r"(?<![\w.:/-])\d+(?:\.\d+)?\s?[MBT](?![\w])", "Chinese counts with 万/亿 (约 80 亿参数), not M/B/T"),
    ("en", r"\b\d+(?:\.\d+)?\s+(?:million|billion|trillion)\b", "English counts write 8B, 135M"),
    ("zh", r"\d\s*%?\s*(?:～|~|到|至)\s*\d+(?:\.\d+)?\s*%", "a range with an en dash: 7%–64%"),
    ("en", r"\d\s*%?\s*(?:～|~)\s*\d", "a range with an en dash: 7%–64%"),
    ("zh|en", r"(?<![\w.])\d+(?:\.\d+)?\s*(?:-|—|–)\s*\d+(?:\.\d+)?\s*%", "a percent range writes % on both ends, with an en dash: 7%–64%"),
    ("zh", r"[一两几每这那]条[^，。；：\s]{0,4}?向量(?!通路|路径)", "a vector is 个: 一个隐藏向量"),
    ("zh|en", r"(?<![\w.])\d{1,3}(?:,\d{3})+(?![\d])", "thousands with a thin space, as [[value]] renders them: 24\u2009318"),
    ("zh|en", r"(?<![\w.:/#-])\d{5,}(?![\w])", "thousands with a thin space, as [[value]] renders them: 100\u2009000"),
    # The language review of 2026-12-03 (issue T): one rendering per concept in Chinese prose.
    ("zh", r"(?<![A-Za-z])nats?(?![A-Za-z])", NAT),
    ("zh", SETTING_NOUN, SETTING),
    ("zh", r"[。：！？]\*\* ", BOLD_SPACE),
]


def _hits(text: str, lang: str, source: str | None = None) -> list[tuple[int, str, str]]:
    """(line, variant, what to write) for every banned variant, alias (outside its exceptions) and rule hit.

    ``source`` names where the text is read (``zh/toll-booth.md``); without it, aliases are not checked."""
    if lang == "zh":  # an English text quoted in Chinese (a prompt, a title) is not Chinese prose
        text = re.sub(r"“[^”\u4e00-\u9fff]*”", " ", text)
    raw = text.split("\n")  # before the house names are blanked: **一句话：**Pre-LN must not read as “：**   ”
    for name in _house_names(lang):  # the house name itself is not the banned part it contains
        text = text.replace(name, " " * len(name))
    words = dict(_banned(lang))
    if source is not None:
        allowed = _allowed(lang, source)
        words.update({a: why for a, why in _aliases(lang).items() if a not in allowed and a not in words})
    lines = text.split("\n")
    out = []
    for variant, owner in words.items():
        pat = _pattern(variant, lang)
        for i, line in enumerate(lines, 1):
            if pat.search(line):
                out.append((i, variant, owner))
    for langs, rule, what in RULES:
        if lang in langs.split("|"):
            for i, line in enumerate(raw if what == BOLD_SPACE else lines, 1):
                for m in re.finditer(rule, line):
                    out.append((i, m.group(0), what))
    return out


# ---------------------------------------------------------------- the dictionary itself


def test_every_concept_has_banned_variants_where_the_site_drifted():
    g = gl.default()
    for tid, lang, variant in [("token", "zh", "token"), ("reduction", "zh", "规约"), ("fused-kernel", "zh", "融合…算子"),
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
        for line, variant, owner in _hits(prose(page.read_text(encoding="utf-8")), lang, f"{lang}/{page.name}"):
            problems.append(f"docs/{lang}/{page.name}:{line}: {variant!r} (the glossary says: {owner})")
    assert not problems, "banned variants on pages:\n  " + "\n  ".join(problems)


def _figure_text_problems(texts: dict, lang: str) -> list[str]:
    return [f"figure {name} {what}: {variant!r} ({owner})" for name, t in texts.items() for what in ("caption", "alt")
            for _, variant, owner in _hits(t[what][lang], lang, f"{lang}/figures.yml")]


@pytest.mark.parametrize("lang", LANGS)
def test_figure_captions_and_alt_texts_use_one_vocabulary(lang):
    """Every figure whose texts need no real model weights (support.figure_texts_without_weights); the others,
    with their captions' fields measured on real weights, in the test below that reads the build's cache."""
    texts, _ = figure_texts_without_weights()
    problems = _figure_text_problems(texts, lang)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("lang", LANGS)
def test_figure_captions_and_alt_texts_with_their_measured_fields_use_one_vocabulary(built_cache, lang):
    """Every figure, its captions' measured fields read from the build's cache (build tier)."""
    texts = {name: {"caption": figures.get(name).caption, "alt": figures.get(name).alt} for name in figures.names()}
    problems = _figure_text_problems(texts, lang)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("lang", LANGS)
def test_table_headers_and_other_short_texts_of_normref_use_one_vocabulary(lang):
    """normref/labels.yml (English keys, Chinese values): the tables' headers and row labels are page text too.
    (figures.yml's labels: not yet; in zh they write warmup, Lemma and, outside the analogy, 主线.)"""
    from normref import labels

    texts = [(m, en if lang == "en" else zh) for m, t in labels.texts().items() for en, zh in t.items()]
    problems = [f"labels.yml {where}: {text!r}: {v!r} ({o})" for where, text in texts
                for _, v, o in _hits(re.sub(r"\$[^$]*\$|`[^`]*`", " ", text), lang, f"{lang}/labels.yml")]
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("lang", LANGS)
def test_quiz_and_claim_ledger_use_one_vocabulary(lang):
    from normsite.content.quiz import quiz
    from normsite import ledger

    texts = [(f"quiz {q['id']}: " + " ".join([q["prompt"], q["explain"], *q["options"]]), "quiz") for q in quiz(lang)]
    texts += [(f"claim {c.id}: {c.claim[lang]} {c.why[lang]} {c.met[lang]}", "claims") for c in ledger.load().claims]
    problems = [f"{t.split(':')[0]}: {v!r} ({o})" for t, src in texts  # the label (an id) is not prose
                for _, v, o in _hits(re.sub(r"\[\[[^\]]*\]\]|\$[^$]*\$|`[^`]*`", " ", t.split(": ", 1)[1]), lang, f"{lang}/{src}.yml")]
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
        for line, variant, owner in _hits(notebook_prose(nb.read_text(encoding="utf-8")), lang, f"{lang}/notebooks"):
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
            for _, variant, owner in _hits(text, lang, f"{lang}/glossary.yml"):
                problems.append(f"glossary {t.id} {what}: {variant!r} ({owner})")
    assert not problems, "\n".join(problems)


def test_chinese_prose_has_no_space_between_two_chinese_characters():
    """A space between two Chinese characters is a leftover of an edit (“每个词元 得到”)."""
    problems = []
    for page in pages("zh"):  # the source text (prose() blanks code and math, which would leave spaces)
        text = re.sub(r"^(```|~~~).*?^\1\s*$", lambda m: "\n" * m.group(0).count("\n"),
                      page.read_text(encoding="utf-8"), flags=re.S | re.M)
        for i, line in enumerate(text.split("\n"), 1):
            if cjk_space(line) and "data-label" not in line:
                problems.append(f"docs/zh/{page.name}:{i}: {cjk_space(line)!r}")
    for t in gl.default().terms:
        for what in ("short", "definition"):
            if cjk_space(getattr(t, what)["zh"]):
                problems.append(f"glossary {t.id} {what}: {cjk_space(getattr(t, what)['zh'])!r}")
    assert not problems, "\n".join(problems)


def cjk_space(line: str) -> str | None:
    """A space between two Chinese characters, bold markers ignored (“**逐词元** 做” is “逐词元 做” to a reader)."""
    m = re.search(r"[\u4e00-\u9fff] +[\u4e00-\u9fff]", line.replace("**", ""))
    return m.group(0) if m else None


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
        for cell in art.find_all(["td", "th"]):  # a table of measurements is data, not prose: its numbers stay bare
            if re.fullmatch(r"[\d\s.,%×–−+-]*", cell.get_text()):
                cell.decompose()
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


# ---------------------------------------------------------------- page names agree


def nav_titles(lang: str) -> dict[str, str]:
    """{page: title} of the top-level nav in mkdocs.yml (zh) or mkdocs.en.yml (en)."""
    cfg = (ROOT / ("mkdocs.yml" if lang == "zh" else "mkdocs.en.yml")).read_text(encoding="utf-8")
    nav = cfg.split("\nnav:\n", 1)[1]
    out = {}
    for m in re.finditer(r'^  - "?(.+?)"?: ([\w-]+\.md)\s*$', nav, re.M):
        out.setdefault(m.group(2), m.group(1))
    return out


def reading_path_names(index_md: str) -> list[tuple[str, str]]:
    """(link text, page) of each bold link in the home page's reading path."""
    section = index_md.split("{ #reading-path }", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"\*\*\[([^\]]+)\]\(([\w-]+\.md)\)", section)


def name_problems(lang: str, index_md: str, groups: dict[str, str], h1s: dict[str, str] | None = None) -> list[str]:
    """A page goes by one name: the reading path, the glossary's group for the page and the page's own H1
    use the nav title (or its part before the colon: “读懂 K3 §2.3.1” for “读懂 K3 §2.3.1：归一化 LatentMoE”)."""
    nav = nav_titles(lang)
    problems = []
    for page, h1 in (h1s or {}).items():
        if page in nav and page != "index.md" and not re.split(r"：|: ", h1)[0] == re.split(r"：|: ", nav[page])[0]:
            problems.append(f"docs/{lang}/{page} has the H1 {h1!r}; the nav calls it {nav[page]!r}")

    def agrees(text: str, title: str) -> bool:
        return text == title or re.split(r"：|: ", title)[0] == text

    for text, page in reading_path_names(index_md):
        if page in nav and not agrees(text, nav[page]):
            problems.append(f"docs/{lang}/index.md reading path calls {page} {text!r}; the nav says {nav[page]!r}")
    for gid, page in [("placement", "placement.md")]:  # a glossary group that is also a page
        if groups.get(gid) != nav.get(page):
            problems.append(f"glossary group {gid!r} is {groups.get(gid)!r}; the nav calls {page} {nav.get(page)!r}")
    return problems


@pytest.mark.parametrize("lang", LANGS)
def test_a_page_goes_by_one_name(lang):
    groups = {g.id: g.title[lang] for g in gl.default().groups}
    h1s = {p.name: re.search(r"^# (.+?)\s*(?:\{[^}]*\})?\s*$", p.read_text(encoding="utf-8"), re.M).group(1) for p in pages(lang)}
    problems = name_problems(lang, (ROOT / "docs" / lang / "index.md").read_text(encoding="utf-8"), groups, h1s)
    assert not problems, "\n".join(problems)


def notebook_problems(lang: str, index_md: str, has_notebook: set[str]) -> list[str]:
    """The home page says which pages have a notebook: every content page is named in the paragraph that
    links the first notebook, and exactly the pages without one are named in its last sentence."""
    para = next(p for p in index_md.split("\n\n") if "notebooks/scale_invariance.py" in p)
    last = re.split(r"(?<=[。.])\s*(?=\S)", para.strip())[-1]
    problems = []
    for page, title in nav_titles(lang).items():
        if page in ("index.md", "glossary.md"):
            continue
        name = re.split(r"：|: ", title)[0].casefold()
        if name not in para.casefold():
            problems.append(f"docs/{lang}/index.md: the notebook paragraph does not say whether {page} has a notebook")
        elif (name in last.casefold()) == (page in has_notebook):
            problems.append(f"docs/{lang}/index.md: the notebook paragraph is wrong about {page}")
    return problems


@pytest.mark.parametrize("lang", LANGS)
def test_the_home_page_says_which_pages_have_a_notebook(lang):
    has = {nb.stem.replace("_", "-") + ".md" for nb in (ROOT / "docs" / lang / "notebooks").glob("*.py")} | {"index.md"}
    index = (ROOT / "docs" / lang / "index.md").read_text(encoding="utf-8")
    assert not notebook_problems(lang, index, has), notebook_problems(lang, index, has)
    # the sentence this replaced claimed a notebook for every content page
    lie = index.replace('Where the norm goes, "Can we drop the norm?", Interview, Claim ledger and Practice have none.', "").replace(
        "“归一化放在哪”“不要归一化行不行？”、面试、说法核查和练习五页没有笔记本。", "")
    assert notebook_problems(lang, lie, has)


def test_the_home_reading_path_names_every_content_page():
    for lang in LANGS:
        linked = {p for _, p in reading_path_names((ROOT / "docs" / lang / "index.md").read_text(encoding="utf-8"))}
        missing = set(nav_titles(lang)) - linked - {"index.md"}
        assert not missing, (lang, missing)


# ---------------------------------------------------------------- each rule fails on a defect


@pytest.mark.parametrize("lang, text, caught", [
    # an alias in prose, where the glossary has a name (残差主线 for 残差流, main line for residual stream)
    ("zh", "残差主线上只剩加法。", "残差主线"),
    ("zh", "放在残差通路上。", "残差通路"),
    ("en", "only an addition on the main line.", "main line"),
    ("en", "LayerNorm on the residual path does.", "residual path"),
    ("zh", "有无学习率预热", "学习率预热"),
    # a banned variant with a gap (融合…算子)
    ("zh", "融合的归一化算子把一行读进 SRAM", "融合…算子"),
    ("zh", "融合算子", "融合…算子"),
    # one warmup rendering per language
    ("zh", "有无 warmup 的小训练", "warmup"),
    # 引理/定理 in Chinese
    ("zh", "Xiong 等人的 Lemma 3 给出", "Lemma"),
    ("zh", "定理 1 与 Theorem 1", "Theorem"),
    # 等人
    ("zh", "Xiong 等（2020）的图 3", "g 等（"),
    ("zh", "Henry 等 2020", "y 等 2"),
    # number style
    ("zh", "约 8B 参数", "8B"),
    ("zh", "总参数 2.78T", "2.78T"),
    ("en", "about 8 billion parameters", "8 billion"),
    ("zh", "节省 7%～64% 的时间", "7%～64%"),
    ("zh", "节省 7% 到 64% 的时间", "7% 到 64%"),
    ("en", "57–82% of HBM bandwidth", "57–82%"),
    ("en", "about 100,000 times larger", "100,000"),
    ("zh", "大约 100000 倍", "100000"),
    # American idiom
    ("en", "and has no such through road", "through road"),
    ("en", "Think of running in a new car", "running in"),
    ("en", "Multiplying by the gain afterwards", "afterwards"),
    # Chinese calques and measure words
    ("zh", "实话实说：在这个小规模实验里", "实话实说"),
    ("zh", "在他们的设置里训练", "设置里"),
    ("zh", "是两条不同的向量", "两条不同的向量"),
    ("zh", "每个词元都有自己的一条隐藏向量", "一条隐藏向量"),
    # the language review of 2026-12-03, on sentences the pages wrote before it
    ("zh", "就算停滞（与放置实验室一页同一条线）", "放置实验室"),
    ("zh", "整个堆叠在输出头之前还要再补一个归一化", "输出头"),
    ("en", "one more norm before the output head", "output head"),
    ("zh", "再比较两个模型的 logits。", "logits"),
    ("zh", "在点积之前，先把每个头的 query 和 key 各归一化一次", "query 和 key"),
    ("zh", "和一次普通的拷贝比", "拷贝"),
    ("zh", "留出损失的单位是每字符 nat。", "nat"),
    ("zh", "瞎猜的损失是 4.72 nats/字符", "nats"),
    ("zh", "前两列是初始化时的测量，设置与放置实验室一页相同。", "设置与"),
    ("zh", "每种设置 3 个随机种子", "种设置"),
    ("zh", "不是关于论文设置的结论。", "论文设置"),
    ("zh", "和页面配图一样的设置重算一遍", "的设置"),
    ("zh", "新设置就是新的缓存条目", "新设置"),
    ("zh", "| 论文表格 | 设置 | LayerNorm |", "| 设置 "),
    ("zh", "**测不出的。** Pre-LN 的残差流", "。** "),
    ("zh", "**一句话：** RMSNorm 只除以均方根", "：** "),
])
def test_each_rule_catches_its_defect(lang, text, caught):
    found = [v for _, v, _ in _hits(text, lang, f"{lang}/index.md")]
    assert caught in found, found


@pytest.mark.parametrize("lang, text", [
    ("zh", "残差流上只剩加法；融合内核把多个算子合成一个。"),  # 融合内核 … 算子 crosses the name, not a gap
    ("zh", "Xiong 等人（2020）；Llama、Mistral 等现代模型"),  # 等 as “etc.”
    ("zh", "约 80 亿参数，7%–64%，SmolLM2-135M，arXiv:2601.18089，24\u2009318"),
    ("en", "about 8B parameters, 7%–64%, 24\u2009318, 4000 warmup steps, the direct route"),
    ("en", "Computed afterward, the residual stream"),
    ("zh", "贯穿所有层的那条隐藏向量通路；设置学习率"),
    ("zh", "设置学习率为 0.03，重新设置种子，把 ε 设置为 1e-5；配置与位置实验相同；2.77 奈特；LM 头的 logit"),
    ("zh", "**测不出的。**Pre-LN 的残差流；**一句话：**RMSNorm；signal 与 natural 这两个英文词"),
])
def test_house_style_passes(lang, text):
    assert not _hits(text, lang, f"{lang}/index.md"), _hits(text, lang, f"{lang}/index.md")


def test_values_print_counts_as_the_prose_writes_them():
    from normref import values

    assert values.count(21928) == "21\u2009928" and values.count(100000) == "100\u2009000"
    assert values.count(1024) == "1024" and values.count(576) == "576"
    assert not _hits(f"玩具模型共有 {values.count(21928)} 个参数", "zh")
    with pytest.raises(TypeError, match="n must be an int"):
        values.count(2.5)


def test_an_exception_allows_its_alias_on_its_page_only():
    assert not [v for _, v, _ in _hits("横在主线上的收费站", "zh", "zh/toll-booth.md") if v == "主线"]
    assert "主线" in [v for _, v, _ in _hits("横在主线上的收费站", "zh", "zh/formulas.md")]
    assert "main line" in [v for _, v, _ in _hits("the main line", "en", "en/formulas.md")]


def test_every_exception_gives_a_reason_and_names_an_alias():
    raw = yaml.safe_load(gl.DATA.read_text(encoding="utf-8"))
    raw["prose_exceptions"] = [{"page": "zh/toll-booth.md", "alias": "主线", "reason": ""}]
    with pytest.raises(gl.GlossaryError, match="give a reason"):
        gl.parse(raw)
    raw["prose_exceptions"] = [{"page": "zh/toll-booth.md", "alias": "高速路", "reason": "the analogy's own word"}]
    with pytest.raises(gl.GlossaryError, match="not an alias of any term"):
        gl.parse(raw)
    raw["prose_exceptions"] = [{"page": "toll-booth.md", "alias": "主线", "reason": "the analogy's own word"}]
    with pytest.raises(gl.GlossaryError, match="page must be"):
        gl.parse(raw)


def test_the_cjk_space_rule_sees_through_bold():
    assert cjk_space("归一化是**逐词元** 做的") == "元 做"
    assert cjk_space("每个词元 得到") == "元 得"
    assert cjk_space("归一化是**逐词元**做的") is None
    assert cjk_space("用 **Pre-LN** 的模型") is None


def test_the_name_rule_catches_a_reading_path_that_renames_a_page():
    index = "## 阅读路径 { #reading-path }\n\n5. **[精读 K3 §2.3.1](k3-latentmoe.md)**：归一化 LatentMoE。\n"
    groups = {"placement": "归一化放在哪里"}
    problems = name_problems("zh", index, groups)
    assert any("精读 K3 §2.3.1" in p for p in problems) and any("归一化放在哪里" in p for p in problems)
    assert name_problems("zh", "{ #reading-path }\n", {"placement": nav_titles("zh")["placement.md"]},
                         {"k3-latentmoe.md": "精读 K3 §2.3.1：归一化 LatentMoE"})
    index = "## 阅读路径 { #reading-path }\n\n5. **[读懂 K3 §2.3.1](k3-latentmoe.md)**：归一化 LatentMoE。\n"
    assert not name_problems("zh", index, {"placement": nav_titles("zh")["placement.md"]})


@pytest.mark.parametrize("lang", LANGS)
def test_practice_cards_use_one_vocabulary_and_voice(lang):
    """The practice page's cards (normsite/content/cards.yml) reach the page through [[practice]]: the glossary's
    renderings, and in Chinese full-width quotes and bold, as on every page."""
    from normsite.content import cards

    bank = cards.default()
    problems = []
    for c in bank.cards:
        for t in c.texts(lang):
            text = re.sub(r"\[\[[^\]]*\]\]|\$[^$]*\$|`[^`]*`", " ", t)
            problems += [f"card {c.id}: {v!r} ({o})" for _, v, o in _hits(text, lang, f"{lang}/cards.yml")]
            if lang == "zh" and ('"' in text or re.search(r"(?<![*\w\\])\*(?![*\s])[^*\n]+(?<![*\s])\*(?![*\w])", text)):
                problems.append(f"card {c.id}: ASCII quote or italics: {text[:60]}")
            if lang == "zh" and cjk_space(t):
                problems.append(f"card {c.id}: {cjk_space(t)!r}")
    for t in bank.topics:
        problems += [f"topic {t.id}: {v!r} ({o})" for _, v, o in _hits(getattr(t.title, lang), lang, f"{lang}/cards.yml")]
    assert not problems, "\n".join(problems)
