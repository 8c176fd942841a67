"""Experiment results committed with the package: ``python -m normref committed [--refresh [NAME ...]]``.

A few experiments are too slow to repeat in every cold build of the site, a build with an empty cache (each
trains small models, or runs a real model over several texts, for several CPU-seconds: the manifest records
how many). They are computed on purpose, like
the placement lab's run, and committed in ``normref/results/committed/``: each result's pickle, as normref's
cache stores it, and ``manifest.json``, which names for each declared call (``"normref.module:function()"``)
its cache step, its key, its file and that file's SHA-256, the CPU seconds it took and the machine, the
library versions and the date of the run.

normref's cache reads a committed result wherever the same call has the same key (:func:`normref.cache.get`):
the same code, arguments and library versions. Editing the experiment, or any normref module it imports,
changes the key; the build then computes the result itself, as it would without this folder, and
``tests/test_committed.py`` fails until the entry is refreshed. Refreshing computes each result again, on this
machine and in an empty cache (so nothing is taken from an earlier run), each in a fresh process (its CPU
seconds count loading the model it reads, not converting the weights, which is done first), on a process
per core::

    python -m normref committed                      # each committed result: current or stale, and where it was computed
    python -m normref committed --refresh            # compute all of them again, on this machine, and commit them
    python -m normref committed --refresh NAME ...   # these: a committed result's function name (layer_drop), or
                                                     # a call, "normref.experiments.sink:sink()" (a new one is added)

It writes into this package's folder (in a clone: the repository's). After refreshing a result whose key did
not change (on another machine, say), clear the cache (``python -m normref cache --clear``): a figure drawn
from the old result keeps its key.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import os
import pickle
import tempfile
import time
from pathlib import Path

from .. import cache, experiments

__all__ = ["FOLDER", "MANIFEST", "SCHEMA", "manifest", "specs", "entry", "resolve", "step_for", "status", "refresh",
           "add_arguments", "run"]

# A literal: normref.cache reads it from the source. A figure or a value that names where a committed result was
# computed imports this module, so a refresh (a new machine, a new date) redraws it. No experiment imports it:
# the manifest holds the experiments' keys.
__cache_files__ = ("committed/manifest.json",)

FOLDER = cache.COMMITTED
MANIFEST = cache.COMMITTED_MANIFEST
SCHEMA = "normref.committed/1"
REFRESH = "python -m normref committed --refresh"


def manifest() -> dict:
    """The manifest (``{"schema", "refresh", "entries": {spec: entry}}``); an empty one when there is none."""
    if not MANIFEST.is_file():
        return {"schema": SCHEMA, "refresh": REFRESH, "entries": {}}
    data = json.loads(MANIFEST.read_text(encoding="utf-8"))
    if not isinstance(data, dict) or data.get("schema") != SCHEMA or not isinstance(data.get("entries"), dict):
        raise ValueError(f"{MANIFEST} is not a committed-results manifest (schema {SCHEMA}): restore it from git")
    return data


def specs() -> tuple[str, ...]:
    """The calls whose results are committed, in the manifest's order."""
    return tuple(manifest()["entries"])


def entry(spec: str) -> dict:
    """The manifest's entry for ``spec``; KeyError naming the committed calls when it has none."""
    entries = manifest()["entries"]
    if spec not in entries:
        raise KeyError(f"{spec!r} is not a committed result; committed: {', '.join(entries) or 'none'}")
    return entries[spec]


def resolve(name: str) -> str:
    """The call a command-line NAME stands for: a call itself ("module:function(args)"), or the function name of
    one committed result (``layer_drop``); ValueError naming the committed ones otherwise."""
    if ":" in name:
        return name
    found = [s for s in specs() if experiments.parse(s)[1] == name]
    if len(found) != 1:
        names = ", ".join(experiments.parse(s)[1] for s in specs())
        raise ValueError(f"NAME must be a committed result's function ({names}) or a call such as "
                         f"'normref.experiments.sink:sink()', got {name!r}")
    return found[0]


def step_for(spec: str) -> cache.Step:
    """The cache step of the call ``spec`` names, computing nothing (its function must be an ``@cache.memo``
    experiment); ValueError naming the spec otherwise."""
    module, name, args, kwargs = experiments.parse(spec)
    fn = getattr(importlib.import_module(module), name, None)
    if not callable(getattr(fn, "step_for", None)):
        raise ValueError(f"spec must name an @cache.memo experiment function, got {spec!r}")
    return fn.step_for(*args, **kwargs)


def status() -> list[tuple[str, bool]]:
    """(spec, is its committed result current?) for each committed call: current when the call's key now is the
    one the manifest holds."""
    return [(spec, step_for(spec).key == e["key"]) for spec, e in manifest()["entries"].items()]


# ---------------------------------------------------------------- refreshing


def _prerequisite(spec: str) -> str:
    cache.USE_COMMITTED = False
    experiments.call(spec)
    return spec


