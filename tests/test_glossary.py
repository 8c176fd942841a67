"""The glossary: data, validation, the pages, links with tooltips, and search in both sites."""

from __future__ import annotations

import copy
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from bs4 import BeautifulSoup

from normsite.content import glossary as gl
from normsite import SiteError
from normsite import glossary as sg
from normsite.build import Site

from support import ROOT, lang_root, pages

LANGS = gl.LANGS

# Every term of the issue and the seeds, as a reader would spell it, plus what
# the other pages use. Each must be a name or alias of some entry.
REQUIRED = [
    "RMSNorm", "LayerNorm", "pre-norm", "Pre-LN", "post-norm", "Post-LN", "variance", "std",
    "standard deviation", "L2 norm", "learned gain", "γ", "gradient path", "identity path",
    "residual highway", "residual stream", "RMS", "ε", "mean-centring", "re-centering",
    "re-scaling invariance", "softmax saturation", "warmup", "Jacobian", "gradient vanishing",
    "memory-bound", "HBM", "SRAM", "fused kernel", "hidden_dim", "LatentMoE", "routed experts",
    "shared experts", "routing weights", "top-k routing", "up-projection", "W↑", "down-projection", "W↓",
    "latent dimension", "massive activations", "DeepNorm",
    # used by the pages
    "Pre-RMSNorm", "Peri-LN", "GLU", "SwiGLU", "KDA", "MLA", "roofline", "bandwidth", "learned bias",
    "token", "hidden state", "softmax", "mean", "reduction", "MoE", "gradient norm",
    # Chinese spellings of the seeds
    "均方根归一化", "层归一化", "前置归一化", "后置归一化", "方差", "标准差", "L2 范数", "可学习增益", "恒等路径",
    "残差流", "残差高速公路", "均方根", "雅可比矩阵", "梯度消失", "访存受限", "融合算子", "路由专家", "共享专家",
    "路由权重", "升投影", "降投影", "学习率预热",
]


@pytest.fixture(scope="module")
def g() -> gl.Glossary:
    return gl.load()


@pytest.fixture(scope="module")
def _parsed() -> dict:
    return yaml.safe_load(gl.DATA.read_text(encoding="utf-8"))


@pytest.fixture()
def raw(_parsed) -> dict:
    """The glossary's data as parsed, for one test to change: a copy (YAML parses it in 0.1 s; a copy takes 1 ms)."""
    return copy.deepcopy(_parsed)


def _term(raw: dict, tid: str) -> dict:
    return next(t for t in raw["terms"] if t["id"] == tid)


# ---------------------------------------------------------------- data


def test_glossary_is_complete(g):
    assert len(g) >= 30, f"only {len(g)} terms"
    for t in g.terms:
        for lang in LANGS:
            assert t.name[lang].strip() and t.short[lang].strip() and t.definition[lang].strip(), t.id
        assert gl.is_han(t.short["zh"]) and gl.is_han(t.definition["zh"]), f"{t.id}: zh text is not Chinese"
        assert not gl.is_han(t.short["en"]) and not gl.is_han(t.definition["en"]), f"{t.id}: en text has Chinese"
    forms = {f.casefold(): t.id for t in g.terms for f in t.forms()}
    missing = [r for r in REQUIRED if r.casefold() not in forms]
    assert not missing, f"terms missing from the glossary: {missing}"


def test_every_term_is_reachable_and_anchored(g):
    """Ids are anchors: unique, URL-safe; every term has a see-also or is one."""
    ids = g.ids()
    assert len(ids) == len(set(ids))
    assert all(re.fullmatch(r"[a-z0-9-]+", i) for i in ids)
    referenced = {s for t in g.terms for s in t.see_also}
    lonely = [t.id for t in g.terms if not t.see_also and t.id not in referenced]
    assert not lonely, f"terms with no see-also links in or out: {lonely}"


# ---------------------------------------------------------------- validator


