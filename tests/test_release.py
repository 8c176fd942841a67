"""Release: reproducible builds, links and anchors, hreflang, the 404 page, link
previews, notebook downloads and the GitHub Pages workflow.

Tests of the built site iterate over whatever pages exist (the session `site`
fixture), never over a fixed list.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from datetime import datetime, timezone
from html.parser import HTMLParser
from pathlib import Path

import pytest
import yaml

from normsite import cjk, install, notebooks, release
from support import LANGS, ROOT, lang_root, load_tool, pages, tree_differences

ARTIFACTS = ROOT / "test-artifacts"
NS = {"sm": "http://www.sitemaps.org/schemas/sitemap/0.9", "xhtml": "http://www.w3.org/1999/xhtml"}
WORKFLOW = ROOT / ".github" / "workflows" / "pages.yml"


links = load_tool("links")


class Head(HTMLParser):
    """<link>/<meta> attributes, <a> attributes and <h1> text of a page."""

    def __init__(self, text: str):
        super().__init__(convert_charrefs=True)
        self.links, self.metas, self.anchors, self.h1 = [], [], [], []
        self._h1 = False
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "link":
            self.links.append(a)
        elif tag == "meta":
            self.metas.append(a)
        elif tag == "a":
            self.anchors.append(a)
        elif tag == "h1":
            self._h1 = True
            self.h1.append("")

    def handle_endtag(self, tag):
        if tag == "h1":
            self._h1 = False

    def handle_data(self, data):
        if self._h1:
            self.h1[-1] += data

    def meta(self, key: str) -> str | None:
        for m in self.metas:
            if m.get("name") == key or m.get("property") == key:
                return m.get("content")
        return None

    def hreflang(self) -> dict[str, str]:
        return {k["hreflang"]: k["href"] for k in self.links
                if "alternate" in (k.get("rel") or "").split() and k.get("hreflang")}


def roots(site: Path) -> dict[str, str]:
    base = links.site_url_of(site)
    return {"zh": base, "en": base + "en/"}


def content_pages(site: Path, lang: str) -> list[Path]:
    return [p for p in pages(site, lang) if p.name != "404.html"]


def url_path(site: Path, lang: str, page: Path) -> str:
    """The page's URL below its language root ('' for the home page)."""
    rel = page.relative_to(lang_root(site, lang)).as_posix()
    return rel[: -len("index.html")] if rel.endswith("index.html") else rel


def commit_date() -> str | None:
    p = subprocess.run(["git", "log", "-1", "--format=%ct"], cwd=ROOT, capture_output=True, text=True)
    if p.returncode != 0 or not p.stdout.strip().isdigit():
        return None
    return datetime.fromtimestamp(int(p.stdout.strip()), timezone.utc).strftime("%Y-%m-%d")


# ------------------------------------------------------------------ reproducible build


# What the cold build below shares with the session's cache: the experiments' results (normref's memos,
# kind "data") and the converted model weights ("models"). These are measurements, not the bytes that ship: seeded, run on one torch thread
# (normref.experiments.one_thread), and checked by each experiment's own tests (test_layer_drop.py,
# test_moe.py, test_models.py, ...). So this test does not catch an experiment that gives other numbers
# on a second run; it catches everything that turns the numbers into the site, which is all redone:
# figures, snippet runs, notebook executions, value and table expansions, page steps, the print
# edition, the wheel. Sharing them saves each CI run one computation of every experiment (the two
# builds start from nothing side by side there).
SHARED_WITH_THE_SESSION = ("data", "models")


