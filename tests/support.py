"""What the test files share: paths, the site build, the static server, Chromium, axe, snippets, tools.

Test files import from here (``from support import …``), never from one another
or from conftest.py; conftest.py turns these helpers into fixtures (the session's
built site, its server, one browser and tab per module). A helper that two test
files need belongs here. tests/test_tiers.py checks both rules.
"""

from __future__ import annotations

import contextlib
import filecmp
import functools
import http.server
import importlib.util
import os
import re
import shlex
import shutil
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parent.parent
LANGS = ("zh", "en")

# Debian's Chromium, never a downloaded browser; flags for a headless run that
# phones no one (no component updates, no background networking, no sync).
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--no-first-run", "--disable-sync"]
SCREENSHOTS = ROOT / "test-artifacts" / "screenshots"
SERIOUS = ("serious", "critical")  # the axe impacts a test fails on


# ---------------------------------------------------------------- the built site


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


def build_site(out: Path, site_url: str | None = None, env_extra: dict | None = None,
               langs: tuple[str, ...] = LANGS) -> subprocess.CompletedProcess:
    """Strict build of both languages into ``out`` (zh at out/, en at out/en/), for ``site_url``
    (NORMREF_SITE_URL; mkdocs.yml's default when None). Returns the builds' logs as stderr;
    a failed build raises AssertionError with the end of its log. ``langs``: build only
    these (zh first), say to show what a lone English build is missing.

    Tests reach this through conftest's ``site_builder`` fixture, so that a test that
    builds is marked ``build`` (conftest.py); the cache is the session's (NORMREF_CACHE)."""
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1", **(env_extra or {}))
    if site_url is not None:
        env["NORMREF_SITE_URL"] = site_url
    logs = []
    bad = set(langs) - set(LANGS)
    if bad:
        raise ValueError(f"langs must be drawn from {LANGS}, got {langs!r}")
    if set(langs) == set(LANGS):  # as `make build` does: both side by side (normsite.sitebuild)
        p = subprocess.run([sys.executable, "-m", "normsite.sitebuild", "--out", str(out)],
                           cwd=ROOT, env=env, capture_output=True, text=True)
        if p.returncode != 0:
            raise AssertionError(f"python -m normsite.sitebuild failed:\n{p.stderr[-4000:]}")
        return subprocess.CompletedProcess(args=p.args, returncode=0, stdout="", stderr=p.stderr)
    builds = {"zh": ("mkdocs.yml", out), "en": ("mkdocs.en.yml", out / "en")}
    for cfg, dest in (builds[lang] for lang in LANGS if lang in langs):
        p = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f", cfg, "-d", str(dest)],
                           cwd=ROOT, env=env, capture_output=True, text=True)
        logs.append(p.stderr)
        if p.returncode != 0:
            raise AssertionError(f"mkdocs build -f {cfg} failed:\n{p.stderr[-4000:]}")
    return subprocess.CompletedProcess(args=[], returncode=0, stdout="", stderr="\n".join(logs))


# ---------------------------------------------------------------- fresh virtualenvs (the copy and wheel tests)

PYTHON = shutil.which("python3.11") or sys.executable
INSTALL_TIMEOUT_S = 1200


@dataclass
class Venv:
    root: Path
    env: dict
    installed: set = field(default_factory=set)  # install blocks already run here (a reader runs a line once)

    @property
    def python(self) -> str:
        return str(self.root / "bin" / "python")

    def sh(self, line: str, cwd: Path, timeout: int = INSTALL_TIMEOUT_S) -> subprocess.CompletedProcess:
        return subprocess.run(["bash", "-c", line], cwd=cwd, env=self.env, capture_output=True, text=True,
                              timeout=timeout)

    def install(self, block: str, cwd: Path) -> float:
        """Run a copied install block line by line in a shell whose pip is the virtualenv's (its comment lines,
        which bash would skip, skipped); seconds taken."""
        if block in self.installed:
            return 0.0
        t0 = time.perf_counter()
        for line in shell_commands(block):
            assert shlex.split(line)[:2] == ["pip", "install"], f"not an install line: {line!r}"
            p = self.sh(line, cwd)
            assert p.returncode == 0, f"{line}\n{p.stdout[-2000:]}\n{p.stderr[-3000:]}"
        self.installed.add(block)
        return time.perf_counter() - t0

    def can_import(self, module: str, cwd: Path) -> bool:
        return subprocess.run([self.python, "-c", f"import {module}"], cwd=cwd, env=self.env,
                              capture_output=True).returncode == 0


