"""The build's slow work as one plan, executed on every core: experiments, figures, snippets, notebooks and
directive expansions.

:func:`plan` lists every result the pages of both languages ask for, one :class:`Task` per cache key: every
referenced figure in both languages and themes, every snippet's output, every executed notebook
(:mod:`normsite.nbexec`) and every directive expansion that computes normref results
(:data:`normsite.directives.POOLED`). Each task's key is made without computing anything (the recipes of
normref.cache.step_of; for a directive, :func:`normsite.directives.recipe`). :func:`run` then hands the
misses to one pool (:mod:`normsite.pool`, a process per core, torch on one thread each), longest first by
the CPU seconds each took when it was last computed (:func:`order`); what is already cached costs one file
check. The page loops of both builds then find everything in the cache.

The cached experiments those results read are tasks too (:func:`experiment_tasks`): each module that draws
or states them declares the calls it makes (``EXPERIMENTS``, read by :func:`normref.experiments.declared`
from its source), each call is one task however many results read it, and it runs before them: a missing
figure after its own module's experiments, any other missing result after those its code reaches. So no two
processes compute one declared experiment, and nothing waits on a lock. A result that computed an experiment
itself was missing a declaration, and so was an experiment task that computed a result of another declared
experiment's module (:func:`_computed_for_another`): :attr:`Ahead.undeclared` names each, and the pass's log
says so.

The results are the same bytes a serial build makes: each figure is drawn by the same code on one torch thread
either way, and a snippet is a subprocess either way.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from normref import cache
from normref.cores import workers as pool_workers

from . import LANGS, SiteError, directives, nbexec, snippets

__all__ = ["Ahead", "Task", "docs_dirs", "plan", "experiment_tasks", "order", "run"]


@dataclass
class Ahead:
    """What :func:`run` did: figure variants drawn and already cached, snippets run and already cached."""

    figures_drawn: set = field(default_factory=set)  # {(name, lang, theme)}
    figures_cached: int = 0
    snippets_run: set = field(default_factory=set)  # {name}
    snippets_cached: int = 0
    notebooks_run: set = field(default_factory=set)  # {source path} executed into the cache (normsite.nbexec)
    notebooks_cached: int = 0
    experiments: list = field(default_factory=lambda: [0, 0])  # [computed, already cached] experiment tasks
    workers: int = 0
    cpu_s: float = 0.0
    wall_s: float = 0.0
    directives: dict = field(default_factory=dict)  # {kind: [computed, cached]} by the pool's directive tasks
    directive_tasks: dict = field(default_factory=dict)  # {kind: how many top-level tasks the pool ran}
    why: list = field(default_factory=list)  # "kind/name: why it is computed", one per miss (normref.cache.why)
    undeclared: list = field(default_factory=list)  # "kind/name computed data/…": an experiment a result computed
    figure_steps: dict = field(default_factory=dict)  # {(name, lang, theme): its cache step}, found once per pass


@dataclass(frozen=True)
class Task:
    """One result the pass asks for: what it is (``kind``: figure, directive, notebook, snippet or experiment, and
    ``what``: (name, lang, theme), (kind, name, lang), the notebook's source, the snippet's name or the experiment's
    call), its cache step (None for an experiment: its results' keys are its own function's to make, in the worker),
    and the pool call that computes it into the cache (normsite.pool's (function, *arguments))."""

    kind: str
    what: object
    step: cache.Step | None
    call: tuple

    @property
    def name(self) -> str:
        """"kind/name": the cache step's, or "experiment/" and the call."""
        return f"{self.step.kind}/{self.step.name}" if self.step is not None else f"{self.kind}/{self.what}"


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


def _declaring_modules() -> tuple[str, ...]:
    """Every module that may declare EXPERIMENTS: the figure, value and widget data modules, the site's included."""
    import normref.data
    import normref.figures
    import normref.values
    from normref._registry import plugged, registered_modules

    return tuple(m for pkg in (normref.figures, normref.values, normref.data)
                 for m in (*registered_modules(pkg.__name__, pkg.__path__), *plugged(pkg.__name__)))


def _prerequisites(specs: list[str]) -> dict[str, tuple[str, ...]]:
    """{experiment: the experiments it must come after}, for ``specs`` and all they need: an experiment's module
    may declare EXPERIMENTS of its own (those in other modules run first: the converted weights every SmolLM2
    measurement loads, say). In the order to plan them; a cycle is a SiteError naming it."""
    from normref import experiments  # here: a warm build's pass plans no experiment and imports none of it

    out: dict[str, tuple[str, ...]] = {}
    path: list[str] = []

    def visit(spec: str) -> None:
        if spec in out:
            return
        if spec in path:
            raise SiteError("the declared experiments form a cycle: " + " -> ".join([*path[path.index(spec):], spec]))
        path.append(spec)
        module = experiments.parse(spec)[0]
        pre = tuple(p for p in experiments.declared(module) if experiments.parse(p)[0] != module)
        for p in pre:
            visit(p)
        path.pop()
        out[spec] = pre

    for s in specs:
        visit(s)
    return out


def experiment_tasks(missing: list[Task]) -> tuple[list[Task], list[set[int]], list[set[int]]]:
    """The experiment tasks the ``missing`` results need, one per declared call (and the calls those declare in
    turn); for each of them, the indices (into those tasks) it must wait for; and the same for each missing
    result. A figure waits for the calls its module declares; a directive expansion for those the modules of its
    key's import closure declare (a value module, a figure module whose fields a caption reads); a notebook or a
    snippet, which declares nothing, also for every declared call whose function is in that closure (a notebook
    that calls an experiment itself). So a value that reads no experiment starts at once, and a cold directive
    pass in a test computes no experiment it does not read. Reads the declarations from source: nothing is
    imported or computed."""
    from normref import experiments, figures

    module_of = figures.declared()
    declares: dict[str, tuple[str, ...]] = {}  # module: the calls it declares, read once if a result needs them
    called_in: dict[str, list[str]] = {}       # module: the declared calls of a function it holds
    reads: dict[int, list[str]] = {}
    for t in missing:
        if t.kind == "figure":
            reads[id(t)] = list(experiments.declared(module_of[t.what[0]]))
            continue
        if not declares:
            declares = {m: experiments.declared(m) for m in _declaring_modules()}
            for spec in dict.fromkeys(s for ss in declares.values() for s in ss):
                called_in.setdefault(experiments.parse(spec)[0], []).append(spec)
        mods = cache.closure(t.step.code) if t.step is not None and t.step.code else ()
        # A module that declares states what it reads; a script (a notebook, a snippet) declares nothing, so it
        # waits for every declared call of a function it can reach.
        reads[id(t)] = [s for m in mods for s in (*declares.get(m, ()),
                                                  *(called_in.get(m, ()) if t.kind != "directive" else ()))]
    pre = _prerequisites(list(dict.fromkeys(s for ss in reads.values() for s in ss)))
    index = {spec: i for i, spec in enumerate(pre)}
    own = [{index[p] for p in pre[spec]} for spec in pre]
    deps = [{index[s] for s in reads[id(t)]} for t in missing]
    return [Task("experiment", spec, None, (experiments.call, spec)) for spec in pre], own, deps


def _computed_for_another(spec: str, data: list[str], specs: list[str]) -> list[str]:
    """What the task of the experiment ``spec`` computed in the module of another of the declared ``specs``:
    "experiment/SPEC computed data/…", one per result. It needs that experiment first and its module does not say
    so (its EXPERIMENTS should name it): the two tasks may run at once and compute the result twice. A result is
    placed by its module (normref.cache.memo names it "data/module.function(…)"), so a helper of the other module
    counts too, and another experiment of ``spec``'s own module does not."""
    from normref import experiments

    own, modules = experiments.parse(spec)[0], {experiments.parse(s)[0] for s in specs}
    out = []
    for line in data:
        name = line.partition(": ")[0]
        called = name[len("data/"):].partition("(")[0]  # module.function
        module = max((m for m in modules if called.startswith(m + ".")), key=len, default=own)
        if module != own:
            out.append(f"experiment/{spec} computed {name}")
    return out


# Where the pass keeps the CPU seconds each result took when it was last computed: {kind/name: seconds}.
COSTS = "costs.json"


def _costs() -> dict[str, float]:
    path = cache.folder("prepare") / COSTS
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError):
        return {}


