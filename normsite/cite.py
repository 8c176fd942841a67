"""Cite this page: a short block at the end of every content page, and the provenance it states.

The block names the page's title, its section (the site and the nav groups above it),
its URL, the commit the site was built from and that commit's date, and gives a BibTeX
entry. Every word of it comes from ``normsite/data/cite.yml``, in the page's language.

Provenance (:func:`provenance`), decided once per build:

- commit: ``git rev-parse HEAD`` of the repository being built;
- dirty: ``git status --porcelain`` lists anything (a modified, staged or untracked file
  that is not ignored). The block then says "commit X plus uncommitted changes": the
  commit alone would not reproduce the page;
- date: SOURCE_DATE_EPOCH as a UTC date. normsite.release sets it to the commit's time
  unless the caller gave one, so two builds of one commit state the same date (and the
  site stays byte-identical); it is never the clock;
- outside a git checkout (no git, or not a repository): no commit, the block says so,
  and the date is SOURCE_DATE_EPOCH's when given, else "date unknown".

The block is added to the finished page (post_page), so it is in no search entry, no
print chapter and no cached page step: a new commit changes the block, not the caches.
"""

from __future__ import annotations

import html
import os
import re
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from string import Template

from normref._yaml import yaml_load

from . import LANGS

__all__ = ["DATA", "Provenance", "provenance", "texts", "block", "bibtex", "insert", "page_title", "CITE_ID"]

DATA = Path(__file__).with_name("data") / "cite.yml"
ROOT = Path(__file__).resolve().parent.parent
CITE_ID = "nr-cite"
_KEYS = ("heading", "title", "section", "url", "built", "commit", "commit_dirty", "no_git", "no_date", "bibtex",
         "author", "note", "note_dirty", "note_no_git")


@dataclass(frozen=True)
class Provenance:
    commit: str | None  # 40 hex digits; None outside a git checkout
    dirty: bool  # uncommitted changes in the tree the site was built from
    date: str | None  # YYYY-MM-DD (UTC) of SOURCE_DATE_EPOCH; None when there is none

    def __post_init__(self):
        if self.commit is not None and not re.fullmatch(r"[0-9a-f]{40}", self.commit):
            raise ValueError(f"commit must be 40 lowercase hex digits or None, got {self.commit!r}")
        if self.date is not None and not re.fullmatch(r"\d{4}-\d\d-\d\d", self.date):
            raise ValueError(f"date must be YYYY-MM-DD or None, got {self.date!r}")


def _git(root: Path, *args: str) -> str | None:
    try:
        p = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return p.stdout if p.returncode == 0 else None


def provenance(root: str | Path = ROOT, environ=None) -> Provenance:
    """What the site is built from: the commit of ``root``, whether the tree is dirty, the date."""
    env = os.environ if environ is None else environ
    epoch = (env.get("SOURCE_DATE_EPOCH") or "").strip()
    date = time.strftime("%Y-%m-%d", time.gmtime(int(epoch))) if epoch.isdigit() else None
    head = _git(Path(root), "rev-parse", "HEAD")
    if head is None or not re.fullmatch(r"[0-9a-f]{40}", head.strip()):
        return Provenance(None, False, date)
    status = _git(Path(root), "status", "--porcelain")
    return Provenance(head.strip(), bool(status and status.strip()), date)


def texts(path: str | Path = DATA) -> dict:
    """The block's words per language, checked: every key, in both languages, plus the BibTeX template."""
    data = yaml_load(Path(path).read_text(encoding="utf-8"))
    if not isinstance(data, dict) or not isinstance(data.get("bibtex"), str):
        raise ValueError(f"{path}: expected a mapping with a 'bibtex' template")
    for lang in LANGS:
        missing = [k for k in _KEYS if not isinstance((data.get(lang) or {}).get(k), str)]
        if missing:
            raise ValueError(f"{path}: {lang} lacks {', '.join(missing)}")
    return data


