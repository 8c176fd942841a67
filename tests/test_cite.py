"""Cite this page (normsite.cite) and CITATION.cff: every content page ends with a citation block that names
the commit and date the site was built from, in the page's language; the repository is citable as a whole."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

import pytest
import yaml
from bs4 import BeautifulSoup

from normsite import cite

from support import LANGS, ROOT, lang_root, pages

HEX40 = "0123456789abcdef" * 2 + "01234567"


def _git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()


def _blocks(site: Path, lang: str) -> dict[Path, BeautifulSoup]:
    out = {}
    for p in pages(site, lang):
        soup = BeautifulSoup(p.read_text(encoding="utf-8"), "html.parser")
        out[p] = soup
    return out


# ------------------------------------------------------------------ the block, on strings


def test_texts_have_every_key_in_both_languages(tmp_path):
    t = cite.texts()
    assert set(t) >= {"zh", "en", "bibtex"}
    broken = tmp_path / "cite.yml"
    data = yaml.safe_load(cite.DATA.read_text(encoding="utf-8"))
    del data["en"]["note_dirty"]
    broken.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    with pytest.raises(ValueError, match="en lacks note_dirty"):
        cite.texts(broken)


@pytest.mark.parametrize("lang", LANGS)
def test_block_states_commit_date_and_bibtex(lang):
    prov = cite.Provenance(HEX40, False, "2026-12-01")
    html = cite.block(lang, "Title & more", ["Site", "Group", "Page"], "http://h.test/p/", "normref-p-" + lang, prov)
    soup = BeautifulSoup(html, "html.parser").find("aside")
    assert soup["id"] == cite.CITE_ID and soup["data-nr-commit"] == HEX40 and soup["data-nr-tree"] == "clean"
    assert soup["data-nr-date"] == "2026-12-01"
    text = soup.get_text(" ")
    assert HEX40[:12] in text and "2026-12-01" in text and "Site › Group › Page" in text
    assert soup.find("a")["href"] == "http://h.test/p/"
    bib = soup.find("code", class_="language-bibtex").get_text()
    assert bib.startswith("@misc{normref-p-" + lang + ",") and bib.rstrip().endswith("}")
    assert "Title \\& more" in bib and "year         = {2026}" in bib and HEX40 in bib
    assert bib.count("{") == bib.count("}")
    words = cite.texts()[lang]
    assert words["heading"] in text and soup["aria-label"] == words["heading"]


@pytest.mark.parametrize("lang", LANGS)
def test_dirty_tree_and_no_git_say_so(lang):
    w = cite.texts()[lang]
    dirty = cite.block(lang, "T", ["S"], "http://h/", "k", cite.Provenance(HEX40, True, "2026-12-01"))
    assert 'data-nr-tree="dirty"' in dirty
    assert w["commit_dirty"].split("$short")[1].split("(")[0].split("（")[0].strip() in dirty
    none = cite.block(lang, "T", ["S"], "http://h/", "k", cite.Provenance(None, False, None))
    assert 'data-nr-tree="none"' in none and 'data-nr-commit=""' in none
    assert w["no_date"] in none
    bib = cite.bibtex(lang, "T", "S", "http://h/", "k", cite.Provenance(None, False, None))
    assert "year" not in bib and "version" not in bib, "empty fields are dropped"


def test_provenance_reads_git_and_source_date_epoch(tmp_path):
    prov = cite.provenance(ROOT, {"SOURCE_DATE_EPOCH": "1764547200"})
    assert prov.commit == _git("rev-parse", "HEAD")
    assert prov.dirty == bool(_git("status", "--porcelain"))
    assert prov.date == "2025-12-01"
    # Outside a git checkout: no commit, and no date unless SOURCE_DATE_EPOCH gives one (never the clock).
    outside = tmp_path / "tarball"
    outside.mkdir()
    assert cite.provenance(outside, {}) == cite.Provenance(None, False, None)
    assert cite.provenance(outside, {"SOURCE_DATE_EPOCH": "1764547200"}).date == "2025-12-01"


def test_provenance_sees_an_uncommitted_change(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@t")

    def git(*args):
        subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)

    git("init", "-q")
    (repo / "a.md").write_text("a\n")
    git("add", "a.md")
    git("commit", "-qm", "a")
    clean = cite.provenance(repo, {})
    assert clean.commit and not clean.dirty
    (repo / "a.md").write_text("b\n")
    assert cite.provenance(repo, {}) == cite.Provenance(clean.commit, True, None)


def test_page_title_is_the_h1_without_its_permalink():
    h = '<h1 id="x">读懂 K3 §2.3.1：归一化 <em>LatentMoE</em><a class="headerlink" href="#x">&para;</a></h1>'
    assert cite.page_title(h, "fallback") == "读懂 K3 §2.3.1：归一化 LatentMoE"
    assert cite.page_title("<p>no heading</p>", "fallback") == "fallback"


# ------------------------------------------------------------------ CITATION.cff


def _cff_check(path: Path) -> subprocess.CompletedProcess:
    exe = shutil.which("check-jsonschema", path=str(Path(sys.executable).parent)) or shutil.which("check-jsonschema")
    assert exe, "check-jsonschema is pinned in requirements.txt"
    # The CFF 1.2.0 schema ships with check-jsonschema (vendor.citation-file-format): no network.
    return subprocess.run([exe, "--builtin-schema", "vendor.citation-file-format", str(path)],
                          capture_output=True, text=True)


def test_citation_cff_is_valid_cff_1_2_0(tmp_path):
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))
    assert cff["cff-version"] == "1.2.0"
    assert {"message", "title", "authors"} <= set(cff)
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert f'version = "{cff["version"]}"' in pyproject and f'license = "{cff["license"]}"' in pyproject
    p = _cff_check(ROOT / "CITATION.cff")
    assert p.returncode == 0, p.stdout + p.stderr
    # and the schema check does fail on a file without authors
    del cff["authors"]
    bad = tmp_path / "CITATION.cff"
    bad.write_text(yaml.safe_dump(cff), encoding="utf-8")
    assert _cff_check(bad).returncode != 0


# ------------------------------------------------------------------ the built site


def _expected_date() -> str:
    given = os.environ.get("SOURCE_DATE_EPOCH")
    epoch = int(given) if given else int(_git("log", "-1", "--format=%ct"))
    return datetime.fromtimestamp(epoch, timezone.utc).strftime("%Y-%m-%d")


def problems(site: Path, lang: str, head: str, dirty: bool, date: str) -> tuple[list[str], int]:
    """(what is wrong with the citation blocks of one language's pages, how many pages carry one)."""
    words = cite.texts()[lang]
    bad, seen = [], 0
    for path, soup in _blocks(site, lang).items():
        rel = f"{lang}/{path.relative_to(lang_root(site, lang)).as_posix()}"
        blocks = soup.find_all("aside", class_="nr-cite")
        if rel.split("/", 1)[1] in ("print/index.html", "404.html"):  # every page at once; no page
            bad += [f"{rel}: has a block of its own"] if blocks else []
            continue
        if len(blocks) != 1:
            bad.append(f"{rel}: {len(blocks)} citation blocks")
            continue
        b = blocks[0]
        if b.find_parent("article") is None:
            bad.append(f"{rel}: the block is outside the content")
        later = [el for el in b.find_all_next(["p", "h2", "h3", "details", "table"]) if el.find_parent("article")
                 and not el.find_parent("aside", class_="nr-cite")]
        if later:
            bad.append(f"{rel}: content after the citation block")
        if b["data-nr-commit"] != head or b["data-nr-tree"] != ("dirty" if dirty else "clean"):
            bad.append(f"{rel}: block says {b['data-nr-commit']} ({b['data-nr-tree']}), built from {head}")
        if b["data-nr-date"] != date:
            bad.append(f"{rel}: block dated {b['data-nr-date']}, commit dated {date}")
        text = b.get_text(" ")
        bib = b.find("code", class_="language-bibtex").get_text()
        if not (head[:12] in text and date in text and words["heading"] in text and head in bib
                and f"year         = {{{date[:4]}}}" in bib):
            bad.append(f"{rel}: the visible block or its BibTeX lacks the commit or the date")
        # its URL is this page's canonical address, and its title the page's h1
        canonical = soup.find("link", rel="canonical")
        if canonical is not None and (b.find("a")["href"] != canonical["href"]
                                      or f"url          = {{{canonical['href']}}}" not in bib):
            bad.append(f"{rel}: URL is not the page's canonical address")
        h1 = soup.find("article").find("h1")
        if h1 is not None:
            for a in h1.find_all("a"):
                a.decompose()
            if re.sub(r"\s+", " ", h1.get_text()).strip() not in text:
                bad.append(f"{rel}: title is not the page's h1")
        seen += 1
    return bad, seen


@pytest.mark.parametrize("lang", LANGS)
def test_every_content_page_ends_with_a_block_naming_the_built_commit(site, lang):
    """The commit in each block is git rev-parse HEAD of the tree the site was built from (the session
    builds from this checkout), marked dirty exactly when git status lists a change; the date is the
    commit's (SOURCE_DATE_EPOCH when given), never the clock."""
    bad, seen = problems(site, lang, _git("rev-parse", "HEAD"), bool(_git("status", "--porcelain")), _expected_date())
    assert not bad, "\n".join(bad[:20])
    assert seen >= 10, "too few pages carry a citation block"


def test_the_check_sees_a_block_from_another_commit(tmp_path):
    """A page whose block names another commit (a stale page, say) or none fails the check above."""
    prov = cite.Provenance(HEX40, False, "2026-12-01")
    page = ('<html><head><link rel="canonical" href="http://h/p/"></head><body><article><h1 id="p">P</h1>'
            "<p>text</p>{}</article></body></html>")
    (tmp_path / "p").mkdir()
    (tmp_path / "p" / "index.html").write_text(page.format(
        cite.block("zh", "P", ["S", "P"], "http://h/p/", "k", prov)), encoding="utf-8")
    (tmp_path / "q").mkdir()
    (tmp_path / "q" / "index.html").write_text(page.format(""), encoding="utf-8")
    bad, seen = problems(tmp_path, "zh", HEX40, False, "2026-12-01")
    assert bad == ["zh/q/index.html: 0 citation blocks"] and seen == 1
    other = "f" * 40
    bad, _ = problems(tmp_path, "zh", other, False, "2026-12-01")
    assert any(f"built from {other}" in b for b in bad)
    bad, _ = problems(tmp_path, "zh", HEX40, True, "2026-12-02")
    assert any("(clean), built from" in b for b in bad) and any("commit dated 2026-12-02" in b for b in bad)


def test_citation_blocks_stay_out_of_the_search_index(site):
    for lang in LANGS:
        index = (lang_root(site, lang) / "search" / "search_index.json").read_text(encoding="utf-8")
        assert "BibTeX" not in index and cite.texts()[lang]["heading"] not in index
