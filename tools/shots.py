"""Full-page screenshots of every page of the built site, and one contact sheet to look at them.

    python tools/shots.py [SITE_DIR] [--out test-artifacts/shots] [--only SUBSTRING] [--print]

Serves SITE_DIR (default: site, from `make build`) on a free local port
(normsite.serve.static_site) and photographs every page of both languages, light
and dark, on a desktop (1280 px wide) and a phone (390 px wide), with Debian's
Chromium through Playwright (never a downloaded browser). One browser, one
context per (scheme, width), reused for every page. Images load eagerly for the
shot (loading="lazy" is dropped and every image is awaited), fonts and KaTeX
included. The print edition (print/, the whole book on one page) is left out
unless --print.

Writes OUT/<lang>-<page>-<scheme>-<device>.png, a thumbnail of each under
OUT/thumbs/, and OUT/index.html: the contact sheet, one row per page, one column
per zh/en × light/dark × desktop/phone, each thumbnail linking to its full image.
"""

from __future__ import annotations

import argparse
import html
import os
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from normref.bilingual import LANGS  # noqa: E402
from normsite.serve import static_site  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--no-first-run", "--disable-sync"]
SCHEMES = ("light", "dark")
DEVICES = {"desktop": {"viewport": {"width": 1280, "height": 900}},
           "phone": {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True}}
THUMB_WIDTH = 180
THUMB_MAX_HEIGHT = 1400  # a long page's thumbnail shows its top; the full image is one click away

# Every image loads now, not when scrolled to; then wait for the images, the fonts and
# the page's own scripts (figures, widgets, math) to settle.
_EAGER = """async () => {
    for (const img of document.querySelectorAll('img[loading="lazy"]')) {
        img.loading = 'eager';
        const src = img.getAttribute('src');
        if (src && !img.complete) img.src = src;
    }
    await Promise.all([...document.images].map(img => img.complete ? null :
        new Promise(ok => { img.addEventListener('load', ok, {once: true});
                            img.addEventListener('error', ok, {once: true});
                            setTimeout(ok, 5000); })));
    await document.fonts.ready;
    return document.images.length;
}"""


def site_pages(site: Path, lang: str, with_print: bool = False) -> list[str]:
    """The built pages of one language, as paths below its root ("" for the home page)."""
    root = site if lang == "zh" else site / "en"
    out = []
    for p in sorted(root.rglob("index.html")):
        rel = p.relative_to(root).parent.as_posix()
        rel = "" if rel == "." else rel + "/"
        if lang == "zh" and rel.startswith("en/"):
            continue
        if rel.startswith("print/") and not with_print:
            continue
        out.append(rel)
    if (root / "404.html").is_file():
        out.append("404.html")
    return out


def slug(rel: str) -> str:
    s = rel.strip("/").removesuffix(".html").replace("/", "_")
    return s or "home"


def shot_name(lang: str, rel: str, scheme: str, device: str) -> str:
    return f"{lang}-{slug(rel)}-{scheme}-{device}.png"


