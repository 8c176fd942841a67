"""Page steps that are pure functions of their input, cached by content hash.

Linking glossary terms scans every text node of a page against one large
regular expression, and typesetting math runs KaTeX on every formula: about a
second of a warm build, spent again on pages that did not change. :func:`cached`
keeps such a step's result in normref's cache (kind "pages") through the one
recipe, :func:`normref.cache.step_of`: keyed by the step's name and the page it
is for, its inputs, the modules that compute it (``modules``: their import
closure, through normsite and normref, and the data files those declare) and the
versions of the libraries it calls; an edit to another normsite module leaves it
be. An unchanged page costs a hash and a file read; a changed
one logs why (normref.cache.WHY). Only pure steps belong here: one that changes
state elsewhere (a page's table of contents) must run.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping

from normref import cache

__all__ = ["cached", "step_of", "digest", "STATS", "counts"]

# What this process's steps did, by step: {step: [computed, from cache]}. The build's report line
# prints it, so a warm build's log says that it recomputed nothing (the print edition included).
STATS: dict[str, list[int]] = {}

digest = cache.digest  # one recipe: length-prefixed SHA-256 of strings and bytes


def counts() -> str:
    """"math 0 of 24, terms 0 of 20, print 0 of 1": steps computed of those asked, by step."""
    return ", ".join(f"{step} {done} of {done + hit}" for step, (done, hit) in sorted(STATS.items()))


def step_of(step: str, name: str, inputs: Mapping[str, object] | tuple, *, modules: tuple[str, ...],
            libs: tuple[str, ...] = ()) -> cache.Step:
    """The cache step of a page step (:func:`cached`'s arguments), found without computing it."""
    if not modules or isinstance(modules, str):
        raise ValueError(f"modules must name the modules that compute step {step!r} (a tuple), got {modules!r}")
    named = dict(inputs) if isinstance(inputs, Mapping) else {f"input {i}": v for i, v in enumerate(inputs)}
    return cache.step_of("pages", f"{step}:{name}", inputs=named, code=tuple(modules), libs=tuple(libs), suffix=".json")


def cached(step: str, name: str, inputs: Mapping[str, object] | tuple, compute: Callable[[], object], *,
           modules: tuple[str, ...], libs: tuple[str, ...] = ()):
    """``compute()`` (a JSON-able result), or its cached result for the same step and inputs. ``name``: what the
    step is for (a page, as a path relative to its docs folder: never an absolute one), the same from one build
    to the next; ``inputs``: named strings or bytes (a tuple is numbered); ``modules``: the modules whose code
    computes it (their import closure counts)."""
    s = step_of(step, name, inputs, modules=modules, libs=libs)
    value, hit = cache.step(s, compute, lambda v: json.dumps(v).encode("utf-8"), json.loads)
    STATS.setdefault(step, [0, 0])[1 if hit else 0] += 1
    return value