def shell_commands(block: str) -> list[str]:
    """The commands of a copied shell block: its lines, less blank and comment lines."""
    return [ln for ln in (raw.strip() for raw in block.splitlines()) if ln and not ln.startswith("#")]


def make_venv(path: Path, tmp: Path, constraints: str | None = None) -> Venv:
    """A fresh virtualenv (python3.11 -m venv) whose environment holds nothing of the repository: pip keeps
    this machine's configuration (PIP_*), as CI does, but not its own PIP_CONSTRAINT; ``constraints`` (lines
    of a pip constraints file, such as the torch pin) is written under ``tmp`` and used by every install;
    normref caches under ``tmp`` (copy_venv_env)."""
    subprocess.run([PYTHON, "-m", "venv", str(path)], check=True, timeout=300)
    env = copy_venv_env(path, tmp, constraints)
    return Venv(path, env)


# ---------------------------------------------------------------- snippets and tools


def run_snippet(name: str | Path, timeout: int = 600) -> str:
    """Run a snippet in a fresh Python (normref importable); its stdout. A file of snippets/ itself runs as the
    build runs it (normsite.snippets.run: one torch thread, its own time limit), through the session's cache:
    usually once per version of its code for the session (two workers that ask at once may both run it), and not
    at all in the build tier, where the build ran it. ``timeout`` applies to any other file. The copy tests run
    each snippet as copied from a page, in a fresh virtualenv."""
    path = name if isinstance(name, Path) else ROOT / "snippets" / name
    if path.parent == ROOT / "snippets":
        from normsite import snippets

        return snippets.run(path.name)[0]
    env = dict(os.environ, PYTHONPATH=str(ROOT), MPLBACKEND="Agg")
    p = subprocess.run([sys.executable, str(path)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)
    assert p.returncode == 0, f"{path.name} failed:\n{p.stderr[-3000:]}"
    return p.stdout


# Lines that time something differ from run to run: the pages show none (timing
# snippets are code-only), but should one appear it is left out of the comparison.
_TIMING = re.compile(r"\b\d+(\.\d+)?\s*(ms|µs|us|ns|s)\b|\bGB/s\b")


def comparable(text: str) -> list[str]:
    """A snippet's output lines as two runs can agree on: trailing blanks and timing lines left out."""
    return [ln.rstrip() for ln in text.rstrip().splitlines() if not _TIMING.search(ln)]


def copy_venv_env(path: Path, tmp: Path, constraint: str | None) -> dict:
    """The copy test's environment for a copied line run in the virtualenv at ``path``: this machine's PIP_*
    settings and locale, and a constraints file (written in ``tmp``) holding ``constraint`` (test_copy: torch at
    the pin), or, with None (NORMREF_COPY_UNCONSTRAINED=1), no constraint at all, this machine's own neither."""
    env = {k: v for k, v in os.environ.items()
           if k.startswith("PIP_") or k in ("HOME", "LANG", "LC_ALL", "TMPDIR", "SSL_CERT_FILE", "REQUESTS_CA_BUNDLE")}
    env.pop("PIP_CONSTRAINT", None)
    if constraint is not None:
        constraints = tmp / "constraints.txt"
        constraints.write_text(constraint + "\n", encoding="utf-8")
        env["PIP_CONSTRAINT"] = str(constraints)
    env.update(PATH=f"{path / 'bin'}:/usr/local/bin:/usr/bin:/bin", VIRTUAL_ENV=str(path),
               PIP_DISABLE_PIP_VERSION_CHECK="1", PYTHONNOUSERSITE="1",
               # A reader's normref caches in their user cache folder (~/.cache/normref, hundreds of MB with
               # the real models): keep the test's out of this machine's home.
               NORMREF_CACHE=str(tmp / "reader-cache"))
    env.setdefault("LANG", "C.UTF-8")
    return env


def code_only(src: str) -> str:
    """A script's code without its comments and docstrings: ast.dump of its module with every docstring (a
    string constant alone as the first statement of the module, a class or a function) removed. Two files
    with equal code_only run the same (a snippet's Chinese variant and the English file, say)."""
    import ast

    tree = ast.parse(src)
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body \
                and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant) \
                and isinstance(node.body[0].value.value, str):
            node.body = node.body[1:] or [ast.Pass()]
    return ast.dump(tree)