def take(site: Path, out: Path, only: str | None = None, with_print: bool = False, log=print) -> dict:
    """Photograph every page (those whose path contains `only`, if given); returns
    {(lang, rel, scheme, device): png path} of the shots written."""
    if not (site / "index.html").is_file() or not (site / "en" / "index.html").is_file():
        raise ValueError(f"site={site!s}: expected a built site with both languages (run `make build` first)")
    if not os.access(CHROMIUM, os.X_OK):
        raise RuntimeError(f"{CHROMIUM} is missing: run `make browser-deps` (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    out.mkdir(parents=True, exist_ok=True)
    pages = {lang: [r for r in site_pages(site, lang, with_print) if only is None or only in r] for lang in LANGS}
    shots = {}
    with static_site(site) as base, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        try:
            for scheme in SCHEMES:
                for device, kw in DEVICES.items():
                    ctx = browser.new_context(color_scheme=scheme, device_scale_factor=1, **kw)
                    ctx.route(re.compile(r"^(?!http://127\.0\.0\.1:).*"), lambda r: r.abort())  # no other host
                    page = ctx.new_page()
                    try:
                        for lang in LANGS:
                            for rel in pages[lang]:
                                url = base + ("" if lang == "zh" else "en/") + rel
                                page.goto(url, wait_until="networkidle")
                                page.evaluate(_EAGER)
                                page.wait_for_timeout(150)  # a last layout after the images
                                dest = out / shot_name(lang, rel, scheme, device)
                                page.screenshot(path=str(dest), full_page=True)
                                shots[(lang, rel, scheme, device)] = dest
                                log(f"  {dest.name}")
                    finally:
                        ctx.close()
        finally:
            browser.close()
    return shots


def thumbnails(shots: dict, out: Path) -> dict:
    """A small copy of each shot (the sheet would otherwise load every full image)."""
    from PIL import Image

    tdir = out / "thumbs"
    tdir.mkdir(parents=True, exist_ok=True)
    thumbs = {}
    for key, png in shots.items():
        with Image.open(png) as im:
            w, h = im.size
            scale = THUMB_WIDTH / w if key[3] == "desktop" else THUMB_WIDTH / 2 / w
            small = im.convert("RGB").resize((max(1, round(w * scale)), max(1, round(h * scale))), Image.LANCZOS)
            if small.height > THUMB_MAX_HEIGHT:
                small = small.crop((0, 0, small.width, THUMB_MAX_HEIGHT))
            dest = tdir / (png.stem + ".jpg")
            small.save(dest, quality=85)
        thumbs[key] = dest
    return thumbs


def sheet(shots: dict, thumbs: dict, out: Path) -> Path:
    """OUT/index.html: rows = pages, columns = zh/en × light/dark × desktop/phone."""
    cols = [(lang, scheme, device) for lang in LANGS for scheme in SCHEMES for device in DEVICES]
    rows = []
    seen = []
    for lang, rel, _s, _d in shots:
        if rel not in seen:
            seen.append(rel)
    for rel in seen:
        cells = []
        for lang, scheme, device in cols:
            key = (lang, rel, scheme, device)
            if key not in shots:
                cells.append("<td class=missing>—</td>")
                continue
            full = shots[key].relative_to(out).as_posix()
            th = thumbs[key].relative_to(out).as_posix()
            alt = html.escape(f"{lang} {rel or 'home'} {scheme} {device}")
            cells.append(f'<td class="{scheme}"><a href="{html.escape(full)}"><img src="{html.escape(th)}" '
                         f'alt="{alt}" loading="lazy"></a></td>')
        rows.append(f"<tr><th>{html.escape(rel or '/ (home)')}</th>{''.join(cells)}</tr>")
    head = "".join(f"<th>{lang}<br>{scheme}<br>{device}</th>" for lang, scheme, device in cols)
    doc = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>normref: every page, both languages, light and dark, desktop and phone</title>
<style>
body {{ font: 14px/1.4 system-ui, sans-serif; margin: 1rem; }}
table {{ border-collapse: collapse; }}
th, td {{ border: 1px solid #ccc; padding: 4px; vertical-align: top; }}
thead th {{ position: sticky; top: 0; background: #fff; z-index: 1; }}
tbody th {{ position: sticky; left: 0; background: #fff; text-align: left; max-width: 9em; word-break: break-all; }}
td.dark {{ background: #333; }}
img {{ display: block; max-width: {THUMB_WIDTH}px; }}
</style></head><body>
<h1>Every page, as a reader sees it</h1>
<p>{len(shots)} full-page screenshots ({len(seen)} pages; desktop 1280 px, phone 390 px wide).
Click a thumbnail for the full image. Long pages' thumbnails show their top.</p>
<table><thead><tr><th>page</th>{head}</tr></thead>
<tbody>
{chr(10).join(rows)}
</tbody></table></body></html>
"""
    dest = out / "index.html"
    dest.write_text(doc, encoding="utf-8")
    return dest


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("site", nargs="?", default="site", type=Path)
    ap.add_argument("--out", type=Path, default=Path("test-artifacts/shots"))
    ap.add_argument("--only", default=None, help="only pages whose path contains this (e.g. placement/)")
    ap.add_argument("--print", dest="with_print", action="store_true", help="include the print edition")
    args = ap.parse_args(argv)
    t0 = time.monotonic()
    shots = take(args.site, args.out, args.only, args.with_print)
    dest = sheet(shots, thumbnails(shots, args.out), args.out)
    print(f"wrote {len(shots)} screenshots and {dest} in {time.monotonic() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
