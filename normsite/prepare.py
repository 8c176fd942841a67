"""The prepare pass: the one place a site build runs normref.

``python -m normsite.prepare`` (a fresh process, once per build) finds every
directive of every page of both languages (``docs/<lang>/**/*.md``;
:data:`normsite.directives.PREPARED`), computes what the content-hash cache
lacks (figures in both themes, snippet outputs and every notebook executed with
nbclient, normsite.nbexec, on the pool, normsite.ahead; then each figure, value,
table, data, ledger and quiz expansion), and writes a manifest: per language,
``{page: {directive text: Markdown}}``, the cached figure files and each notebook
page's executed ``.ipynb``. It prints one line of counts, ``computed of asked`` per kind, so a
warm build's log shows that it recomputed nothing.

The MkDocs process only substitutes the manifest (:func:`obtain`,
:func:`normsite.directives.substitute`): it imports no torch, no matplotlib and
no normref experiment, and because this pass is a fresh process, ``mkdocs
serve`` sees every normref and normsite edit on its next rebuild by
construction. `make build` (:mod:`normsite.sitebuild`) runs it once, before
both MkDocs builds; a build, or a rebuild under `mkdocs serve`, reuses the
manifest a pass wrote for the same inputs (:func:`fingerprint`), so a warm
build and a prose edit (a page whose directives, anchors and title stay:
:func:`page_reads`) start no pass, and runs one when they changed. A
directive that cannot be expanded is kept in the manifest as its error, and the
page that holds it fails the build naming it.

Importing this module is cheap: the work is imported by :func:`prepare`.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import sysconfig
import time
from collections.abc import Mapping
from pathlib import Path

from normref import cache

from . import LANGS, SiteError

__all__ = ["ROOT", "fingerprint", "page_reads", "manifest_path", "prepare", "obtain", "no_generated", "PASS", "PASS_RAN", "main", "HEAVY", "heavy_modules", "why_lines", "log_lines"]

ROOT = Path(__file__).resolve().parent.parent
# What prepare reads besides the pages: the code and data it runs, the snippets (and of tests/, only which
# tests the files the ledger names define: fingerprint).
INPUTS = ("normref", "normsite", "snippets")
# How many "why re-run" lines a build prints (then a count of the rest).
WHY_SHOWN = 20
# Modules the MkDocs process must not import: the prepare pass runs them.
HEAVY = ("torch", "matplotlib", "normref.experiments", "normref.figures", "normref.values", "normref.data")


def heavy_modules() -> list[str]:
    """Which of :data:`HEAVY` this process has imported (the build's log prints them: none)."""
    return [m for m in HEAVY if m in sys.modules]


def fingerprint(dirs: Mapping[str, str | Path], generated: bool = True, root: Path = ROOT,
                roots: Mapping[str, str] | None = None) -> str:
    """SHA-256 of everything a manifest depends on: what the pass reads of each language's pages
    (:func:`page_reads`; the ledger and the practice page read the other language's too, beside them) and
    the other files of its docs folder (a notebook page's .py), the code and data under ``root``'s normref,
    normsite and snippets, which tests the ledger's test files define, the installed distributions, the
    cache folder and whether figures are drawn. Equal fingerprints: the manifest can be reused as is.

    No path of the checkout enters it (a copy of the tree has the same fingerprint): files are named
    relative to their folder, a docs folder relative to ``root`` (one outside it, a test's, as it is)."""
    from . import directives, ledger

    root = Path(root)
    h = hashlib.sha256()
    # The cache folder stays, absolute: the manifest names the files it holds (figures, executed notebooks,
    # the deck) by their absolute paths, so a cache folder copied or moved elsewhere must not hand out a
    # manifest that names the old folder's files. The installed distributions (name-version, from the
    # interpreter's site-packages) stand for the interpreter, without its path: a library upgraded in place
    # or another environment changes them.
    h.update(f"{sorted((k, _where(Path(v), root)) for k, v in dirs.items())}\0{generated}\0"
             f"{cache.cache_dir().resolve()}\0{cache.versions_hash()}\0{sys.version}\0{_distributions()}\0"
             f"{sorted((roots or {}).items())}\0".encode())
    folders = {Path(d).resolve(): lang for lang, d in dirs.items()}
    for d in list(folders):  # the other language's pages beside them, which the ledger and the deck read
        for lang in LANGS:
            if (d.parent / lang).is_dir():
                folders.setdefault((d.parent / lang).resolve(), lang)
    named = {f"{lang}:{_where(d, root)}": (d, lang) for d, lang in folders.items()}
    named.update({name: (root / name, None) for name in INPUTS})
    for label, (folder, lang) in sorted(named.items()):
        for f in sorted(folder.rglob("*")):
            if f.is_file() and "__pycache__" not in f.parts and f.suffix != ".pyc":
                data = page_reads(f.read_text(encoding="utf-8"), lang).encode() if lang and f.suffix == ".md" \
                    else f.read_bytes()
                h.update(f"{label}/{f.relative_to(folder).as_posix()}".encode() + b"\0" + data + b"\0")
    claims = root / ledger.DATA.resolve().relative_to(ROOT)
    h.update(directives._tests_defined(claims.read_bytes() if claims.is_file() else b"", root).encode())
    return h.hexdigest()


def _where(folder: Path, root: Path) -> str:
    """A docs folder as the fingerprint names it: relative to the checkout, else as it is."""
    try:
        return folder.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return folder.resolve().as_posix()


def _distributions() -> str:
    """The installed distributions, as the names of their metadata folders in the interpreter's own
    site-packages (name-version.dist-info): a listing (half a millisecond), not importlib.metadata (0.2 s),
    since a rebuild under `mkdocs serve` asks for it each time."""
    folders = dict.fromkeys(sysconfig.get_paths()[k] for k in ("purelib", "platlib"))
    return ";".join(sorted(n for d in folders if os.path.isdir(d) for n in os.listdir(d)
                           if n.endswith((".dist-info", ".egg-info"))))


def page_reads(markdown: str, lang: str) -> str:
    """What the pass reads of one page, as JSON: its directives (as the pass finds them, after the Chinese
    soft line breaks are joined, and as written), its anchors and their labels (the ledger's and the card
    bank's evidence links, normsite.ledger.anchors) and its H1 (the card bank's labels). A prose edit
    leaves this unchanged, and the manifest with it: under `mkdocs serve`, such a rebuild needs no pass."""
    from . import cjk, directives, ledger

    joined = cjk.join_soft_breaks(markdown) if lang == "zh" else markdown
    return json.dumps({"directives": [m.group(0) for text in (joined, markdown) for m in directives.PREPARED.finditer(text)],
                       "anchors": ledger.anchors(markdown), "title": directives.page_title(markdown)},
                      ensure_ascii=False, sort_keys=True)


def no_generated() -> bool:
    """NORMREF_NO_GENERATED set (not "" or "0"): a build draws no figures and executes nothing."""
    return os.environ.get("NORMREF_NO_GENERATED", "") not in ("", "0")


def manifest_path(fp: str) -> Path:
    return cache.folder("prepare") / f"{fp[:32]}.json"


# ---------------------------------------------------------------- the pass (in its own process)


def _page_uri(md: Path, docs: Path) -> str:
    return md.relative_to(docs).as_posix()


def prepare(dirs: Mapping[str, str | Path], generated: bool = True, root: Path = ROOT,
            roots: Mapping[str, str] | None = None) -> dict:
    """Compute every directive of the pages in ``dirs`` ({lang: docs folder}); the manifest (a dict).
    ``roots`` ({lang: the site's root URL}): where the practice page's Anki deck links each card's evidence."""
    from . import directives

    with directives.one_pass():  # each directive's cache step found once: when the pass plans its tasks, then read
        return _prepare(dirs, generated, root, roots)


def _prepare(dirs: Mapping[str, str | Path], generated: bool, root: Path, roots: Mapping[str, str] | None) -> dict:
    from . import ahead, directives

    t0 = time.perf_counter()
    dirs = {lang: Path(d) for lang, d in dirs.items()}
    _check_figure_texts()
    del cache.WHY[:]
    directives.COUNTS.clear()
    # Every notebook of every language, executed (normsite.nbexec) on the same pool as the figures
    nbs = {lang: sorted((docs / "notebooks").glob("*.py")) if generated else [] for lang, docs in dirs.items()}
    done = ahead.run(dirs, [str(f) for fs in nbs.values() for f in fs], draw=generated,
                     directive_jobs=_pooled_jobs(dirs, generated, root))
    out: dict = {"langs": {lang: _language(lang, docs, nbs[lang], done, generated, root) for lang, docs in dirs.items()},
                 "generated": generated}
    for kind, (computed, cached) in done.directives.items():  # what the pool expanded, then read back here
        c = directives.COUNTS.setdefault(kind, [0, 0])
        c[0] += computed
        c[1] += cached - done.directive_tasks.get(kind, 0)
    deck = _anki_deck(dirs, generated, roots)
    for lang, docs in dirs.items():
        if deck is not None and (docs / deck[2]).is_file():  # beside the language's practice page
            out["langs"][lang]["files"][deck[0]] = deck[1]
    return _summarized(out, done, dirs, t0)


def _language(lang: str, docs: Path, nbs: list[Path], done, generated: bool, root: Path) -> dict:
    """One language's part of the manifest: its pages' expansions, its figure files and executed notebooks,
    and what of them the pool computed."""
    from . import directives, nbexec

    files: dict[str, str] = {}
    executed = {f"notebooks/{f.name}": str(nbexec.path(f)) for f in nbs}  # page -> its executed .ipynb
    nb_run = sum(str(f) in done.notebooks_run for f in nbs)
    drawn = 0
    if generated:
        from normref import figures

        for name in directives.referenced(docs, "figure"):
            for theme in figures.THEMES:
                files[f"figures/{name}-{theme}.svg"] = str(done.figure_steps[(name, lang, theme)].path.resolve())
                drawn += (name, lang, theme) in done.figures_drawn
    snips = list(directives.referenced(docs, "snippet"))
    snip_run = sum(n in done.snippets_run for n in snips)
    return {"pages": _pages(lang, docs, generated, root), "files": files, "executed": executed,
            "stats": {"fig_miss": drawn, "fig_hit": len(files) - drawn, "snip_miss": snip_run,
                      "snip_hit": len(snips) - snip_run, "nb_miss": nb_run, "nb_hit": len(executed) - nb_run}}


def _pages(lang: str, docs: Path, generated: bool, root: Path) -> dict[str, dict]:
    """{page: {directive text: its Markdown, or {"error": …}}} of one language's pages, the pool's results read
    from the cache (a directive in two pages of one folder is expanded once)."""
    from . import cjk, directives

    pages: dict[str, dict] = {}
    memo: dict[tuple, str] = {}
    for md in sorted(docs.rglob("*.md")):
        src = _page_uri(md, docs)
        text = md.read_text(encoding="utf-8")
        if lang == "zh":
            text = cjk.join_soft_breaks(text)  # as the build does before it substitutes
        table: dict[str, object] = {}
        for m in directives.PREPARED.finditer(text):
            if m.group(0) in table:
                continue
            kind, name = m.group("kind"), m.group("name")
            folder = src.rsplit("/", 1)[0] if "/" in src else ""
            k = (kind, name, folder if kind == "figure" else "")
            if k not in memo:
                try:
                    memo[k] = directives.expand_one(kind, name, lang, src, generated=generated, root=root,
                                                    docs_dirs={c: docs.parent / c for c in LANGS})
                except SiteError as e:
                    table[m.group(0)] = {"error": str(e)}  # this page's build fails, naming it
                    continue
            table[m.group(0)] = memo[k]
        if table:
            pages[src] = table
    return pages


def _summarized(out: dict, done, dirs: Mapping[str, Path], t0: float) -> dict:
    """``out`` with its counts, its "why re-run" lines and its summary line (normsite.prepare's output)."""
    from . import directives

    counts = {"svg": [len(done.figures_drawn), done.figures_cached],
              "notebook": [len(done.notebooks_run), done.notebooks_cached],
              **{k: v for k, v in sorted(directives.COUNTS.items()) if k != "snippet"},
              "snippet": [len(done.snippets_run), done.snippets_cached], "experiment": list(done.experiments)}
    computed = sum(c for c, _ in counts.values())
    asked = sum(c + h for c, h in counts.values())
    errors = sum(isinstance(v, dict) for lang in out["langs"].values() for t in lang["pages"].values() for v in t.values())
    out["counts"] = counts
    out["why"] = done.why + cache.WHY  # what the pool computed, then what this process did
    out["undeclared"] = done.undeclared
    out["summary"] = (f"normref prepare [{', '.join(dirs)}]: computed {computed} of {asked} ("
                      + ", ".join(f"{k} {c} of {c + h}" for k, (c, h) in counts.items())
                      + f"); {errors} directive errors; {time.perf_counter() - t0:.1f} s"
                      + (f"; {done.workers} worker{'s' if done.workers > 1 else ''}, {done.cpu_s:.1f} s CPU, {done.wall_s:.1f} s wall" if done.workers else ""))
    return out


def _check_figure_texts() -> None:
    """normref's figure texts, validated whole by the site's schema (normsite.content.figure_texts): normref
    itself reads them with plain checks only. SiteError naming every problem."""
    from .content import figure_texts

    try:
        figure_texts.load()
    except (ValueError, FileNotFoundError) as e:
        raise SiteError(f"figures.yml: {e}") from e


def _pooled_jobs(dirs: Mapping[str, Path], generated: bool, root: Path) -> list[tuple]:
    """(kind, name, lang, page, keyword arguments) of each directive whose expansion computes normref results
    (normsite.directives.POOLED), once per language: the pool expands the missing ones beside the figures."""
    from . import cjk, directives

    jobs: dict[tuple, tuple] = {}
    for lang, docs in dirs.items():
        kw = {"generated": generated, "root": root, "docs_dirs": {c: docs.parent / c for c in LANGS}}
        for md in sorted(docs.rglob("*.md")):
            text = md.read_text(encoding="utf-8")
            text = cjk.join_soft_breaks(text) if lang == "zh" else text
            for m in directives.PREPARED.finditer(text):
                kind, src = m.group("kind"), _page_uri(md, docs)
                if kind in directives.POOLED:  # a figure's expansion also depends on its page's folder
                    folder = src.rpartition("/")[0] if kind == "figure" else ""
                    jobs.setdefault((kind, m.group("name"), lang, folder), (kind, m.group("name"), lang, src, kw))
    return list(jobs.values())


def why_lines(why: list[str], most: int = WHY_SHOWN) -> list[str]:
    """The "why re-run" lines to print: one per result computed again (a result seen for the first time
    only counts, so a cold build's log stays short), at most ``most`` of them, then how many more."""
    changed = [w for w in why if not w.endswith(": new")]
    new = len(why) - len(changed)
    out = [f"re-run {w}" for w in changed[:most]]
    if len(changed) > most:
        out.append(f"re-run: and {len(changed) - most} more")
    if new:
        out.append(f"re-run: {new} new (not computed before under their names)")
    return out


def log_lines(manifest: dict) -> list[str]:
    """What the pass says: its summary, why it re-ran what it did (:func:`why_lines`), and each experiment a
    result computed itself, which its module does not declare (normsite.ahead: computed once only if declared)."""
    return [manifest["summary"], *why_lines(manifest.get("why", [])),
            *(f"undeclared experiment: {u} (add it to its module's EXPERIMENTS)" for u in manifest.get("undeclared", []))]


def _anki_deck(dirs: Mapping[str, Path], generated: bool, roots: Mapping[str, str] | None) -> tuple[str, str, str] | None:
    """(its site path, its file, the practice page) of the practice page's bilingual Anki deck (normsite.practice), when a
    language has the page; its card texts' [[value: …]] filled in. None when no language has it."""
    from . import directives, practice, release

    if not any((d / practice.PAGE).is_file() for d in dirs.values()):
        return None
    roots = dict(roots) if roots else release.site_urls("zh", None)[1]["roots"]
    data = practice.anki_deck(lambda text, lang: directives.expand(text, lang, practice.PAGE, generated=generated), roots)
    path = cache.folder("prepare").resolve() / "files" / f"{hashlib.sha256(data).hexdigest()[:32]}.apkg"
    if not path.is_file():
        _write_bytes(path, data)
    return practice.APKG, str(path), practice.PAGE


def _write_bytes(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".tmp-{os.getpid()}-{path.name}")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def _write(path: Path, manifest: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".tmp-{os.getpid()}-{path.name}")
    tmp.write_text(json.dumps(manifest, ensure_ascii=False, sort_keys=True), encoding="utf-8")
    os.replace(tmp, path)


# ---------------------------------------------------------------- the build's side (the MkDocs process)


# Set by normsite.sitebuild for the Chinese build when it has just run the pass for both builds: that manifest's
# file name. The build then reports the pass's work as its own (its log counts what was drawn and run), and a
# build that finds other inputs than the pass had fails instead of running a second pass beside the other build.
PASS_RAN = "NORMREF_PASS_RAN"
PASS = "NORMREF_PASS"


def _reusable(path: Path) -> dict | None:
    """The manifest at ``path`` when every file it names is still in the cache, else None."""
    if not path.is_file():
        return None
    manifest = json.loads(path.read_text(encoding="utf-8"))
    if all(Path(f).is_file() for lang in manifest["langs"].values()
           for f in [*lang["files"].values(), *lang["executed"].values()]):
        return manifest
    return None


def obtain(dirs: Mapping[str, str | Path], generated: bool = True, *, roots: Mapping[str, str] | None = None) -> dict:
    """The manifest for ``dirs``: the one a pass wrote for the same inputs (:func:`fingerprint`: the code, the
    pages' directives, anchors and titles) while every file it names is still in the cache, else a fresh
    ``python -m normsite.prepare`` process's. So a warm build and a prose edit under `mkdocs serve` start no
    pass, and any edit the pass reads runs one. Its "log" is the line to print. A failed pass raises SiteError
    with the end of its output."""
    path = manifest_path(fingerprint(dirs, generated, roots=roots))
    manifest = _reusable(path)
    expected = os.environ.get(PASS)
    if expected and expected != path.name:  # normsite.sitebuild ran the pass for other inputs than this build's
        raise SiteError(f"normsite.sitebuild prepared {expected}, but this build's inputs make {path.name} "
                        "(a file the pass reads was edited since it ran, or a docs folder, the site's address or "
                        "NORMREF_NO_GENERATED differs between them)")
    if manifest is not None:
        if os.environ.get(PASS_RAN) == path.name:  # normsite.sitebuild ran it for this build, just now
            return dict(manifest, ran=True, name=path.name,
                        log="\n".join(log_lines(manifest)))
        return dict(manifest, ran=False, name=path.name,
                    log=f"normref prepare: inputs unchanged (the code, the pages' directives, anchors and titles), "
                        f"reused {path.name}")
    cmd = [sys.executable, "-m", "normsite.prepare", "--out", str(path)]
    cmd += [a for lang, d in dirs.items() for a in ("--docs", f"{lang}={Path(d).resolve()}")]
    cmd += [] if generated else ["--no-generated"]
    cmd += ["--roots", json.dumps(dict(roots), sort_keys=True)] if roots else []
    env = dict(os.environ, NORMREF_CACHE=str(cache.cache_dir().resolve()),
               PYTHONPATH=os.pathsep.join([str(ROOT)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SiteError(f"python -m normsite.prepare failed (exit status {proc.returncode}):\n"
                        f"{(proc.stderr or proc.stdout).strip()[-3000:]}")
    manifest = json.loads(path.read_text(encoding="utf-8"))
    return dict(manifest, ran=True, name=path.name, log="\n".join(log_lines(manifest)))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m normsite.prepare", description=__doc__.split("\n\n")[0])
    ap.add_argument("--docs", action="append", metavar="LANG=DIR",
                    help="a language's docs folder (repeatable; default: docs/zh and docs/en)")
    ap.add_argument("--no-generated", action="store_true", help="draw no figures (a figure becomes its caption)")
    ap.add_argument("--roots", help='the site\'s root URL per language, as JSON ({"zh": URL, "en": URL}; default: the default site_url\'s)')
    ap.add_argument("--out", help="where to write the manifest (default: the cache's prepare/<fingerprint>.json)")
    ap.add_argument("--plan", nargs="+", metavar="PATH", help="compute nothing: print, one a line, every result "
                    "whose key an edit to PATH changes (the edit in the working tree, else a comment added)")
    args = ap.parse_args(argv)
    if args.plan:
        from . import plan

        return plan.main(args.plan)
    dirs: dict[str, Path] = {}
    for item in args.docs or [f"{lang}={ROOT / 'docs' / lang}" for lang in LANGS]:
        lang, sep, d = item.partition("=")
        if not sep or lang not in LANGS or not Path(d).is_dir():
            ap.error(f"--docs must be LANG=DIR with LANG one of {LANGS} and DIR a folder, got {item!r}")
        dirs[lang] = Path(d)
    generated = not args.no_generated
    try:
        roots = json.loads(args.roots) if args.roots else None
    except json.JSONDecodeError as e:
        ap.error(f"--roots must be a JSON object of URLs per language: {e}")
    if roots is not None and (not isinstance(roots, dict) or set(roots) != set(LANGS)):
        ap.error(f"--roots must name each of {LANGS}, got {args.roots!r}")
    out = Path(args.out) if args.out else manifest_path(fingerprint(dirs, generated, roots=roots))
    try:
        manifest = prepare(dirs, generated, roots=roots)
    except SiteError as e:
        print(f"prepare: {e}", file=sys.stderr)
        return 1
    _write(out, manifest)
    for line in log_lines(manifest):
        print(line)
    print(f"manifest: {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
