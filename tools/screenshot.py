"""Screenshot a page of the built site, for the README.

    python tools/screenshot.py [SITE_DIR] [--path en/] [--out FILE.png] [--scheme light|dark]

Serves SITE_DIR (default: site, from `make build`) on a free local port and
photographs one page with Debian's Chromium through Playwright (never a
downloaded browser). The address does not need to match site_url: a
screenshot needs no instant navigation.
"""

from __future__ import annotations

import argparse
import functools
import sys
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

CHROMIUM = "/usr/bin/chromium"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--no-first-run", "--disable-sync"]


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def screenshot(site: Path, out: Path, path: str = "", scheme: str = "light", width: int = 1280,
               height: int = 800, browser=None) -> Path:
    """Write a PNG of SITE/PATH to ``out``. ``browser``: a Playwright Browser to
    reuse (one process can run only one sync Playwright); else Chromium is started."""
    if not (site / "index.html").is_file():
        raise ValueError(f"site={site!s}: expected a built site folder (run `make build` first)")
    if scheme not in ("light", "dark"):
        raise ValueError(f"scheme={scheme!r}: expected 'light' or 'dark'")
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(site)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/{path.lstrip('/')}"

    def shoot(b):
        page = b.new_page(viewport={"width": width, "height": height}, color_scheme=scheme)
        try:
            page.goto(url, wait_until="networkidle")
            out.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(out))
        finally:
            page.close()

    try:
        if browser is not None:
            shoot(browser)
        else:
            from playwright.sync_api import sync_playwright

            with sync_playwright() as p:
                b = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
                try:
                    shoot(b)
                finally:
                    b.close()
    finally:
        server.shutdown()
        server.server_close()
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("site", nargs="?", default="site", type=Path)
    ap.add_argument("--path", default="", help="page below the site root, e.g. en/ (default: the zh home page)")
    ap.add_argument("--out", type=Path, default=Path("test-artifacts/screenshot.png"))
    ap.add_argument("--scheme", default="light", choices=("light", "dark"))
    ap.add_argument("--width", type=int, default=1280)
    ap.add_argument("--height", type=int, default=800)
    args = ap.parse_args(argv)
    out = screenshot(args.site, args.out, args.path, args.scheme, args.width, args.height)
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
