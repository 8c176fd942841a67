"""Lighthouse scores of a few pages of the built site, served gzipped as a host would serve it.

    python tools/lighthouse.py [SITE_DIR] [--page zh: --page en:glossary/ ...]
                               [--categories performance,accessibility,best-practices,seo] [--out DIR]

Lighthouse (the npm package pinned in tools/lighthouse/package-lock.json, which `make browser-deps`
installs with `npm ci`) drives Debian's Chromium (never a downloaded browser) with its default
profile: a phone on a throttled connection (simulated). SITE_DIR (default: site, from `make build`)
is served on a free local port, text compressed with gzip when the browser asks for it; nothing is
requested from another host. Prints one line per page with its scores (0-100) and writes each
page's report as JSON under --out (default test-artifacts/lighthouse). Performance depends on the
machine and its load; the other categories do not.
"""

from __future__ import annotations

import argparse
import functools
import gzip
import json
import os
import subprocess
import sys
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LIGHTHOUSE = ROOT / "tools" / "lighthouse" / "node_modules" / ".bin" / "lighthouse"
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CATEGORIES = ("performance", "accessibility", "best-practices", "seo")
PAGES = ("zh:", "en:glossary/", "zh:practice/")
_TEXT = (".html", ".css", ".js", ".json", ".svg", ".xml", ".txt", ".map")


class _Gzip(SimpleHTTPRequestHandler):
    """Static files; text gzipped for a client that accepts it (as GitHub Pages does)."""

    def log_message(self, *args):
        pass

    def send_head(self):
        path = Path(self.translate_path(self.path))
        if path.is_dir():
            path = path / "index.html"
        if (not path.suffix.lower() in _TEXT or "gzip" not in self.headers.get("Accept-Encoding", "")
                or not path.is_file() or not self.path.split("?")[0].endswith(("/", path.name))):
            return super().send_head()
        import io

        body = gzip.compress(path.read_bytes(), 6)
        self.send_response(200)
        self.send_header("Content-Type", self.guess_type(str(path)))
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Vary", "Accept-Encoding")
        self.end_headers()
        return io.BytesIO(body)


def serve(site: Path) -> tuple[ThreadingHTTPServer, str]:
    """Serve ``site`` on 127.0.0.1 (a free port) in a thread; (server, base URL ending in /)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Gzip, directory=str(site)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/"


def page_url(base: str, page: str) -> str:
    """'zh:' -> base, 'en:glossary/' -> base + 'en/glossary/' (zh at the root, en under en/)."""
    lang, sep, rel = page.partition(":")
    if not sep or lang not in ("zh", "en"):
        raise ValueError(f"page={page!r}: expected 'zh:REL' or 'en:REL', e.g. 'en:glossary/'")
    return base + ("en/" if lang == "en" else "") + rel.lstrip("/")


def run(url: str, out: Path, categories=CATEGORIES, timeout: int = 300) -> dict[str, float]:
    """Lighthouse on one URL: {category: score 0-100}; the report JSON is written to ``out``."""
    if not LIGHTHOUSE.exists():
        raise FileNotFoundError(f"{LIGHTHOUSE} not found: run `make browser-deps` (npm ci in tools/lighthouse)")
    bad = sorted(set(categories) - set(CATEGORIES))
    if bad:
        raise ValueError(f"categories: {bad} unknown; expected some of {CATEGORIES}")
    out.parent.mkdir(parents=True, exist_ok=True)
    cmd = [str(LIGHTHOUSE), url, "--quiet", "--output=json", f"--output-path={out}",
           f"--only-categories={','.join(categories)}",
           "--chrome-flags=--headless=new --no-sandbox --disable-gpu --no-first-run --disable-background-networking"]
    env = dict(os.environ, CHROME_PATH=CHROMIUM)
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
    if p.returncode != 0:
        raise RuntimeError(f"lighthouse {url} exited {p.returncode}: {p.stderr[-2000:]}")
    report = json.loads(out.read_text(encoding="utf-8"))
    return {k: round(100 * v["score"]) if v["score"] is not None else float("nan")
            for k, v in report["categories"].items()}


def failing(report: dict, category: str) -> list[str]:
    """The audits of ``category`` that did not pass in a report (its JSON, parsed): 'id: title'."""
    audits = report["audits"]
    return [f"{ref['id']}: {audits[ref['id']]['title']}" for ref in report["categories"][category]["auditRefs"]
            if ref["weight"] > 0 and audits[ref["id"]]["score"] is not None and audits[ref["id"]]["score"] < 1]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("site", nargs="?", default="site")
    ap.add_argument("--page", action="append", help="zh:REL or en:REL (repeatable); default: " + " ".join(PAGES))
    ap.add_argument("--categories", default=",".join(CATEGORIES))
    ap.add_argument("--out", default="test-artifacts/lighthouse")
    a = ap.parse_args(argv)
    site = Path(a.site)
    if not (site / "index.html").is_file():
        raise SystemExit(f"{site}: expected a built site folder (run `make build` first)")
    server, base = serve(site)
    try:
        for page in a.page or PAGES:
            name = page.replace(":", "-").replace("/", "-").strip("-") or "zh"
            out = Path(a.out) / f"{name}.json"
            scores = run(page_url(base, page), out, tuple(a.categories.split(",")))
            report = json.loads(out.read_text(encoding="utf-8"))
            print(page, " ".join(f"{k}={v}" for k, v in scores.items()), flush=True)
            for cat in scores:
                for f in failing(report, cat):
                    print(f"    {cat}: {f}")
    finally:
        server.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
