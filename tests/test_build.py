"""The built site: both languages, strict, offline, cached, and saying what normref computes.

The site-layer unit tests further down (normsite.build.Site on a string, no build)
use no built site, so they run in the fast tier."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from normref import experiments, figures, values
from normsite import SiteError, ahead, assets
from normsite.build import Site
from support import LANGS, ROOT, lang_root, pages, tree_differences
URL = re.compile(r"""(?:src|href|srcset|content)\s*=\s*["']\s*((?:https?:)?//[^"'\s]+)""", re.I)
CSS_URL = re.compile(r"""url\(\s*["']?((?:https?:)?//[^)"']+)""", re.I)
ABS_URL = re.compile(r"https?://[A-Za-z0-9.\-]+[^\s\"'`)]*")

# URLs inside Material's own JS bundle, each fetched only under a condition our
# site never meets (asserted below): mermaid diagrams, a missing ResizeObserver
# (every current browser has it), a repo_url for GitHub facts; the rest are
# comments and licence strings.
MATERIAL_BUNDLE_URLS = (
    "https://unpkg.com/mermaid", "https://unpkg.com/resize-observer-polyfill",
    "https://api.github.com/users/", "https://api.github.com/repos/",
    "https://clipboardjs.com/", "http://lunrjs.com", "http://tartarus.org/", "https://bit.ly/2s3ChXG",
)
XML_NAMESPACES = ("http://www.w3.org/",)


def rel_pages(site: Path, lang: str) -> set[str]:
    root = lang_root(site, lang)
    return {str(p.relative_to(root)) for p in pages(site, lang)}


def test_both_languages_built(site):
    zh = (site / "index.html").read_text(encoding="utf-8")
    en = (site / "en" / "index.html").read_text(encoding="utf-8")
    assert '<html lang="zh"' in zh and '<html lang="en"' in en
    assert "归一化演进" in zh and "How normalization evolved" in en


def test_zh_and_en_page_sets_match(site):
    zh, en = rel_pages(site, "zh"), rel_pages(site, "en")
    assert zh == en, f"only zh: {sorted(zh - en)}; only en: {sorted(en - zh)}"
    assert len(zh) >= 3


def test_no_resource_from_another_host(site):
    offenders = []
    for f in site.rglob("*"):
        if f.suffix == ".html":
            text = f.read_text(encoding="utf-8")
            # <a href> to a paper is a link the reader may follow, not a request the page makes.
            text = re.sub(r"<a\s[^>]*>", "<a>", text)
            # rel=canonical/alternate name this page's own public address; not a request.
            # (hreflang links are rel="alternate " on purpose; see overrides/main.html.)
            text = re.sub(r'<link\s[^>]*rel="(?:canonical|alternate)\s*"[^>]*>', "", text)
            offenders += [(f, u) for u in URL.findall(text)]
            offenders += [(f, u) for u in CSS_URL.findall(text)]
        elif f.suffix == ".css":
            offenders += [(f, u) for u in CSS_URL.findall(f.read_text(encoding="utf-8"))]
        elif f.suffix == ".js":
            for u in ABS_URL.findall(f.read_text(encoding="utf-8")):
                if u.startswith(XML_NAMESPACES):
                    continue
                if "bundle." in f.name and u.startswith(MATERIAL_BUNDLE_URLS):
                    continue
                if "/lunr/" in str(f) or "/workers/" in str(f):
                    continue  # licence headers of the search engine, never fetched
                offenders.append((f, u))
    assert not offenders, "\n".join(f"{p.relative_to(site)}: {u}" for p, u in offenders[:20])
    # The conditions under which Material's bundle would fetch those URLs never hold here.
    for lang in LANGS:
        for p in pages(site, lang):
            assert 'class="mermaid"' not in p.read_text(encoding="utf-8")
    # A repository link exists only in a build for a repository (NORMREF_REPO_URL; tests/test_repo_links.py),
    # and even then it is not Material's "source" component, which fetches stars and forks from api.github.com.
    assert re.search(r"^repo_url: !ENV \[NORMREF_REPO_URL, null\]$", (ROOT / "mkdocs.yml").read_text(encoding="utf-8"), re.M)
    for lang in LANGS:
        for p in pages(site, lang):
            assert 'data-md-component="source"' not in p.read_text(encoding="utf-8"), p


def test_math_is_typeset_at_build_time(site):
    for lang in LANGS:
        html = (lang_root(site, lang) / "index.html").read_text(encoding="utf-8")
        assert 'class="katex' in html and "arithmatex" not in html
        assert "katex.min.css" in html
    assert (site / "assets" / "katex" / "katex.min.css").is_file()
    fonts = list((site / "assets" / "katex" / "fonts").glob("*.woff2"))
    assert len(fonts) >= 20
    css = (site / "assets" / "katex" / "katex.min.css").read_text(encoding="utf-8")
    for ref in re.findall(r"url\(([^)]+)\)", css):
        assert (site / "assets" / "katex" / ref).is_file(), f"katex.min.css points at missing {ref}"


def test_pages_state_what_normref_computes(site):
    for lang in LANGS:
        html = (lang_root(site, lang) / "index.html").read_text(encoding="utf-8")
        for name in ("worked.x", "worked.rms", "worked.y", "scale.sqrt_d", "scale.d"):
            assert values.get(name, lang) in html, (lang, name)
        assert "[[" not in html.replace("[[0", ""), "an unexpanded directive is left in the page"


def test_performance_page_states_the_committed_small_tensor_scan(site):
    for lang in LANGS:
        html = (lang_root(site, lang) / "performance" / "index.html").read_text(encoding="utf-8")
        for name in ("bench.total_mib", "bench.small.machine", "bench.small.d", "bench.small.blocked_over_torch",
                     "bench.small.crossover", "bench.small_limit", "bench.small.normref_over_torch"):
            assert values.get(name, lang) in html, (lang, name)


def test_figures_are_registered_files_with_localised_alt_text(site):
    for lang in LANGS:
        root = lang_root(site, lang)
        html = (root / "index.html").read_text(encoding="utf-8")
        spec = figures.get("scale_invariance")
        for theme in ("light", "dark"):
            assert (root / "figures" / f"scale_invariance-{theme}.svg").is_file()
            assert f'scale_invariance-{theme}.svg#only-{theme}' in html
        assert spec.alt[lang].split("，")[0].split(",")[0][:20] in html
    assert not list((ROOT / "docs").rglob("*.svg")), "generated figures must not be written into docs/"


def test_snippet_included_verbatim_with_its_output(site):
    """The zh page shows the Chinese variant (snippets/zh/: Chinese comments), the en page the English file;
    both with the output of the same code."""
    for lang, shown, comment in (("zh", "snippets/zh/worked_example.py", "# 手算："),
                                 ("en", "snippets/worked_example.py", "# By hand:")):
        html = (lang_root(site, lang) / "index.html").read_text(encoding="utf-8")
        assert f'<span class="filename">{shown}</span>' in html, lang
        assert comment in html, lang  # a comment is one highlighted token
        assert "agrees with by-hand : True" in html, lang


def test_notebook_executed_in_both_languages(site):
    for lang in LANGS:
        html = (lang_root(site, lang) / "notebooks" / "scale_invariance" / "index.html").read_text(encoding="utf-8")
        assert "sqrt(d) = 16.0" in html, f"{lang} notebook has no executed output"
        assert "cdn.jsdelivr" not in html and "cdnjs" not in html and "mathjax" not in html.lower()


def test_each_language_has_its_own_search_index(site):
    zh = json.loads((site / "search" / "search_index.json").read_text(encoding="utf-8"))
    en = json.loads((site / "en" / "search" / "search_index.json").read_text(encoding="utf-8"))
    assert zh["config"]["lang"] == ["zh"] and en["config"]["lang"] == ["en"]
    cjk = re.compile(r"[\u4e00-\u9fff]")
    # The glossary lists each term's Chinese name on purpose (a reader may search by it).
    assert not any(cjk.search(d["title"] + d["text"]) for d in en["docs"]
                   if not d["location"].startswith(("notebooks", "glossary"))), "the English search index holds Chinese text"
    assert all(not d["location"].startswith("en/") for d in zh["docs"]), "the Chinese index holds English pages"


def test_warm_build_does_no_figure_snippet_or_notebook_work(site_build, site_builder, site_url, tmp_path):
    proc = site_builder(tmp_path / "again", site_url=site_url)
    for lang in LANGS:
        assert re.search(rf"normref \[{lang}\]: figures 0 rendered, \d+ from cache; snippets 0 run", proc.stderr), proc.stderr
        # Notebooks (normsite.nbexec): every one of both languages found executed in the cache, none run.
        nbs = re.search(rf"normref \[{lang}\]: .*; notebooks (\d+) executed, (\d+) from cache", proc.stderr)
        assert nbs and int(nbs[1]) == 0 and int(nbs[2]) == len(list(ROOT.glob("docs/*/notebooks/*.py"))) > 0, proc.stderr
        # Page steps (math, term links, the print edition) are counted in the log: none recomputed.
        steps = re.search(rf"normref \[{lang}\]: .*page steps computed: ([^;]+);", proc.stderr)
        assert steps, proc.stderr
        counts = dict((m[0], (int(m[1]), int(m[2]))) for m in re.findall(r"(\w+) (\d+) of (\d+)", steps[1]))
        assert counts.get("print") == (0, 1) and counts.get("math", (0, 0))[1] > 0, steps[1]
        assert all(done == 0 for done, _ in counts.values()), f"[{lang}] a warm build recomputed page steps: {steps[1]}"
    assert "Cache miss" not in proc.stderr and proc.stderr.count("Cache hit") >= 2
    # No prepare pass ran: both builds found the manifest a pass wrote for these inputs (normsite.prepare.obtain).
    # A fresh pass for the same inputs (a new process, as the build would start) recomputes nothing, kind by kind:
    # every key it makes is the one the session's build made. Neither MkDocs process imported torch, matplotlib
    # or a normref registry.
    assert "normref prepare [zh, en]: computed" not in proc.stderr, proc.stderr[-3000:]
    assert proc.stderr.count("normref prepare: inputs unchanged") == 2, proc.stderr[-3000:]
    fresh = subprocess.run([sys.executable, "-m", "normsite.prepare", "--out", str(tmp_path / "manifest.json")],
                           cwd=ROOT, env=dict(os.environ, NORMREF_SITE_URL=site_url), capture_output=True, text=True)
    assert fresh.returncode == 0, fresh.stderr[-3000:]
    prep = re.search(r"normref prepare \[zh, en\]: computed (\d+) of (\d+) \(([^)]*)\)", fresh.stdout)
    assert prep and int(prep[2]) > 0, fresh.stdout
    kinds = {k: (int(c), int(n)) for k, c, n in re.findall(r"([\w-]+) (\d+) of (\d+)", prep[3])}
    assert {"svg", "figure", "value", "snippet", "ledger", "quiz"} <= set(kinds), prep[3]
    assert prep[1] == "0" and all(c == 0 for c, _ in kinds.values()), f"a warm prepare recomputed: {prep[0]}"
    for lang in LANGS:
        assert re.search(rf"normref \[{lang}\]: .*; heavy modules imported: none", proc.stderr), proc.stderr
    # What a warm build ships is what the session's build shipped, byte for byte: every cache it read (figures,
    # notebooks, page steps, Jinja's compiled templates) stands for what it would have computed.
    diff = tree_differences(site_build[0], tmp_path / "again")
    assert not diff, "a warm build differs from the session's:\n" + "\n".join(diff[:30])


def test_the_pass_ran_each_experiment_as_a_task_of_its_own(site_build):
    """The session's build planned the declared experiments as tasks (normsite.ahead.experiment_tasks) and no
    result computed one itself: every experiment a figure, value, table or widget reads is declared by its module
    (EXPERIMENTS). Where the session's other tests computed some first, the pass found them cached."""
    log = site_build[1]
    prep = re.search(r"normref prepare \[zh, en\]: computed \d+ of \d+ \([^)]*experiment (\d+) of (\d+)\)", log)
    assert prep and int(prep[2]) >= len({s for m in ahead._declaring_modules() for s in experiments.declared(m)}), \
        log[-3000:]
    assert "undeclared experiment" not in log, [ln for ln in log.splitlines() if "undeclared" in ln]


# ------------------------------------------------------------------ the hook fails loudly, naming the culprit


def _site():
    return Site("en", ROOT / "docs" / "en")


@pytest.mark.parametrize("directive,words", [
    ("[[figure: nope]]", "unknown figure 'nope'"),
    ("[[value: nope]]", "unknown value 'nope'"),
    ("[[snippet: nope.py]]", "snippet 'nope.py' not found"),
])
def test_broken_reference_fails_the_build_naming_it(directive, words):
    with pytest.raises(SiteError) as info:
        _site().page_markdown(f"text {directive} text", "broken.md", [])
    assert "broken.md" in str(info.value) and words in str(info.value)


def test_bad_formula_fails_the_build_naming_it():
    html = r'<p><span class="arithmatex">\(\frac{1}{\)</span></p>'
    with pytest.raises(SiteError, match=r"broken\.md: KaTeX cannot typeset"):
        _site().page_html(html, "broken.md", "broken/", None)


def test_math_page_gets_the_stylesheet_and_plain_page_does_not():
    site = _site()
    out = site.page_html(r'<p><span class="arithmatex">\(x^2\)</span></p>', "a/b.md", "a/b/", None)
    assert '<link rel="stylesheet" href="../../assets/katex/katex.min.css">' in out and 'class="katex"' in out
    assert "katex" not in site.page_html("<p>no math</p>", "broken.md", "broken/", None)


def test_widget_page_gets_the_loader_and_plain_page_does_not():
    site = _site()
    out = site.page_html('<div class="nr-widget" data-nr-widget="quiz" hidden></div>', "a/b.md", "a/b/", None)
    assert '<link rel="stylesheet" href="../../assets/stylesheets/widgets.css">' in out
    assert '<script src="../../assets/javascripts/widgets.js" defer></script>' in out
    plain = site.page_html("<p>no widget</p>", "broken.md", "broken/", None)
    assert "widgets." not in plain


@pytest.mark.parametrize("url, href", [("", "assets/x.css"), ("a/b/", "../../assets/x.css"),
                                       ("404.html", "assets/x.css"), ("notebooks/x.html", "../assets/x.css")])
def test_injected_assets_are_relative_to_the_page(url, href):
    assert assets.asset(url, "x.css") == href


def test_only_widget_pages_carry_widget_bytes(site):
    """Issue F: a page without widgets loads no widget script or CSS (site.js is the one script of
    ours on every page); a page with one links both, and the links resolve."""
    for lang in LANGS:
        root = lang_root(site, lang)
        with_widgets = 0
        for p in pages(site, lang):
            html = p.read_text(encoding="utf-8")
            rel = p.relative_to(root)
            assert "assets/javascripts/site.js" in html, rel
            refs = re.findall(r'(?:href|src)="([^"]*assets/(?:stylesheets/widgets\.css|javascripts/widgets\.js))"', html)
            if "data-nr-widget=" in html:
                with_widgets += 1
                assert sorted(r.rsplit("/", 1)[1] for r in refs) == ["widgets.css", "widgets.js"], rel
                for r in refs:
                    assert (p.parent / r).resolve().is_file(), f"{rel}: {r} does not resolve"
            else:
                assert not refs and "widgets.js" not in html and "nr-widget" not in html, rel
        assert with_widgets >= 5, lang
    css = (site / "assets" / "stylesheets")
    assert ".nr-widget" in (css / "widgets.css").read_text(encoding="utf-8")
    assert ".nr-widget" not in (css / "normref.css").read_text(encoding="utf-8")


def test_no_raw_tex_left_in_any_page(site):
    """A `$x = $` with a space before the closing dollar is not math to arithmatex and
    shows up as raw TeX; catch that (and any other untypeset TeX) in the visible text."""
    raw = re.compile(r"\$[^$<\n]{1,80}\$|\$[^$<]{0,80}\\[A-Za-z]+|\\\(|\\\[")
    problems = []
    for lang in LANGS:
        for p in pages(site, lang):
            html = p.read_text(encoding="utf-8")
            html = re.sub(r"<(pre|code|script|style|annotation)[\s>].*?</\1>", "", html, flags=re.S)
            # A notebook cell's code again, hidden, for mkdocs-jupyter's copy button: code, not prose.
            html = re.sub(r'<div class="clipboard-copy-txt"[^>]*>.*?</div>', "", html, flags=re.S)
            for m in raw.finditer(re.sub(r"<[^>]+>", "", html)):
                problems.append(f"{p.relative_to(site)}: …{m.group(0)[:60]}…")
    assert not problems, "\n".join(problems[:20])
