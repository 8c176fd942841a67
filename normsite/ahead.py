"""The build's slow work as one plan, executed on every core: figures, snippets, notebooks and directive expansions.

:func:`plan` lists every result the pages of both languages ask for, one :class:`Task` per cache key: every
referenced figure in both languages and themes, every snippet's output, every executed notebook
(:mod:`normsite.nbexec`) and every directive expansion that computes normref results
(:data:`normsite.directives.POOLED`). Each task's key is made without computing anything (the recipes of
normref.cache.step_of; for a directive, :func:`normsite.directives.recipe`). :func:`run` then hands the
misses to one pool (:mod:`normsite.pool`, a process per core, torch on one thread each), longest first by
the CPU seconds each took when it was last computed (:func:`order`); what is already cached costs one file
check. The page loops of both builds then find everything in the cache.

The results are the same bytes a serial build makes: each figure is drawn by the same code on one torch thread
either way, and a snippet is a subprocess either way.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from normref import cache

from . import LANGS, SiteError, directives, nbexec, snippets

__all__ = ["Ahead", "Task", "docs_dirs", "plan", "order", "run"]


@dataclass
class Ahead:
    """What :func:`run` did: figure variants drawn and already cached, snippets run and already cached."""

    figures_drawn: set = field(default_factory=set)  # {(name, lang, theme)}
    figures_cached: int = 0
    snippets_run: set = field(default_factory=set)  # {name}
    snippets_cached: int = 0
    notebooks_run: set = field(default_factory=set)  # {source path} executed into the cache (normsite.nbexec)
    notebooks_cached: int = 0
    workers: int = 0
    cpu_s: float = 0.0
    wall_s: float = 0.0
    requeued: int = 0
    directives: dict = field(default_factory=dict)  # {kind: [computed, cached]} by the pool's directive tasks
    directive_tasks: dict = field(default_factory=dict)  # {kind: how many top-level tasks the pool ran}
    why: list = field(default_factory=list)  # "kind/name: why it is computed", one per miss (normref.cache.why)
    figure_steps: dict = field(default_factory=dict)  # {(name, lang, theme): its cache step}, found once per pass


@dataclass(frozen=True)
class Task:
    """One result the pass asks for: what it is (``kind``: figure, directive, notebook or snippet, and ``what``:
    (name, lang, theme), (kind, name, lang), the notebook's source or the snippet's name), its cache step, and
    the pool call that computes it into the cache (normsite.pool's (function, *arguments))."""

    kind: str
    what: object
    step: cache.Step
    call: tuple


def docs_dirs(lang: str, docs_dir: Path) -> dict[str, Path]:
    """{lang: docs folder} of the languages a build can see: docs/zh and docs/en when ``docs_dir`` is one
    of a pair named by language, else just its own."""
    docs_dir = Path(docs_dir)
    if docs_dir.name == lang:
        pair = {other: docs_dir.parent / other for other in LANGS}
        if all(d.is_dir() for d in pair.values()):
            return pair
    return {lang: docs_dir}


def _figure_tasks(dirs: dict[str, Path]) -> list[Task]:
    from normref import figures  # its registry; no matplotlib (that comes with a render, in the pool)

    known = set(figures.declared())  # from the figure modules' source: no matplotlib on a warm build
    jobs = []
    for lang, d in dirs.items():
        for name, pages in directives.referenced(d, "figure").items():
            if name not in known:
                raise SiteError(f"unknown figure {name!r} referenced in {', '.join(pages)}; "
                                f"known: {', '.join(sorted(known))}")
            jobs += [(name, lang, theme) for theme in figures.THEMES]
    # Every figure's first variant (the one that computes the experiments it draws) before any second.
    return [Task("figure", j, figures.step_of(*j), (figures.render_task, *j)) for j in figures.schedule(jobs)]


def _snippet_tasks(dirs: dict[str, Path]) -> list[Task]:
    out = []
    for name in dict.fromkeys(n for d in dirs.values() for n in directives.referenced(d, "snippet")):
        try:
            out.append(Task("snippet", name, snippets.step_of(name), (_run_snippet, name)))
        except FileNotFoundError:
            continue  # the page loop names the page that asks for it
    return out


def _directive_tasks(directive_jobs) -> list[Task]:
    out = []
    for kind, name, lang, src, kw in directive_jobs:
        step = directives.step_of_directive(kind, name, lang, src, **kw)
        if step is not None:
            out.append(Task("directive", (kind, name, lang), step, (directives.expand_task, kind, name, lang, src, kw)))
    return out


def plan(dirs: dict[str, Path], notebooks=(), *, draw: bool = True, directive_jobs=()) -> list[Task]:
    """Every result the pages of ``dirs`` ({lang: docs folder}) ask for, once per cache key, computing nothing:
    their figures (none when ``draw`` is False: their directives become captions), snippets, the ``notebooks``
    (source paths) and the ``directive_jobs`` ((kind, name, lang, page, keyword arguments), normsite.directives.POOLED).
    An unknown figure raises SiteError naming its pages."""
    tasks = (_figure_tasks(dirs) if dirs and draw else []) + _directive_tasks(directive_jobs)
    tasks += [Task("notebook", str(src), nbexec.step_of(src), (nbexec.execute, str(src))) for src in dict.fromkeys(notebooks)]
    tasks += _snippet_tasks(dirs)
    return list({(t.step.kind, t.step.key): t for t in tasks}.values())


# Where the pass keeps the CPU seconds each result took when it was last computed: {kind/name: seconds}.
COSTS = "costs.json"


def _costs() -> dict[str, float]:
    path = cache.folder("prepare") / COSTS
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError):
        return {}