def page_title(page_html: str, fallback: str) -> str:
    """The text of the page's <h1> (its permalink sign dropped), else ``fallback``."""
    m = re.search(r"<h1\b[^>]*>(.*?)</h1>", page_html, flags=re.S)
    if not m:
        return fallback
    inner = re.sub(r"<a\b[^>]*class=\"(?:headerlink|anchor-link)\"[^>]*>.*?</a>", "", m.group(1), flags=re.S)
    text = html.unescape(re.sub(r"<[^>]+>", "", inner)).strip()
    return re.sub(r"\s+", " ", text) or fallback


def _bib_escape(s: str) -> str:
    return re.sub(r"([&%#_$])", r"\\\1", s).replace("{", r"\{").replace("}", r"\}")


def _fields(lang: str, prov: Provenance, t: dict) -> dict:
    words = t[lang]
    date = prov.date or words["no_date"]
    fields = {"date": date, "short": (prov.commit or "")[:12], "commit": prov.commit or ""}
    if prov.commit is None:
        built, note = words["no_git"], words["note_no_git"]
    elif prov.dirty:
        built, note = words["commit_dirty"], words["note_dirty"]
    else:
        built, note = words["commit"], words["note"]
    return {**fields, "built": Template(built).substitute(fields), "note": Template(note).substitute(fields)}


def bibtex(lang: str, title: str, site: str, url: str, key: str, prov: Provenance, t: dict | None = None) -> str:
    """The page's BibTeX entry; a field left empty (no date, no commit) is dropped."""
    t = t or texts()
    f = _fields(lang, prov, t)
    entry = Template(t["bibtex"]).substitute(
        key=key, title=_bib_escape(title), author=_bib_escape(t[lang]["author"]), site=_bib_escape(site),
        year=(prov.date or "")[:4], version=f["short"], url=url, note=_bib_escape(f["note"]))
    return "\n".join(line for line in entry.splitlines() if not re.search(r"=\s*\{\{?\}?\},?\s*$", line))


def block(lang: str, title: str, trail: list[str], url: str, key: str, prov: Provenance, t: dict | None = None) -> str:
    """The citation block's HTML: an admonition (Material styles it) with the facts and the BibTeX entry.
    ``trail``: the site's name, then the nav groups, then the page's nav title."""
    if lang not in LANGS:
        raise ValueError(f"lang must be one of {LANGS}, got {lang!r}")
    t = t or texts()
    w, f = t[lang], _fields(lang, prov, t)
    e = html.escape
    section = " › ".join(trail)
    bib = bibtex(lang, title, trail[0] if trail else "", url, key, prov, t)
    state = "none" if prov.commit is None else ("dirty" if prov.dirty else "clean")
    rows = [(w["title"], e(title)), (w["section"], e(section)),
            (w["url"], f'<a href="{e(url)}">{e(url)}</a>'),
            (w["built"], e(f["built"]).replace(e(f["short"]), f"<code>{e(f['short'])}</code>", 1) if f["short"]
             else e(f["built"]))]
    body = "\n".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in rows)
    return (f'<aside class="admonition quote nr-cite" id="{CITE_ID}" aria-label="{e(w["heading"])}" '
            f'data-nr-commit="{e(prov.commit or "")}" data-nr-tree="{state}" data-nr-date="{e(prov.date or "")}">\n'
            f'<p class="admonition-title">{e(w["heading"])}</p>\n<dl>\n{body}\n</dl>\n'
            f'<details class="quote nr-cite__bibtex"><summary>{e(w["bibtex"])}</summary>\n'
            f'<pre><code class="language-bibtex">{e(bib)}</code></pre>\n</details>\n</aside>')


def insert(page_html: str, cite_html: str) -> str:
    """The block as the last thing of the page's <article> (the content; Material's footer stays after it)."""
    at = page_html.rfind("</article>")
    if at < 0:
        raise ValueError("the page has no </article> to end with a citation block")
    return page_html[:at] + cite_html + "\n" + page_html[at:]


def key_for(lang: str, url_path: str) -> str:
    """A BibTeX key from the page's path: normref-placement-zh, normref-notebooks-formulas-en, normref-home-zh."""
    slug = re.sub(r"[^a-z0-9]+", "-", url_path.lower()).strip("-")
    if slug in ("", "en"):
        slug = "home"
    return f"normref-{slug}-{lang}"
