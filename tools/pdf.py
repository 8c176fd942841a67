"""`make pdf`: print each language's print edition (SITE/print/, SITE/en/print/) to a PDF.

    python tools/pdf.py SITE          # writes SITE/normref-zh.pdf and SITE/normref-en.pdf

The built site is served on 127.0.0.1 (a free port) and each print page is
printed by Chromium through Playwright's page.pdf: Debian's /usr/bin/chromium,
the browser named by $CHROMIUM, or an installed Chromium/Chrome (the Pages
workflow's runner has one); never a downloaded one. The page is printed in the light scheme, after every
image has loaded and every web font is ready (KaTeX's, and the print page's
own CJK font: normsite.printed.cjk_font), so Chinese is embedded as real text.
Then SITE/print/pdf.json (and en/print/pdf.json) are rewritten with the PDF's
address, so the home page and the print page show their PDF link.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--no-first-run", "--disable-sync"]
sys.path.insert(0, str(ROOT))
from normref.bilingual import LANGS  # noqa: E402  (the one definition)


def chromium() -> str:
    """The browser to print with: $CHROMIUM, else Debian's /usr/bin/chromium, else an
    installed Chromium or Chrome on PATH (a CI runner's). Never a downloaded one."""
    for exe in (os.environ.get("CHROMIUM"), "/usr/bin/chromium", "chromium", "chromium-browser", "google-chrome"):
        found = exe and (shutil.which(exe) or (exe if os.access(exe, os.X_OK) else None))
        if found:
            return found
    raise SystemExit("no Chromium found: install Debian's chromium (`make browser-deps`) or set CHROMIUM")


def serve(folder: Path):
    sys.path.insert(0, str(ROOT))  # normsite, beside the tools
    from normsite.serve import static_site

    return static_site(folder)


_READY = """async () => {
    const imgs = [...document.images];
    imgs.forEach(i => { i.loading = 'eager'; });
    await Promise.all(imgs.map(i => i.complete ? null : new Promise(r => { i.onload = i.onerror = r; })));
    await document.fonts.ready;
    return imgs.filter(i => !(i.naturalWidth > 0)).map(i => i.src);
}"""


def make_pdfs(site: Path, out: Path | None = None, browser=None) -> dict[str, Path]:
    """Print SITE's print edition in both languages; {lang: pdf path}. ``out`` defaults to
    ``site`` (where the pages link the PDFs); ``browser`` is an open Playwright browser, or None."""
    from normsite.printed import PDF_NAME, pdf_manifest

    site = Path(site)
    out = Path(out or site)
    for lang in LANGS:
        page = (site if lang == "zh" else site / "en") / "print" / "index.html"
        if not page.is_file():
            raise ValueError(f"site={site}: no {page.relative_to(site)} (build the site first: make build)")
    made = {}
    with contextlib.ExitStack() as stack:
        if browser is None:
            from playwright.sync_api import sync_playwright

            pw = stack.enter_context(sync_playwright())
            browser = pw.chromium.launch(executable_path=chromium(), args=FLAGS)
            stack.callback(browser.close)
        base = stack.enter_context(serve(site))
        for lang in LANGS:
            ctx = browser.new_context(color_scheme="light", locale="zh-CN" if lang == "zh" else "en-US")
            try:
                tab = ctx.new_page()
                url = base + ("" if lang == "zh" else "en/") + "print/"
                tab.goto(url, wait_until="load", timeout=120_000)
                broken = tab.evaluate(_READY)
                if broken:
                    raise RuntimeError(f"{url}: images that did not load: {broken[:5]}")
                tab.emulate_media(media="print", color_scheme="light")
                pdf = out / PDF_NAME.format(lang=lang)
                # Numbers only: the footer is drawn outside the page, without its fonts.
                label = "<span class='pageNumber'></span> / <span class='totalPages'></span>"
                tab.pdf(path=str(pdf), format="A4", print_background=True, display_header_footer=True,
                        header_template="<span></span>",
                        footer_template=f"<div style='font-size:8px;width:100%;text-align:center;color:#555'>{label}</div>",
                        margin={"top": "16mm", "bottom": "18mm", "left": "14mm", "right": "14mm"})
                made[lang] = pdf
            finally:
                ctx.close()
    if out == site:
        for lang, pdf in made.items():
            folder = (site if lang == "zh" else site / "en") / "print"
            rel = os.path.relpath(pdf, folder).replace(os.sep, "/")
            (folder / "pdf.json").write_text(pdf_manifest(lang, rel), encoding="utf-8")
    return made


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("site", type=Path, nargs="?", default=ROOT / "site", help="the built site (default: site/)")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    for lang, pdf in make_pdfs(args.site).items():
        print(f"{lang}: {pdf} ({pdf.stat().st_size / 1024 / 1024:.1f} MiB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