BAD = {
    "missing en definition": (
        lambda r: _term(r, "rmsnorm")["definition"].pop("en"), ["'rmsnorm'", "'definition' has no 'en' text"]),
    "missing zh name": (
        lambda r: _term(r, "layernorm")["name"].update(zh=""), ["'layernorm'", "'name' has no 'zh' text"]),
    "no short at all": (
        lambda r: _term(r, "warmup").pop("short"), ["'warmup'", "'short' must be a mapping"]),
    "duplicate id": (
        lambda r: r["terms"].append(copy.deepcopy(_term(r, "rms"))), ["'rms'", "duplicate id"]),
    "alias shared by two terms": (
        lambda r: _term(r, "layernorm")["aliases"].append("RMS 归一化"), ["'layernorm'", "'RMS 归一化'", "'rmsnorm'"]),
    "alias that is another term's name (other case)": (
        lambda r: _term(r, "mean")["aliases"].append("rmsnorm"), ["'mean'", "'rmsnorm'"]),
    "alias repeating its own name": (
        lambda r: _term(r, "warmup")["aliases"].append("Learning-rate warmup"), ["'warmup'", "listed twice"]),
    "missing see-also target": (
        lambda r: _term(r, "rmsnorm")["see_also"].append("qk-clip"), ["'rmsnorm'", "see_also target 'qk-clip' is not a term"]),
    "see-also itself": (
        lambda r: _term(r, "rms")["see_also"].append("rms"), ["'rms'", "lists the term itself"]),
    "unknown group": (
        lambda r: _term(r, "rms").update(group="misc"), ["'rms'", "group 'misc'"]),
    "math in a tooltip": (
        lambda r: _term(r, "rms")["short"].update(en="Divides by $\\sqrt{d}$"), ["'rms'", "plain-text tooltip"]),
    "bad anchor id": (
        lambda r: _term(r, "rms").update(id="Root Mean Square"), ["'Root Mean Square'", "anchor"]),
    "page outside docs": (
        lambda r: _term(r, "rms").update(page="../README.md"), ["'rms'", "'page'"]),
    "jieba part hiding a sub-word": (
        lambda r: r["jieba_parts"].append("层归一化"), ["'层归一化'", "hide"]),
    "unknown key": (
        lambda r: _term(r, "rms").update(defintion={"zh": "x", "en": "y"}), ["'rms'", "unknown key"]),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_validator_rejects_bad_data_naming_the_term(raw, case):
    mutate, expected = BAD[case]
    mutate(raw)
    with pytest.raises(gl.GlossaryError) as e:
        gl.parse(raw)
    assert isinstance(e.value, ValueError)
    for piece in expected:
        assert piece in str(e.value), f"{case}: {piece!r} not in {e.value}"


def test_validator_reports_every_problem_at_once(raw):
    _term(raw, "rmsnorm")["see_also"].append("nope")
    _term(raw, "layernorm")["short"].pop("zh")
    with pytest.raises(gl.GlossaryError, match=r"2 problem") as e:
        gl.parse(raw)
    assert "'rmsnorm'" in str(e.value) and "'layernorm'" in str(e.value)


def test_load_rejects_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError):
        gl.load(tmp_path / "nope.yml")


def test_build_fails_on_a_missing_see_also_target(raw, tmp_path):
    """A GlossaryError fails the build (SiteError, which the hook reports as a PluginError) naming the term."""
    _term(raw, "pre-ln")["see_also"].append("sandwich-ln")
    bad = tmp_path / "glossary.yml"
    bad.write_text(yaml.safe_dump(raw, allow_unicode=True), encoding="utf-8")
    with pytest.raises(SiteError, match=r"'pre-ln'.*'sandwich-ln' is not a term"):
        Site("en", tmp_path, glossary_path=bad)


# ---------------------------------------------------------------- page markdown (unit)


def test_render_markdown_links_only_pages_in_the_build(g):
    without = sg.render_markdown(g, "en", {})
    with_page = sg.render_markdown(g, "en", {"formulas.md": "Formulas"})
    assert "(formulas.md)" not in without
    n = sum(1 for t in g.terms if t.page == "formulas.md")
    assert with_page.count("[Formulas](formulas.md)") == n > 0
    for t in g.terms:
        assert f"{{ #{t.id} .nr-gloss-term }}" in without
        if t.formula:
            assert f"$$\n{t.formula}\n$$" in without
    zh = sg.render_markdown(g, "zh")
    assert "### 均方根归一化（RMSNorm） { #rmsnorm .nr-gloss-term }" in zh
    assert "**中文:** 均方根归一化" in without
    with pytest.raises(ValueError, match="lang"):
        sg.render_markdown(g, "de")


# ---------------------------------------------------------------- linking (unit)


def _links(html: str) -> list[tuple[str, str]]:
    soup = BeautifulSoup(html, "html.parser")
    return [(a["href"].split("#")[1], a.get_text()) for a in soup.select("a.nr-term")]


