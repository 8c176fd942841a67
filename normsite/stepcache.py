"""Page steps that are pure functions of their input, cached by content hash.

Linking glossary terms scans every text node of a page against one large
regular expression, and typesetting math runs KaTeX on every formula: about a
second of a warm build, spent again on pages that did not change. :func:`cached`
keeps such a step's result in normref's cache (kind "pages") through the one
recipe, :func:`normref.cache.step_of`: keyed by the step's name and the page it
is for, its inputs, the site layer's code (each normsite file), the normref
modules it reads (``modules``: their import closure) and the versions of the
libraries it calls. An unchanged page costs a hash and a file read; a changed
one logs why (normref.cache.WHY). Only pure steps belong here: one that changes
state elsewhere (a page's table of contents) must run.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Mapping
from pathlib import Path

from normref import cache

__all__ = ["cached", "digest", "site_files", "STATS", "counts"]

# What this process's steps did, by step: {step: [computed, from cache]}. The build's report line
# prints it, so a warm build's log says that it recomputed nothing (the print edition included).
STATS: dict[str, list[int]] = {}

digest = cache.digest  # one recipe: length-prefixed SHA-256 of strings and bytes


def counts() -> str:
    """"math 0 of 24, terms 0 of 20, print 0 of 1": steps computed of those asked, by step."""
    return ", ".join(f"{step} {done} of {done + hit}" for step, (done, hit) in sorted(STATS.items()))


@functools.lru_cache(maxsize=None)
def site_files() -> dict[str, str]:
    """{"normsite/NAME.py": its SHA-256} for every module of the site layer (its content package included): part of every page step's key,
    file by file, so that the re-run log names the file that changed."""
    root = Path(__file__).resolve().parent
    return {f"normsite/{f.relative_to(root).as_posix()}": digest(f.read_bytes())
            for f in sorted(root.rglob("*.py")) if "__pycache__" not in f.parts}


def cached(step: str, name: str, inputs: Mapping[str, object] | tuple, compute: Callable[[], object], *,
           modules: tuple[str, ...] = (), libs: tuple[str, ...] = ()):
    """``compute()`` (a JSON-able result), or its cached result for the same step and inputs. ``name``: what the
    step is for (a page), the same from one build to the next; ``inputs``: named strings or bytes (a tuple is
    numbered)."""
    named = dict(inputs) if isinstance(inputs, Mapping) else {f"input {i}": v for i, v in enumerate(inputs)}
    s = cache.step_of("pages", f"{step}:{name}", inputs={**named, **site_files()}, code=modules, libs=tuple(libs),
                      suffix=".json")
    value, hit = cache.step(s, compute, lambda v: json.dumps(v).encode("utf-8"), json.loads)
    STATS.setdefault(step, [0, 0])[1 if hit else 0] += 1
    return value