def _remember_costs(tasks: list[Task], cpu_s: list[float]) -> None:
    costs = _costs() | {f"{t.step.kind}/{t.step.name}": round(c, 3) for t, c in zip(tasks, cpu_s)}
    path = cache.folder("prepare") / COSTS
    tmp = path.with_name(f".tmp-{os.getpid()}-{COSTS}")
    tmp.write_text(json.dumps(costs, sort_keys=True), encoding="utf-8")
    os.replace(tmp, path)  # atomic: two passes at once leave one whole file


def order(tasks: list[Task]) -> list[Task]:
    """The order the pool takes the misses in: longest first, by the CPU seconds each took when it was last
    computed under its name; one never computed before first of all (a cold build: in plan order, which puts
    the figures' first variants, those that run the experiments, ahead). The slow ones start early, and the
    quick ones fill the cores at the end."""
    costs = _costs()
    known = sorted((t for t in tasks if f"{t.step.kind}/{t.step.name}" in costs),
                   key=lambda t: -costs[f"{t.step.kind}/{t.step.name}"])
    return [t for t in tasks if f"{t.step.kind}/{t.step.name}" not in costs] + known


def _missing(step: cache.Step, out: Ahead) -> bool:
    """Is ``step`` not cached? If so, say why in ``out.why`` (the pool's workers compute it, and their
    processes' logs are not the build's)."""
    if step.cached():
        return False
    out.why.append(f"{step.kind}/{step.name}: {cache.why(step)}")
    return True


def _run_snippet(name: str) -> bool:
    return snippets.run(name)[1]


def _tally(out: Ahead, task: Task, was_hit) -> None:
    """Count what one pool task did into ``out``."""
    if task.kind == "directive":
        out.directive_tasks[task.what[0]] = out.directive_tasks.get(task.what[0], 0) + 1
        for kind, (done, hit) in was_hit.items():
            c = out.directives.setdefault(kind, [0, 0])
            c[0] += done
            c[1] += hit
    elif task.kind == "snippet":
        if was_hit:  # another process (the other language's build, a test) ran it meanwhile
            out.snippets_cached += 1
        else:
            out.snippets_run.add(task.what)
    elif task.kind == "notebook":
        if was_hit:
            out.notebooks_cached += 1
        else:
            out.notebooks_run.add(task.what)
    elif task.kind == "figure":
        if was_hit:
            out.figures_cached += 1
        else:
            out.figures_drawn.add(task.what)


def run(dirs: dict[str, Path], notebooks: list[str | Path] = (), *, draw: bool = True,
        directive_jobs: list[tuple] = ()) -> Ahead:
    """Plan every result the pages of ``dirs`` ask for (:func:`plan`, the same arguments) and compute the cache's
    misses on the pool, longest first (:func:`order`). A failing snippet or notebook cell raises SiteError naming it."""
    tasks = plan(dirs, notebooks, draw=draw, directive_jobs=directive_jobs)
    out = Ahead(figure_steps={t.what: t.step for t in tasks if t.kind == "figure"})
    missing = [t for t in tasks if _missing(t.step, out)]
    computed = {id(t) for t in missing}
    for t in tasks:
        if id(t) not in computed and t.kind != "directive":  # a cached directive is counted when the page loop reads it
            _tally(out, t, True)
    if not missing:
        return out
    from . import pool  # the fork server, on a miss only: a warm build starts none

    todo = order(missing)
    for task, was_hit in zip(todo, pool.run([t.call for t in todo])):
        _tally(out, task, was_hit)
    _remember_costs(todo, pool.LAST["task_cpu_s"])
    out.workers, out.cpu_s, out.requeued = pool.LAST["workers"], pool.LAST["cpu_s"], pool.LAST["requeued"]
    out.wall_s = pool.LAST["wall_s"]
    return out
