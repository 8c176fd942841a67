"""Shared fixtures. The built site is made once per test session, both languages."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LANGS = ("zh", "en")


def build_site(out: Path, env_extra: dict | None = None) -> subprocess.CompletedProcess:
    """Strict build of both languages into ``out`` (zh at out/, en at out/en/)."""
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1", **(env_extra or {}))
    logs = []
    for cfg, dest in (("mkdocs.yml", out), ("mkdocs.en.yml", out / "en")):
        p = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f", cfg, "-d", str(dest)],
                           cwd=ROOT, env=env, capture_output=True, text=True)
        logs.append(p.stderr)
        if p.returncode != 0:
            raise AssertionError(f"mkdocs build -f {cfg} failed:\n{p.stderr[-4000:]}")
    return subprocess.CompletedProcess(args=[], returncode=0, stdout="", stderr="\n".join(logs))


@pytest.fixture(scope="session")
def site_build(tmp_path_factory):
    out = tmp_path_factory.mktemp("site")
    proc = build_site(out)
    return out, proc.stderr


@pytest.fixture(scope="session")
def site(site_build) -> Path:
    """Folder of the built site: zh pages at site/, en pages at site/en/."""
    return site_build[0]


def lang_root(site: Path, lang: str) -> Path:
    return site if lang == "zh" else site / "en"


def pages(site: Path, lang: str) -> list[Path]:
    """Built HTML pages of one language (the other language's folder excluded)."""
    root = lang_root(site, lang)
    out = []
    for p in sorted(root.rglob("*.html")):
        rel = p.relative_to(root)
        if lang == "zh" and rel.parts and rel.parts[0] == "en":
            continue
        out.append(p)
    return out