def _remember_costs(tasks: list[Task], cpu_s: list[float]) -> None:
    costs = _costs() | {t.name: round(c, 3) for t, c in zip(tasks, cpu_s)}
    path = cache.folder("prepare") / COSTS
    tmp = path.with_name(f".tmp-{os.getpid()}-{COSTS}")
    tmp.write_text(json.dumps(costs, sort_keys=True), encoding="utf-8")
    os.replace(tmp, path)  # atomic: two passes at once leave one whole file


# Below this many CPU seconds of work, by the costs recorded last time, the pass computes here, in order, instead of
# starting the pool: its fork server imports torch, matplotlib and the figures first (normsite.pool.PRELOAD), about
# 2 s on the 2-core machines we measure on, longer than an edit's few dozen values take.
SMALL_S = 2.0


def _small(tasks: list[Task]) -> bool:
    """Is ``tasks`` a small batch: each computed before, all together under :data:`SMALL_S` CPU seconds?"""
    costs = _costs()
    return all(t.name in costs for t in tasks) and sum(costs[t.name] for t in tasks) < SMALL_S


# A task never computed before has no recorded cost: it goes by its kind's usual cost, longest first. Measured in a
# cold build on 2 cores: a notebook 1.3-4.9 CPU-s (a kernel and its imports), a snippet 0.1-2 s (a Python process),
# a figure variant 0.4-1.8 s, a directive expansion mostly milliseconds.
KIND_ORDER = ("notebook", "snippet", "figure", "directive")