def test_two_clean_builds_are_byte_identical(request, site_builder, site_url, tmp_path):
    """A cold build (own empty caches: every figure, snippet, notebook and page step redone; the
    experiments' results shared, see SHARED_WITH_THE_SESSION) gives the same bytes as the session's
    build, which may have come from a warm cache. So the output is reproducible and the cache never
    changes what ships."""
    cold, cache = tmp_path / "cold", tmp_path / "cache"
    session = Path(os.environ["NORMREF_CACHE"])  # the session's (tests/conftest.py)
    cache.mkdir()
    for kind in SHARED_WITH_THE_SESSION:
        (session / kind).mkdir(parents=True, exist_ok=True)
        (cache / kind).symlink_to(session / kind, target_is_directory=True)
    proc = site_builder(cold, site_url=site_url, env_extra={"NORMREF_CACHE": str(cache)})
    # The session's site only now: under pytest-xdist (make test) the other worker builds it meanwhile.
    site = request.getfixturevalue("site")
    # The prepare pass (a fresh process normsite.sitebuild runs before both builds) draws every figure variant
    # of both languages on the pool (normsite.ahead): none was cached; the Chinese build reports that work, and
    # the English build finds its own in the cache this run filled.
    prep = re.search(r"normref prepare \[zh, en\]: computed \d+ of \d+ \(svg (\d+) of (\d+),", proc.stderr)
    zh = re.search(r"normref \[zh\]: figures (\d+) rendered, 0 from cache", proc.stderr)
    en = re.search(r"normref \[en\]: figures 0 rendered, (\d+) from cache", proc.stderr)
    assert prep and int(prep[1]) == int(prep[2]) > 0, f"the build was not cold:\n{proc.stderr[-2000:]}"
    assert zh and en and int(zh.group(1)) == int(en.group(1)) > 0, f"the build was not cold:\n{proc.stderr[-2000:]}"
    # Every notebook of both languages was executed in this run, on the zh build's pool (normsite.nbexec).
    n_nb = len(list(ROOT.glob("docs/*/notebooks/*.py")))
    ahead_nb = re.search(r"normref \[zh\]: .*; notebooks (\d+) executed, 0 from cache", proc.stderr)
    assert ahead_nb and int(ahead_nb.group(1)) == n_nb > 0, "notebooks were not re-executed"
    diff = tree_differences(site, cold)
    first = next((d.split(": ", 1)[1] for d in diff if d.startswith("differs: ")), None)
    if first:
        import difflib

        a, b = ((root / first).read_bytes().decode("utf-8", "replace").splitlines() for root in (site, cold))
        diff.insert(0, "\n".join(list(difflib.unified_diff(a, b, first, first, n=0, lineterm=""))[:8])[:1500])
    assert not diff, ("two builds of one commit differ (usual culprits: a date or a random id in the output, "
                      "an object repr like <… at 0x7f…> printed by a notebook cell, a figure saved without "
                      "metadata={'Date': None}):\n" + "\n".join(diff[:30]))


def test_sitemap_is_dated_by_the_commit_not_the_clock(site):
    given = os.environ.get("SOURCE_DATE_EPOCH")
    date = datetime.fromtimestamp(int(given), timezone.utc).strftime("%Y-%m-%d") if given else commit_date()
    if date is None:
        pytest.skip("not a git checkout: MkDocs falls back to today's date")
    for lang in LANGS:
        root = ET.parse(lang_root(site, lang) / "sitemap.xml").getroot()
        dates = {e.text for e in root.iterfind("sm:url/sm:lastmod", NS)}
        assert dates == {date}, (lang, dates)


def test_source_date_epoch_is_kept_when_given(monkeypatch):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "86400")
    release.default_source_date_epoch()
    assert os.environ["SOURCE_DATE_EPOCH"] == "86400"
    monkeypatch.delenv("SOURCE_DATE_EPOCH")
    release.default_source_date_epoch()
    if commit_date() is not None:
        assert os.environ["SOURCE_DATE_EPOCH"].isdigit()


# ------------------------------------------------------------------ links