def _compute(spec: str) -> dict:
    """Compute ``spec`` in this process (the refresh's worker, its cache empty but for what was needed first)."""
    from ..bench.harness import machine_info

    cache.USE_COMMITTED = False
    s = step_for(spec)
    wall, cpu = time.perf_counter(), time.process_time()
    experiments.call(spec)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    if not s.path.is_file():
        raise RuntimeError(f"{spec} ran but left no result under its key: is its function the @cache.memo one?")
    return {"spec": spec, "name": s.name, "key": s.key, "blob": s.path.read_bytes(), "cpu_s": round(cpu, 2),
            "wall_s": round(wall, 2), "machine": machine_info(threads=1), "versions": cache.versions_hash(s.libs)}


def _file_name(spec: str) -> str:
    module, name = experiments.parse(spec)[:2]
    return f"{module.rpartition('.')[2]}.{name}-{hashlib.sha256(spec.encode()).hexdigest()[:10]}.pkl"


def refresh(todo: list[str], jobs: int | None = None, log=print, *, fresh: bool = True) -> dict:
    """Compute the calls ``todo`` on this machine, in an empty cache (the declared prerequisites of their
    modules first, the converted weights say), and commit each (its pickle and its manifest entry). Returns
    the new manifest. ``fresh``: each call in a process of its own (False: in this one when ``jobs`` is 1)."""
    from ..cores import starmap

    for spec in todo:
        step_for(spec)  # a bad spec fails before any work
    data = manifest()
    saved, use = os.environ.get("NORMREF_CACHE"), cache.USE_COMMITTED
    with tempfile.TemporaryDirectory(prefix="normref-refresh-") as tmp:
        os.environ["NORMREF_CACHE"] = tmp  # the workers (spawned) and this process compute into it
        try:
            first = sorted({p for spec in todo for p in experiments.declared(experiments.parse(spec)[0])})
            for p in starmap(_prerequisite, [(p,) for p in first], jobs):
                log(f"computed {p} (needed first)")
            for r in starmap(_compute, [(spec,) for spec in todo], jobs, fresh=fresh):
                blob = r.pop("blob")
                pickle.loads(blob)  # it loads
                name = _file_name(r["spec"])
                before = data["entries"].get(r["spec"], {})
                if before.get("key") == r["key"] and before.get("sha256") != hashlib.sha256(blob).hexdigest():
                    log(f"{r['spec']}: a new result under the same key; a figure or a value drawn from the old one "
                        "keeps its key, so run `python -m normref cache --clear` before the next build")
                FOLDER.mkdir(parents=True, exist_ok=True)
                _write(FOLDER / name, blob)
                data["entries"][r.pop("spec")] = {**r, "file": name, "sha256": hashlib.sha256(blob).hexdigest(),
                                                  "bytes": len(blob)}
                _write(MANIFEST, (json.dumps(data, indent=1, sort_keys=False, ensure_ascii=False) + "\n").encode())
                log(f"committed {name}: {r['cpu_s']} CPU-s on {r['machine']['cpu_model']}")
        finally:
            cache.USE_COMMITTED = use
            if saved is None:
                os.environ.pop("NORMREF_CACHE", None)
            else:
                os.environ["NORMREF_CACHE"] = saved
    keep = {e["file"] for e in data["entries"].values()} | {MANIFEST.name}
    for f in FOLDER.iterdir() if FOLDER.is_dir() else ():
        if f.name not in keep and f.suffix == ".pkl":
            f.unlink()
    return data


def _write(path: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


# ---------------------------------------------------------------- the command


def add_arguments(parser) -> None:
    parser.add_argument("specs", nargs="*", metavar="NAME",
                        help="with --refresh: the results to compute and commit, each a committed result's function "
                             "name (layer_drop) or a call (\"normref.experiments.sink:sink()\"); default: all of them")
    parser.add_argument("--refresh", action="store_true",
                        help="compute results again on this machine and write them into normref/results/committed/")
    parser.add_argument("--jobs", type=int, default=None, help="processes at once (default: NORMREF_WORKERS, else the cores)")


def run(args) -> int:
    from ..usage import UsageError

    if args.specs and not args.refresh:
        raise UsageError("NAME goes with --refresh")
    if args.jobs is not None and args.jobs < 1:
        raise UsageError(f"--jobs must be a positive integer, got {args.jobs}")
    todo = []
    for name in args.specs:
        try:
            todo.append(resolve(name))
            step_for(todo[-1])
        except (ValueError, ImportError) as e:
            raise UsageError(str(e)) from None
    current = dict(status())
    if not args.refresh:
        for spec, e in manifest()["entries"].items():
            m = e["machine"]
            print(f"{'current' if current[spec] else 'STALE  '}  {spec}  ({e['cpu_s']} CPU-s, {m['cpu_model']}, "
                  f"{m['date'][:10]}, {e['file']})")
        stale = [s for s, ok in current.items() if not ok]
        if stale:
            print(f"{len(stale)} stale: `{REFRESH}` computes them again")
        return 1 if stale else 0
    refresh(list(dict.fromkeys(todo)) or list(current), args.jobs)
    return 0