def test_links_inside_chinese_text_longest_first(g):
    out, ids = sg.link_terms("<p>现代模型用均方根归一化替代层归一化，归一化本身很便宜。</p>", g, "zh", "../glossary/")
    assert _links(out) == [("rmsnorm", "均方根归一化"), ("layernorm", "层归一化"), ("normalization", "归一化")]
    assert 'href="../glossary/#rmsnorm"' in out
    assert f'title="{g.get("rmsnorm").short["zh"]}"' in out
    assert ids == {"rmsnorm", "layernorm", "normalization"}


def test_links_first_occurrence_only_and_consumes_repeats(g):
    out, _ = sg.link_terms("<p>均方根归一化很简单。再说一遍均方根归一化。</p><p>RMSNorm 与 RMSNorm</p>", g, "zh", "g/")
    # the second 均方根归一化 must not link its parts 均方根 (RMS) or 归一化
    assert _links(out) == [("rmsnorm", "均方根归一化")]


def test_latin_boundaries_and_case(g):
    out, _ = sg.link_terms(
        "<p>RMSNorms and BRMS are not RMS; O(d sqrt(ln d)) is not LN. Warmup and residual streams are.</p>", g, "en", "g/"
    )
    assert _links(out) == [("rms", "RMS"), ("layernorm", "LN"), ("warmup", "Warmup"), ("residual-stream", "residual streams")]


def test_optional_space_between_chinese_and_latin_and_avoid(g):
    out, _ = sg.link_terms("<p>协方差矩阵不是方差。L2范数就是向量长度。</p>", g, "zh", "g/")
    assert _links(out) == [("variance", "方差"), ("l2-norm", "L2范数")]


def test_skips_code_headings_links_math_and_scripts(g):
    html = (
        '<h2 id="x">RMSNorm</h2><pre><code>RMSNorm</code></pre><p><code>LayerNorm</code> '
        '<a href="x">Pre-LN</a> <span class="katex"><span>Post-LN</span></span> $\\mathrm{RMS}(x)$ '
        '<span class="nr-noterm">warmup</span></p><script>var s = "<b>Jacobian</b>";</script>'
        "<!-- HBM --><p>&lt;SRAM&gt; &amp; HBM</p>"
    )
    out, ids = sg.link_terms(html, g, "en", "g/")
    assert ids == {"sram", "hbm"}
    # markup and everything skipped is byte-identical
    assert re.sub(r'<a class="nr-term"[^>]*>([^<]*)</a>', r"\1", out) == html


def test_link_terms_rejects_bad_lang(g):
    with pytest.raises(ValueError, match="lang"):
        sg.link_terms("<p>x</p>", g, "fr", "g/")


# ---------------------------------------------------------------- built pages


def _soup(path: Path) -> BeautifulSoup:
    return BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser")


@pytest.mark.parametrize("lang", LANGS)
def test_glossary_page_has_every_entry(site, g, lang):
    soup = _soup(lang_root(site, lang) / "glossary" / "index.html")
    built_pages = {str(p.relative_to(lang_root(site, lang))) for p in pages(site, lang)}
    for t in g.terms:
        h = soup.find(id=t.id)
        assert h is not None and h.name == "h3", f"{lang}: no heading #{t.id}"
        assert t.name[lang] in h.get_text(), f"{lang}: heading #{t.id} lacks its name"
        section = []
        for sib in h.find_next_siblings():
            if sib.name in ("h2", "h3"):
                break
            section.append(sib)
        text = " ".join(s.get_text(" ") for s in section)
        assert t.short[lang] in " ".join(text.split()), f"{lang}: #{t.id} lacks its short definition"
        for a in t.aliases + (t.name["zh"], t.name["en"]):
            assert a in text or a in h.get_text(), f"{lang}: #{t.id} does not show {a!r}"
        if t.formula:
            assert any(s.select(".katex-display") for s in section), f"{lang}: #{t.id} formula not typeset"
        hrefs = [a["href"] for s in section for a in s.find_all("a", href=True)]
        for sid in t.see_also:
            assert f"#{sid}" in hrefs, f"{lang}: #{t.id} lacks see-also #{sid}"
        # 'explained on' only when that page is in this build
        page_built = t.page and t.page.replace(".md", "/index.html").replace("index/index.html", "index.html") in built_pages
        explained = [h for h in hrefs if not h.startswith("#")]
        assert bool(explained) == bool(page_built), f"{lang}: #{t.id} explained-on link {explained} vs page {t.page}"


def test_anchors_are_shared_between_languages(site, g):
    ids = [{h["id"] for h in _soup(lang_root(site, lang) / "glossary" / "index.html").select("h3.nr-gloss-term")} for lang in LANGS]
    assert ids[0] == ids[1] == set(g.ids())


