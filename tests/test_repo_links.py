"""The built site and what a reader takes home: the install section, the wheel, the snippet install
lines, and the repository links with and without a repository (a local build against the Pages build)."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest

from normsite import colab, install, wheel
from support import LANGS, ROOT, Served, StaticServer, lang_root, open_tab, pages

REPO = "https://github.com/octo/normref-docs"
BRANCH = "main"
PAGES_URL = "https://octo.github.io/normref-docs/"


def _text(html_text: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", html_text))


def _zh_root(site: Path) -> str:
    m = re.search(r'<link rel="canonical" href="([^"]+)"', (site / "index.html").read_text(encoding="utf-8"))
    return m.group(1)


# ------------------------------------------------------------------ every build


def test_the_site_publishes_the_wheel_once_for_both_languages(site):
    w = wheel.build()
    published = site / wheel.site_path(w.name)
    assert published.read_bytes() == w.data, "the published wheel is not the one the sources make"
    assert not list((site / "en").rglob("*.whl")), "one copy serves both languages"


def test_home_page_install_section_in_both_languages(site):
    url = install.wheel_url(_zh_root(site))
    for lang in LANGS:
        page = (lang_root(site, lang) / "index.html").read_text(encoding="utf-8")
        assert '<h2 id="install">' in page, lang
        section = _text(page.split('<h2 id="install">', 1)[1].split("<h2 ", 1)[0])
        for needs in (install.Needs(("torch",), False), install.Needs((), False), install.Needs(("models",), True)):
            for line in install.pip_lines(needs, url):
                assert line in section, (lang, line)
        assert install.versions_text(lang) in section, lang
        assert "--no-deps" in section


def test_every_snippet_shows_the_line_that_makes_it_run(site):
    url = install.wheel_url(_zh_root(site))
    found = 0
    for lang in LANGS:
        for p in pages(site, lang):
            text = p.read_text(encoding="utf-8")
            for m in re.finditer(r'<span class="filename">snippets/([^<]+)</span>', text):
                name = m.group(1)
                before = text[: m.start()].rsplit('<span class="filename">', 1)
                assert len(before) == 2, (p, name)
                title = _text(before[1].split("</span>", 1)[0])
                lines = _text(before[1].split("<code>", 1)[1].split("</code>", 1)[0])
                want = install.pip_lines(install.needs_of_file(ROOT / "snippets" / name), url, lang=lang)
                assert title.startswith(("运行前先安装", "Install first")), (p, name, title)
                assert [ln for ln in lines.splitlines() if ln.strip()] == want, (p, name, lines)
                found += 1
    assert found >= 2 * len(list((ROOT / "snippets").glob("*.py")))


def test_a_local_build_has_no_repository_links(site):
    for lang in LANGS:
        for p in pages(site, lang):
            text = p.read_text(encoding="utf-8")
            assert 'class="md-source"' not in text and 'rel="edit"' not in text, p
            assert "colab.research.google.com" not in text and "github.com/" not in re.sub(
                r'<a [^>]*href="https://(?:arxiv|github)\.com[^"]*"', "", text).split('class="md-content"')[0], p


def test_english_alone_without_the_wheel_fails_naming_it(tmp_path):
    # The English build ends (post_build) by checking the wheel in the Chinese site around it
    # (wheel.check_published): en/ alone has none, and the error names it and says what to do.
    from normsite import SiteError
    from normsite.takehome import TakeHome

    en = tmp_path / "site" / "en"
    en.mkdir(parents=True)
    home = TakeHome("en", ROOT / "docs" / "en")
    with pytest.raises(SiteError, match=re.escape(f"the built site has no wheels/{wheel.wheel_name()}") + ".*make build"):
        home.post_build(en)
    published = tmp_path / "site" / wheel.site_path(wheel.wheel_name())
    published.parent.mkdir()
    published.write_bytes(wheel.build().data)
    home.post_build(en)  # with the Chinese build's wheel beside it, the same check passes


# ------------------------------------------------------------------ a build for a GitHub repository


@pytest.fixture(scope="module")
def repo_site(tmp_path_factory, site_builder):
    """Both languages built as the Pages workflow builds them, for a Pages address."""
    out = tmp_path_factory.mktemp("site-repo")
    site_builder(out, site_url=PAGES_URL,
                 env_extra={"NORMREF_REPO_URL": REPO, "NORMREF_REPO_BRANCH": BRANCH})
    return out


def test_pages_get_the_repository_link_and_edit_button_into_their_languages_folder(repo_site):
    for lang in LANGS:
        root = lang_root(repo_site, lang)
        for p in pages(repo_site, lang):
            if p.name == "404.html":
                continue
            text = p.read_text(encoding="utf-8")
            assert f'<a href="{REPO}" title="' in text and 'class="md-source"' in text, p
            assert 'data-md-component="source"' not in text, f"{p}: Material would fetch api.github.com"
            assert "octo/normref-docs" in _text(text.split('class="md-source"', 1)[1].split("</a>", 1)[0])
            edit = re.search(r'href="([^"]+)" title="[^"]+" class="md-content__button md-icon" rel="edit"', text)
            assert edit, p
            rel = edit.group(1).removeprefix(f"{REPO}/edit/{BRANCH}/")
            assert rel.startswith(f"docs/{lang}/") and (ROOT / rel).is_file(), (p, edit.group(1))
        nb = (root / "notebooks" / "formulas" / "index.html").read_text(encoding="utf-8")
        # The notebooks live on the branch colab, which the Pages workflow pushes (tests/test_colab_workflow.py).
        assert f'href="https://colab.research.google.com/github/octo/normref-docs/blob/colab/notebooks/{lang}/formulas.ipynb"' in nb


def test_the_colab_notebook_is_the_download(repo_site):
    for lang in LANGS:
        for src in colab.sources()[lang]:
            page_dir = lang_root(repo_site, lang) / "notebooks" / src.stem
            want = colab.export(src, install.wheel_url(PAGES_URL))  # what make colab pushes for this address
            assert (page_dir / f"{src.stem}.ipynb").read_text(encoding="utf-8") == want


# One page of each kind the repository settings change: the home page, an article (its edit button), a
# notebook page (its Colab and download links) and the 404 page. Every page of the session's build is
# loaded the same way in test_browser.py::test_every_page_loads_clean; the GitHub build differs from it
# only in these links, which each kind's template puts on all of its pages alike.
KINDS = ["index.html", "formulas/index.html", "notebooks/formulas/index.html", "404.html"]


def test_the_repository_build_makes_no_request_to_another_host(repo_site, browser):
    """In Chromium: a page of each kind of the GitHub build loads, until the network is idle, without a
    request to any other host (Material's repository facts would go to api.github.com)."""
    server = StaticServer(repo_site).start()
    loaded = []
    try:
        with open_tab(browser, Served(root=repo_site, base=server.base)) as tab:
            for lang in LANGS:
                for kind in KINDS:
                    page = lang_root(repo_site, lang) / kind
                    assert page in pages(repo_site, lang), f"no {kind} in the {lang} build"
                    tab.page.goto(server.base + page.relative_to(repo_site).as_posix(), wait_until="networkidle")
                    loaded.append(page)
            foreign = list(tab.foreign)
    finally:
        server.close()
    assert len(loaded) == len(LANGS) * len(KINDS) and not foreign, foreign[:10]