def test_every_internal_link_and_anchor_resolves(site):
    report = links.check(site)
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / "links.json").write_text(json.dumps(report.to_json(), ensure_ascii=False, indent=1) + "\n",
                                          encoding="utf-8")
    assert report.pages == sum(len(pages(site, lang)) for lang in LANGS)
    assert report.checked > 50 * report.pages / 10, "suspiciously few links were checked"
    assert not report.broken, "\n".join(f"{s}: {u} ({w})" for s, u, w in report.broken[:30])


def _tiny_site(root: Path) -> Path:
    (root / "en" / "a").mkdir(parents=True)
    (root / "sitemap.xml").write_text(
        '<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        "<url><loc>http://h.test/repo/</loc></url></urlset>", encoding="utf-8")
    (root / "index.html").write_text(
        '<h2 id="here">x</h2><a href="#here">ok</a><a href="#gone">bad anchor</a>'
        '<a href="en/a/">ok</a><a href="en/a/#top">ok anchor</a><a href="en/b/">missing</a>'
        '<a href="/elsewhere/">escapes</a><a href="http://h.test/repo/en/a/">own, absolute</a>'
        '<a href="https://arxiv.org/abs/1910.07467">paper</a><a href="mailto:x@y.z">mail</a>'
        '<img srcset="pic.svg 1x, missing.svg 2x"><div style="background:url(pic.svg)"></div>',
        encoding="utf-8")
    (root / "pic.svg").write_text("<svg/>", encoding="utf-8")
    (root / "en" / "a" / "index.html").write_text('<a name="top"></a><a href="../../#here">back</a>', encoding="utf-8")
    return root


def test_link_checker_finds_what_is_broken_and_lists_external_links(tmp_path):
    report = links.check(_tiny_site(tmp_path))
    assert report.site_url == "http://h.test/repo/"
    broken = {(s, u): w for s, u, w in report.broken}
    assert broken == {
        ("index.html", "#gone"): "no id 'gone' in index.html",
        ("index.html", "en/b/"): "no such file",
        ("index.html", "/elsewhere/"): "leaves the site's folder /repo/",
        ("index.html", "missing.svg"): "no such file",
    }
    assert set(report.external) == {"https://arxiv.org/abs/1910.07467", "mailto:x@y.z"}
    assert report.checked == 12  # 10 in index.html, 1 in en/a/, the sitemap's <loc>


def test_link_checker_rejects_a_folder_that_is_not_a_site(tmp_path):
    with pytest.raises(ValueError, match="site="):
        links.check(tmp_path)


def test_link_tool_cli_writes_a_report_and_fails_on_broken_links(tmp_path):
    report = tmp_path / "out" / "links.json"
    p = subprocess.run([sys.executable, str(ROOT / "tools" / "links.py"), str(_tiny_site(tmp_path / "s")),
                        "--report", str(report)], capture_output=True, text=True)
    assert p.returncode == 1 and "4 broken" in p.stdout and "external  https://arxiv.org" in p.stdout
    data = json.loads(report.read_text(encoding="utf-8"))
    assert len(data["broken"]) == 4 and data["external"][0]["url"] == "https://arxiv.org/abs/1910.07467"


# ------------------------------------------------------------------ hreflang, descriptions, 404


def test_every_page_head_names_itself_in_both_languages(site):
    r = roots(site)
    for lang in LANGS:
        for page in content_pages(site, lang):
            head = Head(page.read_text(encoding="utf-8"))
            path = url_path(site, lang, page)
            want = {"zh": r["zh"] + path, "en": r["en"] + path, "x-default": r["zh"] + path}
            assert head.hreflang() == want, (page, head.hreflang())
            # Material fetches sitemap.xml next to any link whose rel is exactly
            # "alternate"; below a language root that request 404s.
            exact = [k["href"] for k in head.links if k.get("rel") == "alternate" and not k.get("type")]
            assert all(h.rstrip("/") in {r["zh"].rstrip("/"), r["en"].rstrip("/")} for h in exact), (page, exact)


def test_sitemaps_carry_hreflang_alternates_for_every_page(site):
    r = roots(site)
    for lang in LANGS:
        root = ET.parse(lang_root(site, lang) / "sitemap.xml").getroot()
        locs = {}
        for url in root.iterfind("sm:url", NS):
            loc = url.find("sm:loc", NS).text
            locs[loc] = {x.get("hreflang"): x.get("href") for x in url.iterfind("xhtml:link", NS)}
        expected = {r[lang] + url_path(site, lang, p) for p in content_pages(site, lang)
                    if _front_matter_of(lang, url_path(site, lang, p)).get("sitemap", True) is not False}
        assert set(locs) == expected, (lang, set(locs) ^ expected)
        assert len(expected) >= len(content_pages(site, lang)) - 1  # only the print edition is left out
        for loc, alts in locs.items():
            path = loc[len(r[lang]):]
            assert alts == {"zh": r["zh"] + path, "en": r["en"] + path, "x-default": r["zh"] + path}, loc


def _front_matter(md: Path) -> dict:
    text = md.read_text(encoding="utf-8")
    m = re.match(r"---\n(.*?)\n---\n", text, re.S)
    return (yaml.safe_load(m.group(1)) or {}) if m else {}


def _front_matter_of(lang: str, url: str) -> dict:
    """Front matter of the Markdown page served at ``url`` (below its language root); {} for others."""
    md = ROOT / "docs" / lang / ((url.rstrip("/") or "index") + ".md")
    return _front_matter(md) if md.is_file() else {}


def _site_description(lang: str) -> str:
    cfg = ROOT / ("mkdocs.yml" if lang == "zh" else "mkdocs.en.yml")
    line = next(ln for ln in cfg.read_text(encoding="utf-8").splitlines() if ln.startswith("site_description:"))
    return line.split(":", 1)[1].strip()


def test_every_page_has_a_description_and_open_graph_tags(site):
    described = 0
    for lang in LANGS:
        docs = ROOT / "docs" / lang
        own = {}
        for md in docs.rglob("*.md"):
            rel = md.relative_to(docs).with_suffix("")
            url = "" if rel.as_posix() == "index" else (rel.parent.as_posix() + "/" if rel.name == "index" else rel.as_posix() + "/")
            own[url.removeprefix("./")] = _front_matter(md).get("description")
        for page in pages(site, lang):
            text = page.read_text(encoding="utf-8")
            head = Head(text)
            url = url_path(site, lang, page)
            if url.startswith("notebooks/"):  # no front matter: the notebook's own opening sentence
                want = notebooks.description(text)
                assert want and want != _site_description(lang), page
                assert bool(re.search(r"[\u4e00-\u9fff]", want)) == (lang == "zh"), (page, want)
            else:
                want = own.get(url) or _site_description(lang)
            described += want != _site_description(lang)
            assert head.meta("description") == want, page
            assert head.meta("og:description") == want, page
            assert head.meta("og:title"), page
            assert head.meta("og:locale") == {"zh": "zh_CN", "en": "en_US"}[lang], page
    assert described >= 2, "no page has its own front-matter description"


def test_404_page_in_both_builds_speaks_both_languages(site):
    r = roots(site)
    for lang in LANGS:
        page = lang_root(site, lang) / "404.html"
        text = page.read_text(encoding="utf-8")
        head = Head(text)
        assert f'<html lang="{lang}"' in text
        assert "404" in head.h1[0] and "页面不存在" in head.h1[0] and "Page not found" in head.h1[0]
        hrefs = {a.get("href") for a in head.anchors}
        assert {r["zh"], r["en"]} <= hrefs, hrefs
        own, other = text.index(f'<p lang="{lang}"'), text.index(f'<p lang="{"en" if lang == "zh" else "zh"}"')
        assert own < other, "the build's own language comes first"


# ------------------------------------------------------------------ notebooks


def _notebook_sources(lang: str) -> list[Path]:
    return sorted(p for p in (ROOT / "docs" / lang / "notebooks").glob("*") if p.suffix in (".py", ".ipynb"))


def test_every_notebook_page_offers_its_ipynb(site):
    import jupytext
    import nbformat

    label = {"zh": "下载笔记本（.ipynb）", "en": "Download the notebook (.ipynb)"}
    found = 0
    for lang in LANGS:
        for src in _notebook_sources(lang):
            page_dir = lang_root(site, lang) / "notebooks" / src.stem
            text = (page_dir / "index.html").read_text(encoding="utf-8")
            downloads = {a["href"]: a for a in Head(text).anchors if "download" in a}
            ipynb = f"{src.stem}.ipynb"
            assert ipynb in downloads and label[lang] in text, (lang, src.name, downloads)
            assert src.name in downloads, "the jupytext source is offered too"
            nb = nbformat.read(page_dir / ipynb, as_version=4)
            nbformat.validate(nb)
            # The source names the wheel by a token; the download has this site's address in its place.
            wheel = install.wheel_url(roots(site)["zh"])
            want = jupytext.reads(install.fill_wheel_url(src.read_text(encoding="utf-8"), wheel), fmt="py:percent")
            if lang == "zh":  # a Chinese notebook's Markdown has its soft line breaks joined, as on the page
                want = cjk.join_notebook(want)
            assert [c.source for c in nb.cells] == [c.source for c in want.cells]
            assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code"), "download is unexecuted"
            assert nb.metadata["kernelspec"]["name"] == "python3" and "jupytext" not in nb.metadata
            found += 1
    assert found >= 2 and found == sum(len(_notebook_sources(lang)) for lang in LANGS)


def test_notebook_ipynb_and_page_cell_ids_are_stable():
    src = _notebook_sources("en")[0]
    assert notebooks.ipynb_text(str(src), "http://h/w.whl") == notebooks.ipynb_text(str(src), "http://h/w.whl")
    html = '<div id="cell-id=ab12"></div><div id="cell-id=ff00"></div><a href="#cell-id=ab12"></a>'
    assert notebooks.stable_cell_ids(html) == '<div id="cell-id=cell-0"></div><div id="cell-id=cell-1"></div>' \
                                          '<a href="#cell-id=cell-0"></a>'


# ------------------------------------------------------------------ the Pages workflow


def _workflow() -> dict:
    return yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))