def order(tasks: list[Task]) -> list[Task]:
    """The order the pool takes the tasks in: the experiments first (everything else may wait for them), then the
    rest; within each, longest first by the CPU seconds each took when it was last computed under its name, one
    never computed before first of all, by :data:`KIND_ORDER` (a cold build: the notebooks, the snippets, then
    the figures, their first variants ahead, then the directive expansions). The slow ones start early, and the
    quick ones fill the cores at the end."""
    costs = _costs()
    rank = {kind: i for i, kind in enumerate(KIND_ORDER)}

    def by_cost(group: list[Task]) -> list[Task]:
        known = sorted((t for t in group if t.name in costs), key=lambda t: -costs[t.name])
        return sorted((t for t in group if t.name not in costs), key=lambda t: rank.get(t.kind, len(rank))) + known

    return by_cost([t for t in tasks if t.kind == "experiment"]) + by_cost([t for t in tasks if t.kind != "experiment"])


# From this many notebooks and snippets to run, their kernels and Pythons are forked from one process that has
# imported torch and ipykernel (normsite.kernelfork): it costs about what one kernel's start does, and saves about
# 1.5 CPU-s a kernel or a snippet that imports torch.
FORK_FROM = 2


@contextlib.contextmanager
def _zygote(n_runs: int):
    """While the pass runs: for :data:`FORK_FROM` notebooks and snippets or more, a zygote their kernels and
    Pythons are forked from, named in the environment the pool's workers get (normsite.kernelfork.ENV). Yields a
    dict whose "cpu_s", once done, holds the CPU seconds of the zygote and what it forked (a worker's own count
    misses them: they are the zygote's children, not the worker's)."""
    spent = {"cpu_s": 0.0}
    if n_runs < FORK_FROM:
        yield spent
        return
    import resource
    import tempfile

    from . import kernelfork

    def children_cpu() -> float:
        c = resource.getrusage(resource.RUSAGE_CHILDREN)
        return c.ru_utime + c.ru_stime

    with tempfile.TemporaryDirectory(prefix="normref-kernels-") as folder:
        if len(os.path.join(folder, "zygote").encode()) > 100:  # a Unix socket's path holds at most 107 bytes
            yield spent
            return
        proc, path = kernelfork.start(folder)
        before = os.environ.get(kernelfork.ENV)  # another's (a test session's): this pass uses its own
        os.environ[kernelfork.ENV] = path
        try:
            yield spent
        finally:
            if before is None:
                os.environ.pop(kernelfork.ENV, None)
            else:
                os.environ[kernelfork.ENV] = before
            cpu0 = children_cpu()  # the zygote is this process's only child to end from here
            proc.stdin.close()  # its owner gone: it stops
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            spent["cpu_s"] = children_cpu() - cpu0


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
    if task.kind == "experiment":
        out.experiments[0 if not was_hit else 1] += 1
    elif task.kind == "directive":
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
    misses on the pool, longest first (:func:`order`). A failing snippet or notebook cell raises SiteError naming it.
    In a cache with no recorded costs (a cold build: everything is missing) the pool's fork server starts first, so
    it loads torch and matplotlib while the tasks are planned."""
    if not (cache.folder("prepare") / COSTS).is_file() and pool_workers() > 1:
        from . import pool

        pool.start()
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

    extra, own, deps = experiment_tasks(missing)
    todo = order(extra + missing)
    at = {id(t): i for i, t in enumerate(todo)}
    waits = {id(t): {at[id(extra[j])] for j in d} for t, d in zip(extra + missing, own + deps)}
    with _zygote(sum(t.kind in ("notebook", "snippet") for t in todo)) as forked:
        results = pool.run([t.call for t in todo], after=[waits.get(id(t), set()) for t in todo],
                           n_workers=1 if _small(todo) else None)
    for task, was_hit, data in zip(todo, results, pool.LAST["task_data"]):
        _tally(out, task, was_hit)
        if task.kind == "experiment":
            out.why += data
            out.undeclared += _computed_for_another(task.what, data, [t.what for t in extra])
        else:  # an experiment computed by a result, not by its own task: a missing declaration
            out.undeclared += [f"{task.name} computed {line.partition(': ')[0]}" for line in data]
    _remember_costs(todo, pool.LAST["task_cpu_s"])
    out.workers, out.cpu_s, out.wall_s = pool.LAST["workers"], pool.LAST["cpu_s"] + forked["cpu_s"], pool.LAST["wall_s"]
    return out