@pytest.mark.parametrize("lang", LANGS)
def test_pages_link_terms_with_tooltips(site, g, lang):
    root = lang_root(site, lang)
    soup = _soup(root / "index.html")
    config = json.loads(soup.find("script", id="__config").string)
    assert "content.tooltips" in config["features"]
    links = soup.select("article a.nr-term")
    assert len(links) >= 10, f"{lang}: only {len(links)} glossary links on the home page"
    seen = set()
    for a in links:
        href, tid = a["href"].split("#")
        assert href == "glossary/", a
        assert tid not in seen, f"{lang}: {tid} linked twice on one page"
        seen.add(tid)
        assert a["title"] == g.get(tid).short[lang]
        assert not a.find_parent(["h1", "h2", "h3", "h4", "h5", "h6", "code", "pre", "a"])
        assert not a.find_parent(class_=re.compile("katex"))
    # the running text in Chinese links Chinese spellings, not only Latin ones
    if lang == "zh":
        assert any(gl.is_han(a.get_text()) for a in links)
    for must in ("rmsnorm", "pre-ln", "post-ln", "layernorm"):
        assert must in seen, f"{lang}: home page does not link {must}"
    glossary_page = _soup(root / "glossary" / "index.html")
    assert not glossary_page.select("a.nr-term"), "the glossary page links its own terms explicitly"


# ---------------------------------------------------------------- search
#
# What Material for MkDocs (9.x) does with search, read from its source:
# - build time (plugin): each section (a heading with an id) becomes a doc with
#   a title and text; runs of Chinese characters are cut by jieba and joined
#   with U+200B (in every language's build);
# - browser (worker): each field is split at tags, then by `config.separator`,
#   lower-cased, and run through the pipeline (zh: nothing; en: the English
#   stop-word filter);
# - a query: runs of Chinese characters are cut greedily against the words in
#   the index (`segment`), the query is split on whitespace and the separator,
#   and every term gets a trailing wildcard (prefix match); clauses are OR-ed.
# The functions below follow that, so the tests check what a reader typing the
# query would match, not just that some string occurs in the JSON.

EN_STOP_WORDS = set(
    "a able about across after all almost also am among an and any are as at be because been but by can cannot "
    "could dear did do does either else ever every for from get got had has have he her hers him his how however "
    "i if in into is it its just least let like likely may me might most must my neither no nor not of off often "
    "on only or other our own rather said say says she should since so some than that the their them then there "
    "these they this tis to too twas us wants was we were what when where which while who whom why will with "
    "would yet you your".split()
)
_HAN_RUN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")


class SiteIndex:
    def __init__(self, path: Path):
        data = json.loads(path.read_text(encoding="utf-8"))
        self.config = data["config"]
        self.docs = {d["location"]: d for d in data["docs"]}
        self.sep = re.compile(self.config["separator"])
        self.stop = EN_STOP_WORDS if "stopWordFilter" in self.config["pipeline"] and self.config["lang"] == ["en"] else set()
        self.tokens = {loc: self._tokens(d) for loc, d in self.docs.items()}
        self.vocabulary = set().union(*self.tokens.values())

    def _tokens(self, doc) -> set[str]:
        out = set()
        for field in ("title", "text"):
            for text in re.split(r"<[^>]*>", doc.get(field, "")):
                out.update(t.lower() for t in self.sep.split(text) if t)
        return out - self.stop

    def segment(self, query: str) -> list[str]:
        """Material's `segment()` (search/query/segment): greedy cut of a Chinese run by index words."""
        n = len(query)
        cuts = [0] * n
        for i in range(n):
            for j in range(i + 1, n):  # (sic) j < n, as in Material
                if query[i:j] in self.vocabulary:
                    cuts[i] = j - i
        segments: dict[str, None] = {}
        stack, s = [0], 1
        while s > 0:
            s -= 1
            p = stack[s]

            def push(v):
                nonlocal s
                if s < len(stack):
                    stack[s] = v
                else:
                    stack.append(v)
                s += 1

            for q in range(1, cuts[p]):
                if cuts[p + q] > cuts[p] - q:
                    segments[query[p:p + q]] = None
                    push(p + q)
            q = p + cuts[p]
            if q < n and cuts[q] and q < n - 1:
                push(q)
            segments[query[p:q]] = None
        return [query] if "" in segments else list(segments)

    def client_terms(self, query: str) -> list[str]:
        """The prefix terms the browser searches for (wildcards stripped), stop words dropped."""
        q = _HAN_RUN.sub(lambda m: "* ".join(self.segment(m.group(0))), query)
        terms = []
        for part in q.strip().split():
            terms += [t.strip("*").lower() for t in self.sep.split(part) if t.strip("*")]
        return [t for t in terms if t not in self.stop]

    def jieba_terms(self, query: str) -> list[str]:
        """The query cut as the build cuts text: jieba (same added words), then the separator."""
        tok = sg.segmenter()
        q = _HAN_RUN.sub(lambda m: "\u200b" + "\u200b".join(tok.cut(m.group(0))) + "\u200b", query)
        return [t.lower() for t in self.sep.split(q) if t and t.lower() not in self.stop]

    def finds(self, location: str, terms: list[str]) -> list[str]:
        """The terms that do NOT prefix-match any token of the doc at ``location``."""
        toks = self.tokens[location]
        return [t for t in terms if not any(k.startswith(t) for k in toks)]