def test_workflow_is_valid_against_the_github_workflow_schema():
    p = subprocess.run([sys.executable, "-m", "check_jsonschema", "--builtin-schema", "vendor.github-workflows",
                        str(WORKFLOW)], capture_output=True, text=True)
    assert p.returncode == 0, p.stdout + p.stderr


def test_workflow_runs_only_the_readmes_make_targets():
    make_targets = set(re.findall(r"^([A-Za-z][\w-]*):", (ROOT / "Makefile").read_text(encoding="utf-8"), re.M))
    readme_targets = set(re.findall(r"\bmake ([a-z][\w-]*)", (ROOT / "README.md").read_text(encoding="utf-8")))
    runs = [s["run"] for job in _workflow()["jobs"].values() for s in job["steps"] if "run" in s]
    assert runs, "the workflow runs nothing"
    for run in runs:
        for line in filter(None, (ln.strip() for ln in run.splitlines())):
            m = re.fullmatch(r"make ([a-z][\w-]*)", line)
            assert m, f"workflow runs {line!r}: only the README's make targets may run"
            assert m.group(1) in make_targets and m.group(1) in readme_targets, line
    assert "make build" in runs


def test_both_builds_keep_the_readers_preferences_under_the_chinese_roots_path():
    """Material's extra.scope: / at the site's root, /REPO/ on a project page, for the en build too."""
    for url, scope in (("https://owner.github.io/normref/", "/normref/"), ("http://127.0.0.1:8000/", "/"), (None, "/")):
        for lang in LANGS:
            assert release.preference_scope(release.site_urls(lang, url)[1]["roots"]) == scope, (lang, url)
