"""Check the links of a built site offline, and list its external links.

    python tools/links.py [SITE_DIR] [--site-url URL] [--report FILE.json]

Every page of both languages (SITE_DIR holds zh, SITE_DIR/en holds en) is
parsed with the standard library's html.parser. Each href/src/srcset, each
url() in the site's CSS and each URL in the sitemaps is resolved the way a
browser would, against the page's own address under the site's address
(``site_url``, read from SITE_DIR/sitemap.xml unless given). A link that lands
inside the site must name a file that exists, and a #fragment on a page must
name an id (or <a name>) in that page. A link that leaves the site's folder
(a root-absolute "/x" on a site hosted under /REPO/, say) is broken too.
Links to other hosts, mailto: and the like are listed, never fetched.

Exit status 1 when anything is broken. No MkDocs, no network: this runs on
any folder of HTML, which is what a static host will serve.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urljoin, urlsplit

# Attributes that name another document or a resource the page loads.
LINK_ATTRS = {"href", "src", "srcset", "poster", "action", "data"}
NOT_LOCATIONS = ("data:", "javascript:", "blob:", "about:")
CSS_URL = re.compile(r"""url\(\s*(['"]?)([^'")]+)\1\s*\)""")
SITEMAP_NS = {"sm": "http://www.sitemaps.org/schemas/sitemap/0.9", "xhtml": "http://www.w3.org/1999/xhtml"}


@dataclass
class Link:
    source: str  # site-relative path of the file that holds the link
    url: str  # as written
    tag: str


@dataclass
class Report:
    site_url: str
    pages: int = 0
    checked: int = 0
    broken: list[tuple[str, str, str]] = field(default_factory=list)  # (source, url, why)
    external: dict[str, list[str]] = field(default_factory=dict)  # url -> sources

    def to_json(self) -> dict:
        return {
            "site_url": self.site_url,
            "pages": self.pages,
            "internal_links_checked": self.checked,
            "broken": [{"source": s, "url": u, "why": w} for s, u, w in self.broken],
            "external": [{"url": u, "pages": sorted(set(p))} for u, p in sorted(self.external.items())],
        }


class _PageParser(HTMLParser):
    """Collects a page's ids and the URLs it references (srcset split into its URLs)."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.ids: set[str] = set()
        self.links: list[tuple[str, str]] = []  # (tag, url)
        self._in_style = False
        self.styles: list[str] = []

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if value is None:
                continue
            if name == "id" or (tag == "a" and name == "name"):
                self.ids.add(value)
            elif name in LINK_ATTRS and not (tag == "object" and name != "data"):
                if name == "srcset":
                    self.links += [(tag, part.strip().split()[0]) for part in value.split(",") if part.strip()]
                elif not (tag == "form" and name == "action" and not value):
                    self.links.append((tag, value.strip()))
            elif name == "style":
                self.links += [("style", m.group(2).strip()) for m in CSS_URL.finditer(value)]
        self._in_style = tag == "style"

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        self._in_style = False

    def handle_endtag(self, tag):
        if tag == "style":
            self._in_style = False

    def handle_data(self, data):
        if self._in_style:
            self.links += [("style", m.group(2).strip()) for m in CSS_URL.finditer(data)]


def site_url_of(site: Path) -> str:
    """The address the site was built for: the first <loc> of its root sitemap
    (MkDocs lists the home page first)."""
    root = ET.parse(site / "sitemap.xml").getroot()
    loc = root.find("sm:url/sm:loc", SITEMAP_NS)
    if loc is None or not loc.text:
        raise ValueError(f"{site / 'sitemap.xml'} lists no page; pass --site-url")
    return loc.text.strip()


def _local(site: Path, path: str) -> Path | None:
    """The file a site-relative URL path is served from (directory -> index.html)."""
    target = site / unquote(path)
    if path == "" or path.endswith("/") or target.is_dir():
        target = target / "index.html"
    return target if target.is_file() else None


def _parse(page: Path, cache: dict) -> _PageParser:
    if page not in cache:
        p = _PageParser()
        p.feed(page.read_text(encoding="utf-8"))
        p.close()
        cache[page] = p
    return cache[page]


def check(site: Path, site_url: str | None = None) -> Report:
    """Check every internal link and anchor under ``site``; collect the external ones."""
    site = Path(site)
    if not (site / "index.html").is_file():
        raise ValueError(f"site={site!s}: expected a built site folder with index.html")
    site_url = site_url or site_url_of(site)
    if not site_url.endswith("/"):
        site_url += "/"
    origin = urlsplit(site_url)
    report = Report(site_url=site_url)
    parsed: dict[Path, _PageParser] = {}

    links: list[Link] = []
    for page in sorted(site.rglob("*.html")):
        rel = page.relative_to(site).as_posix()
        report.pages += 1
        links += [Link(rel, url, tag) for tag, url in _parse(page, parsed).links]
    for css in sorted(site.rglob("*.css")):
        rel = css.relative_to(site).as_posix()
        text = re.sub(r"/\*.*?\*/", "", css.read_text(encoding="utf-8"), flags=re.S)
        links += [Link(rel, m.group(2).strip(), "css") for m in CSS_URL.finditer(text)]
    for sitemap in sorted(site.rglob("sitemap.xml")):
        rel = sitemap.relative_to(site).as_posix()
        root = ET.parse(sitemap).getroot()
        links += [Link(rel, e.text.strip(), "loc") for e in root.iterfind("sm:url/sm:loc", SITEMAP_NS)]
        links += [Link(rel, e.get("href", ""), "xhtml:link") for e in root.iterfind("sm:url/xhtml:link", SITEMAP_NS)]

    for link in links:
        url = link.url
        if not url or url.startswith(NOT_LOCATIONS):
            continue
        absolute = urljoin(site_url + link.source, url)
        parts = urlsplit(absolute)
        if parts.scheme not in ("http", "https") or parts.netloc != origin.netloc:
            report.external.setdefault(url, []).append(link.source)
            continue
        report.checked += 1
        if not parts.path.startswith(origin.path):
            report.broken.append((link.source, url, f"leaves the site's folder {origin.path}"))
            continue
        target = _local(site, parts.path[len(origin.path):])
        if target is None:
            report.broken.append((link.source, url, "no such file"))
            continue
        if parts.fragment and target.suffix == ".html" and link.tag != "xhtml:link":
            anchor = unquote(parts.fragment)
            if anchor not in _parse(target, parsed).ids:
                report.broken.append((link.source, url, f"no id {anchor!r} in {target.relative_to(site).as_posix()}"))
    return report


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("site", nargs="?", default="site", type=Path, help="built site folder (default: site)")
    ap.add_argument("--site-url", help="address the site was built for (default: from its sitemap.xml)")
    ap.add_argument("--report", type=Path, help="write the full report (broken and external links) as JSON here")
    args = ap.parse_args(argv)
    report = check(args.site, args.site_url)
    if args.report:
        args.report.parent.mkdir(parents=True, exist_ok=True)
        args.report.write_text(json.dumps(report.to_json(), ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"{report.pages} pages under {report.site_url}: {report.checked} internal links checked, "
          f"{len(report.broken)} broken; {len(report.external)} external links (not fetched)")
    for url, sources in sorted(report.external.items()):
        print(f"  external  {url}  ({len(set(sources))} page(s))")
    for source, url, why in report.broken:
        print(f"  BROKEN    {source}: {url}  -- {why}")
    return 1 if report.broken else 0


if __name__ == "__main__":
    sys.exit(main())
