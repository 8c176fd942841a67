"""The build's slow work, done ahead and on every core: figures, snippets and notebooks of both languages.

Left to the page loop, a cold build draws each figure, runs each experiment
and each snippet one after another on one core, and the English build (a
second process, after the Chinese one) draws its own figures the same way. So
the prepare pass (:mod:`normsite.prepare`, a fresh process the Chinese build starts)
asks :func:`run` for everything both languages' pages will need: every
referenced figure in both languages and themes, every snippet's output and every
executed notebook (:mod:`normsite.nbexec`). The
misses go to a pool of processes, one per core (:mod:`normsite.pool`, torch on
one thread each; a cached experiment two figures need is computed once, see
:func:`normsite.locks.locked`); what is already cached costs one file check.
The page loops of both builds then find everything in the cache.

The results are the same bytes a serial build makes: each figure is drawn by
the same code on one torch thread either way, and a snippet is a subprocess
either way.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from normref import cache

from . import LANGS, SiteError, directives, nbexec, snippets

__all__ = ["Ahead", "docs_dirs", "run"]


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


def docs_dirs(lang: str, docs_dir: Path) -> dict[str, Path]:
    """{lang: docs folder} of the languages a build can see: docs/zh and docs/en when ``docs_dir`` is one
    of a pair named by language, else just its own."""
    docs_dir = Path(docs_dir)
    if docs_dir.name == lang:
        pair = {other: docs_dir.parent / other for other in LANGS}
        if all(d.is_dir() for d in pair.values()):
            return pair
    return {lang: docs_dir}


def _missing(step: cache.Step, out: Ahead) -> bool:
    """Is ``step`` not cached? If so, say why in ``out.why`` (the pool's workers compute it, and their
    processes' logs are not the build's)."""
    if step.cached():
        return False
    out.why.append(f"{step.kind}/{step.name}: {cache.why(step)}")
    return True


def _run_snippet(name: str) -> bool:
    return snippets.run(name)[1]


def run(dirs: dict[str, Path], notebooks: list[str | Path] = (), *, draw: bool = True,
        directive_jobs: list[tuple] = ()) -> Ahead:
    """Draw the referenced figures of every language in ``dirs``, run every referenced snippet and
    execute the ``notebooks`` (source paths; normsite.nbexec), the cache's misses in parallel. An
    unknown figure raises SiteError naming its pages; a failing snippet or notebook cell raises
    SiteError naming it. ``draw`` False: no figures (their directives become captions). ``directive_jobs``:
    (kind, name, lang, page, keyword arguments) of directives to expand (normsite.directives.POOLED), the
    missing ones on the pool too (normsite.directives.expand_task)."""
    jobs, snips = [], []
    if dirs and draw:
        from normref import figures  # its registry; no matplotlib (that comes with a render, in the pool)

        known = set(figures.declared())  # from the figure modules' source: no matplotlib on a warm build
    for lang, d in dirs.items():
        for name, pages in directives.referenced(d, "figure").items() if draw else ():
            if name not in known:
                raise SiteError(f"unknown figure {name!r} referenced in {', '.join(pages)}; "
                                f"known: {', '.join(sorted(known))}")
            jobs += [(name, lang, theme) for theme in figures.THEMES]
        snips += [n for n in directives.referenced(d, "snippet") if n not in snips]
    out = Ahead()
    fig_missing = []
    for j in dict.fromkeys(jobs):
        out.figure_steps[j] = figures.step_of(*j)
        if _missing(out.figure_steps[j], out):
            fig_missing.append(j)
    out.figures_cached = len(dict.fromkeys(jobs)) - len(fig_missing)
    snip_missing = []
    for name in snips:
        try:
            step = snippets.step_of(name)
        except FileNotFoundError:
            continue  # the page loop names the page that asks for it
        if _missing(step, out):
            snip_missing.append(name)
        else:
            out.snippets_cached += 1
    nb_missing = [str(src) for src in dict.fromkeys(notebooks) if _missing(nbexec.step_of(src), out)]
    out.notebooks_cached = len(dict.fromkeys(notebooks)) - len(nb_missing)
    dir_missing = []
    for kind, name, lang, src, kw in directive_jobs:
        step = directives.step_of_directive(kind, name, lang, src, **kw)
        if step is not None and _missing(step, out):
            dir_missing.append((kind, name, lang, src, kw))
    if not fig_missing and not snip_missing and not nb_missing and not dir_missing:
        return out
    # Figures first, in the order that starts the slow experiments early (figures.render_many's); the
    # notebooks and snippets (subprocesses: a kernel or an interpreter each) fill the cores after them.
    from . import pool  # the fork server, on a miss only: a warm build starts none

    order = figures.schedule(fig_missing) if fig_missing else []
    tasks = ([(figures.render_task, *j) for j in order] + [(directives.expand_task, *j) for j in dir_missing]
             + [(nbexec.execute, n) for n in nb_missing] + [(_run_snippet, n) for n in snip_missing])
    results = pool.run(tasks)
    for task, was_hit in zip(tasks, results):
        if task[0] is directives.expand_task:
            out.directive_tasks[task[1]] = out.directive_tasks.get(task[1], 0) + 1
            for kind, (done, hit) in was_hit.items():
                c = out.directives.setdefault(kind, [0, 0])
                c[0] += done
                c[1] += hit
        elif task[0] is _run_snippet:
            if not was_hit:
                out.snippets_run.add(task[1])
        elif task[0] is nbexec.execute:
            if was_hit:  # another process (the other language's build, a test) executed it meanwhile
                out.notebooks_cached += 1
            else:
                out.notebooks_run.add(task[1])
        elif not was_hit:
            out.figures_drawn.add(tuple(task[1:]))
    out.workers, out.cpu_s, out.requeued = pool.LAST["workers"], pool.LAST["cpu_s"], pool.LAST["requeued"]
    out.wall_s = pool.LAST["wall_s"]
    return out