def snippet_loads_models(path: Path) -> bool:
    """Does the snippet load real model weights (it imports normref.models)? Its test is then `models`."""
    return "normref.models" in path.read_text(encoding="utf-8")


def load_tool(name: str):
    """tools/NAME.py as a module (the tools are scripts, not a package). As when one runs as a script, the
    folder is on sys.path, so a tool imports its siblings (tools/marked.py) whichever test loads it first."""
    mod_name = f"normref_tool_{name}"
    if mod_name in sys.modules:
        return sys.modules[mod_name]
    if str(ROOT / "tools") not in sys.path:
        sys.path.insert(0, str(ROOT / "tools"))
    spec = importlib.util.spec_from_file_location(mod_name, ROOT / "tools" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[mod_name] = mod  # dataclasses look their module up there
    spec.loader.exec_module(mod)
    return mod


# ---------------------------------------------------------------- figure texts without model weights


class NeedsWeights(Exception):
    """Raised in place of loading real model weights (inside :func:`no_model_weights`)."""


@contextlib.contextmanager
def no_model_weights():
    """Within it, loading real weights (normref.models.checkpoint's one loader, which normref.models.load and
    every experiment go through) raises NeedsWeights: a result already in the cache is still read."""
    from normref.models import checkpoint

    def refuse(model):
        raise NeedsWeights(model)

    real, checkpoint._load = checkpoint._load, refuse
    try:
        yield
    finally:
        checkpoint._load = real


@functools.lru_cache(maxsize=1)
def figure_texts_without_weights() -> tuple[dict, tuple[str, ...]]:
    """({figure: {"alt": {lang: text}, "caption": {lang: text}}} of every figure whose texts need no real model
    weights, filled in (every placeholder resolved, else FigureTextError), and the names of the others: their
    captions' fields are a measurement on real weights (layer drop, the S-curve), which the fast tier does not
    load; the tests that fill every figure's texts read those from the built site's cache (``built_cache``)."""
    from normref import figures

    texts, need = {}, []
    with no_model_weights():
        for name in figures.names():
            spec = figures.get(name)
            try:
                texts[name] = {"alt": spec.alt, "caption": spec.caption}
            except NeedsWeights:
                need.append(name)
    return texts, tuple(need)


# ---------------------------------------------------------------- the static server


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # keep the test output clean
        pass


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        # A browser that drops a response it no longer wants (a navigation away, a lazy image off screen)
        # closes its socket mid-write: not an error of the site. Anything else is printed as before.
        if isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            return
        super().handle_error(request, client_address)


class StaticServer:
    """A folder served on 127.0.0.1 by a threaded http.server.

    The socket is bound at once, so its address is known before anything is built
    into the folder (instant navigation works only when the served address equals
    the build's site_url); requests are answered from start() on."""

    def __init__(self, root: Path, port: int = 0):
        self.root = Path(root)
        self._httpd = _Server(("127.0.0.1", port), functools.partial(_QuietHandler, directory=str(self.root)))
        self.port = self._httpd.server_address[1]
        self.base = f"http://127.0.0.1:{self.port}/"
        self._thread = None

    def start(self) -> "StaticServer":
        if self._thread is None:
            self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
            self._thread.start()
        return self

    def close(self):
        if self._thread is not None:
            self._httpd.shutdown()
        self._httpd.server_close()


@dataclass
class Served:
    """The session's built site, served: zh at base, en at base + "en/"."""

    root: Path  # the site folder: zh at root/, en at root/en/
    base: str  # http://127.0.0.1:PORT/

    def url(self, lang: str, rel: str = "") -> str:
        return self.base + ("" if lang == "zh" else "en/") + rel

    def rel(self, lang: str, url: str) -> str:
        """Path of `url` relative to the language root (query and fragment dropped)."""
        path = urlsplit(url).path
        root = urlsplit(self.url(lang)).path
        assert path.startswith(root), f"{url} is outside the {lang} site"
        return path[len(root):]

    def lang_of(self, url: str) -> str:
        return "en" if urlsplit(url).path.startswith(urlsplit(self.url("en")).path) else "zh"

    def pages(self, lang: str) -> list[str]:
        """Every built page of a language, as a path relative to its root (index.html dropped)."""
        out = []
        for p in pages(self.root, lang):
            rel = p.relative_to(lang_root(self.root, lang)).as_posix()
            out.append(rel[: -len("index.html")] if rel.endswith("index.html") else rel)
        return out

    def instant_pages(self, lang: str) -> list[str]:
        """The pages instant navigation can reach: those in the language's sitemap (Material
        intercepts only links to them; the print edition is left out of it, on purpose)."""
        locs = re.findall(r"<loc>([^<]+)</loc>", (lang_root(self.root, lang) / "sitemap.xml").read_text(encoding="utf-8"))
        paths = {urlsplit(u).path for u in locs}
        root = urlsplit(self.url(lang)).path
        return [r for r in self.pages(lang) if root + r in paths]

    def html(self, lang: str, rel: str) -> str:
        p = lang_root(self.root, lang) / rel
        return (p / "index.html" if rel == "" or rel.endswith("/") else p).read_text(encoding="utf-8")


# ---------------------------------------------------------------- Chromium


@contextlib.contextmanager
def chromium():
    """Debian's Chromium, headless, through Playwright's sync API (one per thread at a time)."""
    if not os.access(CHROMIUM, os.X_OK):
        raise RuntimeError(f"{CHROMIUM} is missing: run `make browser-deps` (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        try:
            yield b
        finally:
            b.close()


@dataclass
class Tab:
    """One browser tab on the served site, with what it saw since the last reset."""

    page: object
    served: Served
    errors: list = field(default_factory=list)  # console errors, page errors, failed loads
    foreign: list = field(default_factory=list)  # requests to any other host (aborted)
    local: list = field(default_factory=list)  # requests to the local server

    def reset(self):
        self.errors.clear()
        self.foreign.clear()
        self.local.clear()

    def goto(self, url: str, idle: bool = False):
        resp = self.page.goto(url, wait_until="networkidle" if idle else "load")
        assert resp is not None and resp.status == 200, f"{url}: HTTP {resp and resp.status}"
        return resp

    def mark(self):
        """Tag the document; the tag survives only an instant (JS) navigation."""
        self.page.evaluate("window.__nrMark = 1")

    def marked(self) -> bool:
        return self.page.evaluate("window.__nrMark === 1")

    def instant(self, target: str):
        """Follow the site's own link to `target` (as the reader's click would) and wait for it."""
        # Material intercepts links only once it has fetched the sitemap. Wait for that
        # fetch itself: "networkidle" (no request for 500 ms) timed out on a busy machine.
        # Material subscribes to clicks a moment after that fetch ends; a click in between is an ordinary
        # page load (the reader loses nothing). Then the test goes back and clicks again, a few times at most:
        # what it checks is that instant navigation happens once Material is ready.
        start, marked = self.page.url, self.marked()
        for attempt in range(4):
            if attempt:
                self._back_to(start)
                self.page.wait_for_timeout(500 * attempt)
                if marked:
                    self.mark()
            self.page.wait_for_load_state("load")
            self.page.wait_for_function(
                "() => performance.getEntriesByType('resource')"
                ".some(e => e.name.split('?')[0].endsWith('/sitemap.xml') && e.responseEnd > 0)")
            clicked = self.page.evaluate(
                """(target) => {
                    window.__nrOldArticle = document.querySelector('article');
                    window.__nrSamePage = 1;
                    const a = [...document.querySelectorAll('a[href]')].find(a => a.href.split('#')[0] === target);
                    if (!a) return false;
                    a.click();
                    return true;
                }""",
                target,
            )
            assert clicked, f"no link to {target} on {self.page.url}"
            if self._stayed(target):
                break
        # Material pushes the new address at the click, fetches the page, then swaps the content and
        # emits document$: wait for a new article (the old one is replaced), not for the address.
        self.page.wait_for_function("(t) => location.href.split('#')[0] === t && document.querySelector('article h1')"
                                    " && document.querySelector('article') !== window.__nrOldArticle", arg=target)

    def _back_to(self, url: str):
        """``page.goto(url)`` after the click that was not instant: the page load that click started may not
        have begun yet, and then it interrupts this one (CI saw "interrupted by another navigation"). Let it
        finish and go again."""
        from playwright.sync_api import Error as PlaywrightError

        for _ in range(3):
            try:
                self.page.goto(url)
                return
            except PlaywrightError as e:
                if "interrupted by another navigation" not in str(e):
                    raise
                self.page.wait_for_load_state("load")
        self.page.goto(url)

    def _stayed(self, target: str) -> bool:
        """After the click: did `target` arrive in the same document (an instant navigation)?

        An ordinary page load that the click started may still be committing when the address
        already reads `target` (CI saw "Execution context was destroyed" from the check itself,
        under load): then the answer is no, and the caller clicks again."""
        from playwright.sync_api import Error as PlaywrightError

        try:
            self.page.wait_for_url(target)
            self.page.wait_for_load_state("load")
            return bool(self.page.evaluate("window.__nrSamePage === 1"))
        except PlaywrightError as e:
            if "context was destroyed" not in str(e) and "navigat" not in str(e).lower():
                raise
            self.page.wait_for_load_state("load")
            return False

    def set_scheme(self, scheme: str):
        """Emulate the reader's system colour scheme ("default" or "slate"); Material's palette follows it."""
        self.page.emulate_media(color_scheme="dark" if scheme == "slate" else "light")

    def scheme_is(self, scheme: str):
        """Wait until Material shows `scheme`."""
        self.page.wait_for_function("(s) => document.body.getAttribute('data-md-color-scheme') === s", arg=scheme,
                                    timeout=5000)


@contextlib.contextmanager
def open_tab(browser, served: Served):
    """A tab whose every request is routed through the test: the local server's go through,
    anything else is recorded and aborted, so "no other host" holds on every page view."""
    ctx = browser.new_context(viewport={"width": 1280, "height": 900}, permissions=["clipboard-read", "clipboard-write"],
                              color_scheme="light")
    origin = served.base.rstrip("/")
    t = Tab(page=None, served=served)

    def route(r):
        url = r.request.url
        if url.startswith(origin + "/"):
            t.local.append(url)
            r.continue_()
        else:
            t.foreign.append(url)
            r.abort()

    ctx.route("**/*", route)
    # Material remembers the last palette in localStorage and prefers it to the
    # system's colour scheme; forget it before each page loads, so every page
    # follows the scheme the test emulates (as on a reader's first visit).
    ctx.add_init_script("try { Object.keys(localStorage).filter(k => k.endsWith('.__palette'))"
                        ".forEach(k => localStorage.removeItem(k)); } catch (e) {}")
    # Requests that bypass routing (workers, say) are still seen here.
    ctx.on("request", lambda rq: t.foreign.append(rq.url)
           if not rq.url.startswith((origin + "/", "data:", "blob:")) and rq.url not in t.foreign else None)
    page = ctx.new_page()
    page.on("console", lambda m: t.errors.append(f"console.{m.type}: {m.text} ({m.location.get('url')})")
            if m.type == "error" else None)
    page.on("pageerror", lambda e: t.errors.append(f"page error: {e}"))
    page.on("response", lambda r: t.errors.append(f"HTTP {r.status}: {r.url}") if r.status >= 400 else None)
    t.page = page
    try:
        yield t
    finally:
        ctx.close()


def axe_violations(page, context: str | dict | None = None) -> list[str]:
    """axe-core's serious and critical findings on the page (or inside the `context`: a selector, or
    axe's include/exclude mapping), one line each. axe is the copy bundled in the axe-playwright-python wheel (no CDN)."""
    from axe_playwright_python.sync_playwright import Axe

    kw = {"context": context} if context else {}
    res = Axe().run(page, options={"resultTypes": ["violations"]}, **kw)
    return [f"{v['id']} ({v['impact']}): {v['help']} — " + "; ".join(" ".join(n["target"]) for n in v["nodes"][:5])
            for v in res.response["violations"] if v["impact"] in SERIOUS]


_CONTRAST = """(sel) => {
    const lum = (c) => {
        const m = c.match(/[\\d.]+/g).map(Number);
        const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
        return [0.2126 * f(m[0]) + 0.7152 * f(m[1]) + 0.0722 * f(m[2]), m.length > 3 ? m[3] : 1];
    };
    const bg = (e) => {
        for (; e; e = e.parentElement) {
            const c = getComputedStyle(e).backgroundColor;
            if (c && lum(c)[1] > 0.5) return c;
        }
        return getComputedStyle(document.body).backgroundColor;
    };
    const w = document.querySelector(sel);
    const worst = [];
    const texts = [...w.querySelectorAll('*')].filter(e =>
        ([...e.childNodes].some(n => n.nodeType === 3 && n.textContent.trim()) || e.matches('input[type=search], select'))
        && e.getClientRects().length);
    for (const e of texts) {
        const st = getComputedStyle(e);
        const fg = e instanceof SVGElement ? st.fill : st.color;
        const a = lum(fg)[0], b = lum(bg(e))[0];
        const ratio = (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
        worst.push([ratio, e.tagName + '.' + (e.getAttribute('class') || '') + ': ' + e.textContent.slice(0, 30)]);
    }
    worst.sort((x, y) => x[0] - y[0]);
    return {n: texts.length, worst: worst.slice(0, 3)};
}"""


def contrast(page, selector: str) -> dict:
    """Text contrast inside `selector`, light or dark: {"n": texts measured, "worst": [(ratio, where), …]}
    for every element with its own text (HTML and SVG; inputs and selects too), against the first
    opaque background behind it (WCAG's relative luminance)."""
    got = page.evaluate(_CONTRAST, selector)
    got["worst"] = [tuple(w) for w in got["worst"]]
    return got


def tree_differences(a: Path, b: Path) -> list[str]:
    """Every file only in one of two built sites, and every common file whose bytes differ, one line each."""
    out = []

    def walk(cmp: filecmp.dircmp, prefix: str):
        out.extend(f"only in first: {prefix}{n}" for n in cmp.left_only)
        out.extend(f"only in second: {prefix}{n}" for n in cmp.right_only)
        out.extend(f"differs: {prefix}{n}" for n in cmp.diff_files)
        for name, sub in cmp.subdirs.items():
            walk(sub, f"{prefix}{name}/")

    walk(filecmp.dircmp(a, b, ignore=[]), "")
    # dircmp compares by os.stat signature first; recheck bytes of every common file.
    for f in a.rglob("*"):
        g = b / f.relative_to(a)
        if f.is_file() and g.is_file() and f.read_bytes() != g.read_bytes():
            out.append(f"differs: {f.relative_to(a)}")
    return sorted(set(out))