@pytest.fixture(scope="module")
def indexes(site) -> dict[str, SiteIndex]:
    return {lang: SiteIndex(lang_root(site, lang) / "search" / "search_index.json") for lang in LANGS}


def test_search_cases_cover_every_name_alias_and_subword(g):
    cases = sg.search_cases(g)
    for lang in LANGS:
        got = {(c.term, c.query) for c in cases if c.lang == lang}
        for t in g.terms:
            for q in t.forms():
                assert (t.id, q) in got
        assert ("layernorm", "归一化") in got and ("rmsnorm", "归一化") in got
        assert ("rmsnorm", "均方根") in got  # the jieba part makes 均方根 a sub-word of 均方根归一化
    assert all(c.anchor == f"glossary/#{c.term}" for c in cases)


def test_every_term_and_alias_is_found_by_search_in_both_sites(indexes):
    failures = []
    cases = sg.search_cases()
    for c in cases:
        idx = indexes[c.lang]
        if c.anchor not in idx.docs:
            failures.append(f"{c.lang}: no search section {c.anchor}")
            continue
        # In the browser the clauses are OR-ed: the entry is a result when one of them matches.
        browser = idx.client_terms(c.query)
        if not browser or len(idx.finds(c.anchor, browser)) == len(browser):
            failures.append(f"{c.lang}: {c.kind} {c.query!r} (browser terms {browser}) does not return {c.anchor}")
        # And the entry really holds the name: every word of it, cut as the build cuts text.
        words = idx.jieba_terms(c.query)
        missed = idx.finds(c.anchor, words)
        if not words or missed:
            failures.append(f"{c.lang}: {c.kind} {c.query!r} (words {words}) not all in {c.anchor}: {missed}")
    assert not failures, f"{len(failures)} of {len(cases)} search cases fail:\n" + "\n".join(failures[:40])


def test_chinese_subword_finds_its_compounds(indexes):
    for lang in LANGS:
        idx = indexes[lang]
        hits = {loc.split("#")[1] for loc, toks in idx.tokens.items()
                if loc.startswith("glossary/#") and all(any(k.startswith(t) for k in toks) for t in idx.client_terms("归一化"))}
        assert {"layernorm", "rmsnorm", "pre-ln", "post-ln", "normalization"} <= hits, f"{lang}: 归一化 finds {sorted(hits)}"


def test_search_indexes_are_one_language_each(site, indexes):
    zh, en = indexes["zh"], indexes["en"]
    assert zh.config["lang"] == ["zh"] and en.config["lang"] == ["en"]
    assert not [loc for loc in zh.docs if loc.startswith("en/")], "Chinese index holds English pages"
    for lang, idx in indexes.items():
        root = lang_root(site, lang)
        built = {str(p.relative_to(root)) for p in pages(site, lang)}
        for loc in idx.docs:
            page = loc.split("#")[0]
            assert (page + "index.html" if page.endswith("/") or not page else page) in built, f"{lang}: {loc} is not a page of this site"
    # page titles: Chinese in the Chinese index, none in the English one
    for loc, d in zh.docs.items():
        if "#" not in loc and not loc.startswith("notebooks/"):
            assert gl.is_han(d["title"]), f"zh index page {loc!r} has title {d['title']!r}"
    for loc, d in en.docs.items():
        if "#" not in loc:
            assert not gl.is_han(d["title"]), f"en index page {loc!r} has title {d['title']!r}"
    def han(s: str) -> int:
        return sum(len(run) for run in _HAN_RUN.findall(s))

    # only the glossary (Chinese names, for readers who search them) may hold Chinese on the English site
    en_text = " ".join(d["text"] + d["title"] for loc, d in en.docs.items() if not loc.startswith("glossary/"))
    assert han(en_text) == 0, "Chinese text in English pages of the English index"
    zh_text = " ".join(d["text"] for loc, d in zh.docs.items() if loc.split("#")[0] == "")
    assert han(zh_text) > 300, "the Chinese home page is not Chinese in the Chinese index"


