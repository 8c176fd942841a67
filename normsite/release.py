"""What makes a build reproducible and addressable: the commit's date and both languages' roots."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def default_source_date_epoch() -> None:
    """MkDocs dates the sitemap (and the header of sitemap.xml.gz) from
    SOURCE_DATE_EPOCH, else from the clock. Default it to the time of the commit
    being built: builds of one commit then give the same bytes, and <lastmod>
    says when the content last changed. Outside a git checkout, keep the clock."""
    if os.environ.get("SOURCE_DATE_EPOCH"):
        return
    try:
        out = subprocess.run(["git", "log", "-1", "--format=%ct"], cwd=ROOT, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return
    if out.returncode == 0 and out.stdout.strip().isdigit():
        os.environ["SOURCE_DATE_EPOCH"] = out.stdout.strip()


def site_urls(lang: str, site_url: str | None) -> tuple[str | None, dict]:
    """(this build's site_url, {"lang", "roots": {zh, en}}).

    The address is set once (mkdocs.yml, or NORMREF_SITE_URL); the English build
    inherits it and lives one folder down, at <address>en/."""
    if lang == "en" and site_url and not site_url.rstrip("/").endswith("/en"):
        site_url = site_url.rstrip("/") + "/en/"
    base = (site_url or "/").rstrip("/") + "/"
    if lang == "en":
        base = base[: -len("en/")]
    return site_url, {"lang": lang, "roots": {"zh": base, "en": base + "en/"}}


def preference_scope(roots: dict) -> str:
    """Material's ``extra.scope`` for both builds: the path of the Chinese root (``/``, or ``/REPO/``
    on a project page), so the palette chosen on / is the one /en/ reads, and nothing is shared with
    other sites on the same host."""
    from urllib.parse import urlsplit

    return urlsplit(roots["zh"]).path or "/"
