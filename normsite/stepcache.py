"""Page steps that are pure functions of their input, cached by content hash.

Linking glossary terms scans every text node of a page against one large
regular expression, and typesetting math runs KaTeX on every formula: about a
second of a warm build, spent again on pages that did not change. :func:`cached`
keeps such a step's result in normref's cache (kind "pages"), keyed by the
step's name, its inputs, the site layer's code, the normref modules it reads
(``modules``: their import closure) and the versions of the libraries it calls;
an unchanged page costs a hash and a file read. Only pure steps belong here:
one that changes state elsewhere (a page's table of contents) must run.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import json
from collections.abc import Callable
from pathlib import Path

from normref import cache

__all__ = ["cached", "digest", "site_code", "STATS", "counts"]

# What this process's steps did, by step: {step: [computed, from cache]}. The build's report line
# prints it, so a warm build's log says that it recomputed nothing (the print edition included).
STATS: dict[str, list[int]] = {}


def counts() -> str:
    """"math 0 of 24, terms 0 of 20, print 0 of 1": steps computed of those asked, by step."""
    return ", ".join(f"{step} {done} of {done + hit}" for step, (done, hit) in sorted(STATS.items()))


@functools.lru_cache(maxsize=None)
def site_code() -> str:
    """SHA-256 of the site layer's code (every module of normsite)."""
    h = hashlib.sha256()
    for f in sorted(Path(__file__).resolve().parent.glob("*.py")):
        h.update(f.name.encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()


@functools.lru_cache(maxsize=None)
def _versions(libs: tuple[str, ...]) -> str:
    out = []
    for lib in libs:
        try:
            out.append(f"{lib}={importlib.metadata.version(lib)}")
        except importlib.metadata.PackageNotFoundError:
            out.append(f"{lib}=none")
    return ";".join(out)


def digest(*parts) -> str:
    """SHA-256 of strings and bytes, each length-prefixed (no two inputs collide by concatenation)."""
    h = hashlib.sha256()
    for p in parts:
        b = p if isinstance(p, bytes) else str(p).encode("utf-8")
        h.update(len(b).to_bytes(8, "big") + b)
    return h.hexdigest()


def cached(step: str, inputs: tuple, compute: Callable[[], object], *, modules: tuple[str, ...] = (),
           libs: tuple[str, ...] = ()):
    """``compute()`` (a JSON-able result), or its cached result for the same step and inputs."""
    key = digest(step, site_code(), cache.code_hash(modules) if modules else "", _versions(tuple(libs)), *inputs)
    value, hit = cache.get_or_compute("pages", key, ".json", compute, lambda v: json.dumps(v).encode("utf-8"),
                                      lambda b: json.loads(b))
    STATS.setdefault(step, [0, 0])[1 if hit else 0] += 1
    return value