NAME_RANK_MAX = 5  # a name's entry must be among the first results on the glossary page


@pytest.mark.skipif(shutil.which("node") is None, reason="needs node to run Material's search worker")
def test_materials_own_search_worker_finds_every_entry(site):
    """Ask the search code the browser runs (Material's worker, in node) every query of search_cases().

    Every query must return its entry; a zh or en name must put its entry among the
    first NAME_RANK_MAX results on the glossary page. (A browser must fire keyup
    after typing Chinese: Material reads the query on keyup, and text inserted by
    an IME or by Playwright's insertText fires none.)
    """
    cases = sg.search_cases()
    failures = []
    for lang in LANGS:
        lc = [c for c in cases if c.lang == lang]
        proc = subprocess.run(
            ["node", str(ROOT / "tests" / "material_search.js"), str(lang_root(site, lang))],
            input=json.dumps([c.query for c in lc]), capture_output=True, text=True, timeout=300,
        )
        assert proc.returncode == 0, proc.stderr[-2000:]
        for c, groups in zip(lc, json.loads(proc.stdout)):
            group = next((g for g in groups if c.anchor in g), None)
            if group is None:
                failures.append(f"{lang}: {c.kind} {c.query!r} does not return {c.anchor}")
            elif c.kind.endswith("name") and group.index(c.anchor) >= NAME_RANK_MAX:
                failures.append(f"{lang}: {c.kind} {c.query!r} ranks {c.anchor} at {group.index(c.anchor) + 1}: {group[:6]}")
    assert not failures, "\n".join(failures)


def test_jieba_is_taught_once_per_process_and_afresh_when_the_words_change():
    """The search and the term links share jieba's tokenizer (one dictionary load). Teaching it twice
    would move its total frequency (add_word adds to it), so a `mkdocs serve` rebuild would segment
    differently from a fresh build: it is taught once, and from a fresh dictionary when the words change."""
    import jieba

    parts = gl.default().jieba_parts
    # What a fresh process's tokenizer totals, taught the parts, then one word more (one dictionary load, 0.8 s)
    fresh = jieba.Tokenizer()
    for p in parts:
        fresh.add_word(p)
    fresh_total = fresh.total
    fresh.add_word("逐词元归一化")
    tok = sg.segmenter()
    total = tok.total
    assert sg.segmenter() is tok is jieba.dt and tok.total == total, "taught a second time"
    assert tok.total == fresh_total
    more = tuple(parts) + ("逐词元归一化",)
    try:
        changed = sg.taught(more)
        assert changed is jieba.dt and changed.total == fresh.total
        assert "逐词元归一化" in changed.lcut("先做逐词元归一化再相加")
    finally:
        back = sg.segmenter()
    assert back.total == total and "逐词元归一化" not in back.FREQ


def test_the_fast_term_search_finds_what_the_full_pattern_finds():
    """_Matcher.search tries the glossary's pattern only where a term can start (its first character, in the same
    case rule, after the same look-behind): every match, on two pages' text in each language and on edge cases
    (a term inside a word, another case, Chinese beside Latin), is the one the full pattern's search finds."""
    from normsite.glossary import _matcher

    m = _matcher(gl.load())
    texts = [(ROOT / "docs" / lang / f"{page}.md").read_text(encoding="utf-8")
             for lang in ("zh", "en") for page in ("index", "toll-booth")]
    texts += ["PRE-LN and pre-ln, prelude, RMSNORM inside xRMSNorm, LayerNorms", "残差流向量与RMSNorm和 Post-LN 之间"]
    for text in texts:
        pos, n = 0, 0
        while (want := m.regex.search(text, pos)) is not None:
            got = m.search(text, pos)
            assert got is not None and (got.span(), got.lastgroup) == (want.span(), want.lastgroup), text[want.start():][:40]
            pos, n = want.start() + 1, n + 1
        assert m.search(text, pos) is None
        assert n or len(text) < 100, "no term found in a page"
