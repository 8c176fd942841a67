"""What an edit re-runs, found without computing anything: ``python -m normsite.prepare --plan PATH…``.

Each result of a build is a cache step (normref.cache.step_of). :func:`keys` makes the key of every one a
prepare pass asks for (each figure variant, snippet, notebook and directive expansion of both languages'
pages, the wheel) and, for the page steps the MkDocs builds run on each page's HTML, the part of their key
that is not the page (their code, by step). :func:`plan` makes them for the tree as it is and for a copy of
it with the edits applied, each in a fresh process run in its own tree (keys hold no absolute path, so the
copy's keys equal the original's where nothing changed), and lists the results whose key differs: exactly
what the build would compute again, by the key recipe itself rather than by a second account of it.
The Anki deck is listed when a practice expansion is (its inputs are a subset of theirs).

:data:`EDITS` are a few representative edits and :func:`table` renders what each re-runs: CONTRIBUTING.md's
table (``python tools/plan_table.py`` writes it; tests/test_plan.py checks it and what each edit re-runs).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

from . import LANGS

__all__ = ["PAGE_STEPS", "keys", "plan", "COPIED", "Edit", "EDITS", "plans", "summary", "table"]

ROOT = Path(__file__).resolve().parent.parent
# The page steps of a MkDocs build (normsite.build, searchcache, csstrim): the modules each names as its code
# (tests/test_plan.py reads them from the code that makes each step and checks this agrees).
PAGE_STEPS = {"math": ("normsite.mathtex",), "terms": ("normsite.glossary",), "scrub": ("normsite.notebooks",),
              "print-chapter": ("normsite.printed",), "print": ("normsite.printed",),
              "search": ("normsite.searchcache", "normsite.glossary"), "nbcode": ("normsite.notebooks",),
              "ipynb": ("normsite.notebooks",),
              "csstrim": ("normsite.csstrim",), "render": ("normsite.render",)}
# What a copy of the tree holds: everything a key reads.
COPIED = ("normref", "normsite", "snippets", "tests", "docs", "pyproject.toml", "README.md", "LICENSE")


def keys(root: Path = ROOT) -> dict[str, str]:
    """{result: its key} for the tree at ``root`` (this process must run there: its normref and normsite)."""
    from normref import cache, figures

    from . import directives, nbexec, snippets, wheel

    out: dict[str, str] = {}
    dirs = {lang: root / "docs" / lang for lang in LANGS}
    for lang, docs in dirs.items():
        for name in directives.referenced(docs, "figure"):
            for theme in figures.THEMES:
                s = figures.step_of(name, lang, theme)
                out[f"{s.kind}/{s.name}"] = s.key
        for name in directives.referenced(docs, "snippet"):
            s = snippets.step_of(name)
            out[f"{s.kind}/{s.name}"] = s.key
        for nb in sorted((docs / "notebooks").glob("*.py")):
            s = nbexec.step_of(nb)
            out[f"{s.kind}/{s.name}"] = s.key
        kw = {"generated": True, "root": root, "docs_dirs": dict(dirs)}
        with directives.one_pass():
            for md in sorted(docs.rglob("*.md")):
                src = md.relative_to(docs).as_posix()
                for m in directives.PREPARED.finditer(md.read_text(encoding="utf-8")):
                    s = directives.step_of_directive(m.group("kind"), m.group("name"), lang, src, **kw)
                    if s is not None:
                        out[f"{s.kind}/{s.name}"] = s.key
    files = wheel.source_files(root)
    out["wheels/normref"] = cache.digest(*(p for f in files for p in (f.as_posix(), (root / f).read_bytes())))
    for step, modules in PAGE_STEPS.items():
        out[f"pages/{step}:* (every page)"] = cache.code_hash(modules)
    return out


def _keys_in(tree: Path, scans: str | Path | None = None) -> dict[str, str]:
    """The keys of ``tree``, made in a fresh process that imports its code, with ``scans`` as its cache (else an
    empty one): a folder that calls on copies of one tree may share, so each version of a file is parsed once for
    all of them. What lands there is keyed by content (source scans, normref.cache.source_facts; the notebooks'
    parsed code); no experiment, figure or page is computed."""
    with tempfile.TemporaryDirectory(prefix="normref-plan-cache-") as own:
        env = dict(os.environ, PYTHONPATH=str(tree), NORMREF_CACHE=str(scans or own), PYTHONDONTWRITEBYTECODE="1")
        proc = subprocess.run([sys.executable, "-c", "import json, sys; from normsite import plan; "
                           "json.dump(plan.keys(), sys.stdout)"], cwd=tree, env=env, capture_output=True,
                              text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"computing the keys in {tree} failed:\n{proc.stderr.strip()[-2000:]}")
    return json.loads(proc.stdout)


def _copy(root: Path, into: Path) -> Path:
    for name in COPIED:
        src = root / name
        if src.is_dir():
            shutil.copytree(src, into / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        elif src.is_file():
            shutil.copy2(src, into / name)
    return into


def _apply(tree: Path, edits: dict) -> Path:
    for rel, text in edits.items():
        f = tree / rel
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
    return tree


def plan(edits: dict[str, str | bytes], root: Path = ROOT, before: dict[str, str] | None = None,
         base: dict[str, str | bytes] | None = None, scans: str | Path | None = None) -> list[str]:
    """The results whose key the ``edits`` ({path relative to ``root``: its new content}) change, sorted.
    ``before``: the keys of the tree as it is (:func:`keys` of ``root``), when already made; ``base``: files of
    the tree before the edits, where they differ from ``root`` (the last commit's, for an edit at hand); ``scans``:
    see :func:`_keys_in`."""
    for rel in [*edits, *(base or {})]:
        if Path(rel).is_absolute() or ".." in Path(rel).parts or Path(rel).parts[0] not in COPIED:
            raise ValueError(f"edits must name files under {', '.join(COPIED)}, relative to the checkout, got {rel!r}")
    with tempfile.TemporaryDirectory(prefix="normref-plan-") as tmp:
        if before is None:
            before = _keys_in(_apply(_copy(root, Path(tmp) / "before"), base or {}), scans)
        after = _keys_in(_apply(_copy(root, Path(tmp) / "after"), {**(base or {}), **edits}), scans)
    changed = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
    if any(k.startswith("directives/practice:") for k in changed):
        changed.append("pages/anki:practice deck")
    return changed


def an_edit(root: Path, rel: str) -> tuple[bytes | None, bytes]:
    """(the file before, after) for ``--plan PATH``: the last commit's and the working tree's, when they differ
    (the edit at hand); else None (as it is) and the file with a comment line added (a .py or .yml file), a
    line of prose (.md) or one space (any other)."""
    path = root / rel
    text = path.read_bytes() if path.is_file() else b""
    committed = subprocess.run(["git", "show", f"HEAD:{rel}"], cwd=root, capture_output=True)
    if committed.returncode == 0 and committed.stdout != text:
        return committed.stdout, text
    suffix = path.suffix
    return None, text + (b"\n# an edit\n" if suffix in (".py", ".yml", ".yaml") else b"\nAn edit.\n" if suffix == ".md" else b" ")


def main(paths: list[str], root: Path = ROOT) -> int:
    """``python -m normsite.prepare --plan PATH…``: one line per result an edit to the PATHs re-runs."""
    rels = []
    for p in paths:
        full = Path(p).resolve()
        try:
            rels.append(full.relative_to(root).as_posix())
        except ValueError:
            print(f"prepare --plan: {p} is not inside the checkout {root}", file=sys.stderr)
            return 2
    base, edits = {}, {}
    for rel in rels:
        before, after = an_edit(root, rel)
        if before is not None:
            base[rel] = before
        edits[rel] = after
    try:
        for line in plan(edits, root, base=base):
            print(line)
    except ValueError as e:
        print(f"prepare --plan: {e}", file=sys.stderr)
        return 2
    return 0


# ---------------------------------------------------------------- what a few edits re-run: CONTRIBUTING.md's table


class Edit(NamedTuple):
    """One representative edit: ``words`` (the table's Markdown), the file (``path``, relative to the checkout)
    and ``change``, which makes its new text from the text it has (ValueError when it no longer fits)."""

    id: str
    words: str
    path: str
    change: Callable[[str], str]


def _comment(text: str) -> str:
    return text + "\n# a comment\n"


def _replace(old: str, new: str) -> Callable[[str], str]:
    def change(text: str) -> str:
        if old not in text:
            raise ValueError(f"the edit expects {old!r} in the file, which no longer holds it: update normsite.plan.EDITS")
        return text.replace(old, new, 1)

    return change


def _card_word(text: str) -> str:
    m = re.search(r"^\s+en: '?(\w+)", text, re.M)
    if m is None:
        raise ValueError("the edit expects an English text ('en: ...') in cards.yml: update normsite.plan.EDITS")
    return text[:m.start(1)] + "Edited" + text[m.start(1):]


EDITS = (
    Edit("card", "a word of a card's English text (`normsite/content/cards.yml`)", "normsite/content/cards.yml",
         _card_word),
    Edit("label", "one Chinese label of `values.sink` (`normref/labels.yml`)", "normref/labels.yml",
         _replace("values.sink:\n  block: 块\n  position 0: 位置 0", "values.sink:\n  block: 块\n  position 0: 位置零")),
    Edit("figures.yml", "a comment in `normref/figures/figures.yml`", "normref/figures/figures.yml", _comment),
    Edit("value module", "a comment in a value module (`normref/values/basics.py`)", "normref/values/basics.py",
         _comment),
    Edit("mathtex", "a comment in `normsite/mathtex.py`", "normsite/mathtex.py", _comment),
    Edit("colab", "a comment in `normsite/colab.py`", "normsite/colab.py", _comment),
    Edit("test", "a comment in a test file (`tests/test_ledger.py`)", "tests/test_ledger.py", _comment),
)


def plans(root: Path = ROOT, before: dict[str, str] | None = None, edits=EDITS,
          scans: str | Path | None = None) -> dict[str, list[str]]:
    """{edit id: :func:`plan` of it} for each of ``edits`` (:data:`EDITS`), the tree's keys made once. ``scans``:
    see :func:`_keys_in` (else a folder of its own, shared by the edits)."""
    with tempfile.TemporaryDirectory(prefix="normref-plan-scans-") as own:
        scans = scans or own
        before = _keys_in(root, scans) if before is None else before
        return {e.id: plan({e.path: e.change((root / e.path).read_text(encoding="utf-8"))}, root, before=before,
                           scans=scans) for e in edits}


def _names(names) -> str:
    """Names grouped by what precedes their first dot: `sink.*` 19, `worked.x`."""
    groups: dict[str, list[str]] = {}
    for n in sorted(names):
        groups.setdefault(n.split(".", 1)[0] if "." in n else n, []).append(n)
    return ", ".join(f"`{g}.*` {len(ns)}" if len(ns) > 1 else f"`{ns[0]}`" for g, ns in groups.items())


def _both(values, order) -> str:
    """"zh and en", "zh": ``values`` in ``order``."""
    v = [x for x in order if x in values]
    return " and ".join(v) if len(v) < 3 else ", ".join(v[:-1]) + " and " + v[-1]


def _grouped(named: dict[str, set], what: Callable[[frozenset], str]) -> list[str]:
    """Names that share their set of variants, one part each: "`a` in zh and en", "3 (`x.*` 3) in zh"."""
    by: dict[frozenset, list[str]] = {}
    for name, variants in named.items():
        by.setdefault(frozenset(variants), []).append(name)
    out = []
    for variants, names in sorted(by.items(), key=lambda kv: sorted(kv[1])):
        out.append((f"`{names[0]}`" if len(names) == 1 else f"{len(names)} names ({_names(names)})") + what(variants))
    return out


def summary(results: list[str]) -> str:
    """What a plan (:func:`plan`) re-runs: how many results, then by kind, one cell of the table (Markdown)."""
    if not results:
        return "nothing"
    from normref import figures as normref_figures

    figures: dict[str, set] = {}
    directives: dict[str, dict[str, set]] = {}
    other: dict[str, list[str]] = {}
    for r in results:
        kind, _, name = r.partition("/")
        if kind == "figures" and (m := re.fullmatch(r"(.+)\[(\w+),(\w+)\]", name)):
            figures.setdefault(m.group(1), set()).add((m.group(2), m.group(3)))
        elif kind == "directives" and (m := re.fullmatch(r"(\w+):(.+)\[(\w+)\]", name)):
            directives.setdefault(m.group(1), {}).setdefault(m.group(2), set()).add(m.group(3))
        else:
            other.setdefault(kind, []).append(name)
    parts = []
    themes = normref_figures.THEMES
    for part in _grouped(figures, lambda v: f" in {_both({lang for lang, _ in v}, LANGS)}, "
                         f"{_both({t for _, t in v}, themes)}" if len(v) == len({lang for lang, _ in v}) * len({t for _, t in v})
                         else " (" + ", ".join(f"{lang} {t}" for lang in LANGS for t in themes if (lang, t) in v) + ")"):
        parts.append(f"figures {part}")
    for kind, named in sorted(directives.items()):
        if list(named) == [kind]:  # [[ledger]], [[practice]], [[quiz]]: one result per language
            parts.append(f"`[[{kind}]]` in {_both(named[kind], LANGS)}")
        else:
            parts += [f"`[[{kind}]]` {p}" for p in _grouped(named, lambda v: f" in {_both(v, LANGS)}")]
    for kind, names in sorted(other.items()):
        if kind == "pages":
            steps = sorted(n.split(":", 1)[0] for n in names if n.endswith(":* (every page)"))
            if steps:
                parts.append("the page steps " + ", ".join(f"`{s}`" for s in steps) + " of every page")
            parts += ["the Anki deck" if n == "anki:practice deck" else f"`pages/{n}`" for n in sorted(names)
                      if not n.endswith(":* (every page)")]
        elif kind == "wheels":
            parts.append("the wheel")
        else:
            parts.append(f"{kind} {len(names)}: " + ", ".join(f"`{n}`" for n in sorted(names)))
    return f"{len(results)} result{'s' if len(results) > 1 else ''}: " + "; ".join(parts)


def table(computed: dict[str, list[str]], edits=EDITS) -> str:
    """CONTRIBUTING.md's table: one row per edit of ``edits``, what its plan (``computed``: :func:`plans`) re-runs."""
    rows = ["| edit | what it re-runs |", "|---|---|"]
    return "\n".join(rows + [f"| {e.words} | {summary(computed[e.id])} |" for e in edits])
