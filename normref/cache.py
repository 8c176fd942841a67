"""A small content-addressed disk cache for figures, experiment data and snippet output.

A result is keyed by a SHA-256 of everything it depends on: the source text of
the normref modules it names, its parameters, and the versions of the
libraries that compute or draw it (sphinx-gallery keys its examples the same
way). Change any of these and the key changes; change nothing and a warm build
does no work. Entries are never invalidated in place, only superseded.

The cache lives in ``$NORMREF_CACHE`` or ``.cache/normref`` under the current
directory.
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import importlib.metadata
import inspect
import os
import pickle
import tempfile
from pathlib import Path

__all__ = ["cache_dir", "source_hash", "package_hash", "versions_hash", "make_key", "get", "put", "memo", "STATS"]

# Counts of what the cache did in this process, printed by the build and the CLI.
STATS = {"hit": 0, "miss": 0}

_LIBS = ("numpy", "matplotlib", "torch", "mplfonts")


def cache_dir() -> Path:
    return Path(os.environ.get("NORMREF_CACHE", ".cache/normref"))


@functools.lru_cache(maxsize=None)
def _module_source(module: str) -> bytes:
    """The module's source, followed by the data files it declares.

    A module whose results depend on a data file (say, a committed benchmark
    JSON that a figure draws) lists it in ``__cache_files__`` (paths relative
    to the module's folder); its bytes then count as the module's source, so
    editing the data changes every key that names the module.
    """
    mod = importlib.import_module(module)
    path = getattr(mod, "__file__", None)
    if path is None:
        raise ValueError(f"module {module!r} has no source file to hash")
    out = Path(path).read_bytes()
    for rel in getattr(mod, "__cache_files__", ()):
        f = Path(path).parent / rel
        out += b"\0" + rel.encode() + b"\0" + f.read_bytes()
    return out


def source_hash(modules) -> str:
    """SHA-256 over the source files of the named modules (order-insensitive)."""
    h = hashlib.sha256()
    for m in sorted(set(modules)):
        h.update(m.encode() + b"\0" + _module_source(m) + b"\0")
    return h.hexdigest()


def package_hash() -> str:
    """SHA-256 over every .py file of the normref package (for snippets and notebooks,
    which may import any of it)."""
    root = Path(__file__).parent
    h = hashlib.sha256()
    for f in sorted(root.rglob("*.py")):
        h.update(str(f.relative_to(root)).encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()


@functools.lru_cache(maxsize=None)
def versions_hash(libs: tuple = _LIBS) -> str:
    """"lib=version;…" for the given libraries ("none" when one is not installed)."""
    parts = []
    for lib in libs:
        try:
            parts.append(f"{lib}={importlib.metadata.version(lib)}")
        except importlib.metadata.PackageNotFoundError:
            parts.append(f"{lib}=none")
    return ";".join(parts)


def make_key(kind: str, name: str, params, modules) -> str:
    h = hashlib.sha256()
    for part in (kind, name, repr(params), source_hash(modules), versions_hash()):
        h.update(str(part).encode() + b"\0")
    return h.hexdigest()


def _path(kind: str, key: str, suffix: str) -> Path:
    return cache_dir() / kind / f"{key}{suffix}"


def get(kind: str, key: str, suffix: str = ".bin") -> bytes | None:
    p = _path(kind, key, suffix)
    if p.exists():
        STATS["hit"] += 1
        return p.read_bytes()
    STATS["miss"] += 1
    return None


def put(kind: str, key: str, data: bytes, suffix: str = ".bin") -> None:
    p = _path(kind, key, suffix)
    p.parent.mkdir(parents=True, exist_ok=True)
    # Write then rename, so a build killed half-way never leaves a torn entry.
    fd, tmp = tempfile.mkstemp(dir=p.parent, prefix=".tmp-")
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    os.replace(tmp, p)


def memo(*deps: str):
    """Cache a pure function's (picklable) result on disk.

    The key covers the function's own module, the modules named in ``deps``,
    its arguments and the library versions. Use it for experiments that the
    zh and en builds (two processes) and several figures share.
    """

    def deco(fn):
        sig = inspect.signature(fn)

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            bound = sig.bind(*args, **kwargs)
            bound.apply_defaults()
            params = tuple(sorted(bound.arguments.items()))
            key = make_key("data", f"{fn.__module__}.{fn.__qualname__}", params, (fn.__module__, *deps))
            blob = get("data", key, ".pkl")
            if blob is not None:
                return pickle.loads(blob)
            result = fn(*args, **kwargs)
            put("data", key, pickle.dumps(result, protocol=4), ".pkl")
            return result

        wrapper.uncached = fn
        return wrapper

    return deco
