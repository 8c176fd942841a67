"""The build's pool: independent work (experiments, figure renders, snippets, notebooks) on every core.

:func:`run` calls ``fn(*args)`` for each task in a pool of processes, one per
core this process may use (:func:`workers`), and returns the results in task
order. Each worker runs torch on one thread, as the experiments always do
(:func:`normref.experiments.one_thread`): two workers on two cores, not four
threads fighting over them. With one worker, or one task, the tasks run here,
in order, under the same one-thread setting, so a serial run computes exactly
what a parallel one does (a figure's bytes do not depend on where it was drawn).

A task may name the tasks it must come ``after`` (a figure, the experiments its
module declares: normsite.ahead plans them). The pool keeps one task per worker
in flight and, whenever a worker is free, starts the first task in the given
order whose predecessors are done; so the caller's order is the priority
(longest first) and the dependencies are the only constraint. Nothing waits on a
lock: a result two tasks need is one task of its own, computed once before
either starts, and every cache write is a temporary file renamed into place.

Workers start from a fork server that has imported torch, matplotlib and the
figures once, so a worker starts in milliseconds and no worker inherits the
threads of the process that asked (MkDocs under ``mkdocs serve``, pytest).
NORMREF_WORKERS=N sets the pool's size (1: no pool; :func:`normref.cores.workers`).
"""

from __future__ import annotations

import multiprocessing
import os
import resource
import sys
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait

from normref import cache
from normref.cores import workers

__all__ = ["workers", "run", "start", "Task", "LAST"]

Task = tuple  # (fn, *args): fn a module-level function, args picklable

# What the last run did: tasks, workers, wall and CPU seconds (all processes), and per task (by index):
# its CPU seconds (where the time goes) and the results of kind "data" (experiments) it computed, with why.
LAST: dict = {}

# Tasks handed to the pool beyond one per worker: a worker that finishes one takes the next from the pool's queue
# at once, instead of waiting until this process has heard of the result and handed it the next (about 0.6 ms a
# task, measured here: 0.7-0.8 s per worker over a cold build's 1,300 tasks). Each is still the first ready task in
# order when it is handed over.
BACKLOG = 2
# What the fork server imports once, so that workers start with it loaded.
PRELOAD = ["torch", "matplotlib.pyplot", "normref.figures", "normref.figures._style", "normref.experiments"]
# And what it imports besides when :func:`start` starts it ahead, for a cold build. torch._dynamo (about 1.6 CPU-s)
# is imported by the first SmolLM2 model a worker builds (llama.py's meta-device init), and in a cold build both
# workers build one (measured: the GGUF conversion in one, the model run in the other). A smaller pass (an edit's
# results) mostly builds none, and its first worker would wait for the import: 1.7 -> 2.8 s to a pool's first
# two results, measured here.
COLD_PRELOAD = ["torch._dynamo"]


def _watch(owner: int) -> None:
    # A worker's parent is the fork server, not the process that asked for the pool: when that process is
    # killed (a build stopped with `kill`), neither notices, and the workers would sit forever. Exit then.
    while True:
        time.sleep(1.0)
        try:
            os.kill(owner, 0)
        except ProcessLookupError:
            os._exit(1)
        except PermissionError:  # alive, another user's (cannot be ours, but do not exit on it)
            pass


def _init(env: dict, cwd: str, path: list, owner: int | None = None) -> None:
    # The fork server started with the environment, folder and sys.path of the first process that
    # used it; a worker takes those of the process that asked for it (its NORMREF_CACHE above all).
    if owner is not None:
        threading.Thread(target=_watch, args=(owner,), daemon=True, name="normsite-pool-owner").start()
    os.environ.clear()
    os.environ.update(env)
    os.chdir(cwd)
    sys.path[:] = path
    import torch

    torch.set_num_threads(1)
    cache.STATS.update(hit=0, miss=0)


def _cpu() -> float:
    """CPU seconds of this process and of the subprocesses it has waited for (a snippet's run)."""
    c = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + c.ru_utime + c.ru_stime


def _call(task: Task):
    """Run one task in a worker: (result, stats); stats: the changes of the cache's counts, the CPU seconds,
    and the "kind/name: why" line of each result of kind "data" (an experiment's) the task computed."""
    before, n_why, cpu = dict(cache.STATS), len(cache.WHY), _cpu()
    result = task[0](*task[1:])
    data = [w for w in cache.WHY[n_why:] if w.startswith("data/")]
    del cache.WHY[n_why:]  # the pass says why, from its own plan and these lines (normsite.ahead)
    return result, {"cache": {k: cache.STATS[k] - before.get(k, 0) for k in cache.STATS},
                    "cpu_s": _cpu() - cpu, "data": data}


def _context(preload: Sequence[str] = PRELOAD):
    # The modules count when the fork server starts (this process's first pool, or start()), not after.
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(list(preload))
    return ctx


def start() -> None:
    """Start the fork server now, for a cold build's :func:`run` to come: it imports :data:`PRELOAD` and
    :data:`COLD_PRELOAD` (the latter's cost: see its comment) while this process goes on (the prepare pass plans
    its tasks meanwhile), instead of when the pool's first worker is asked for. The standard
    library's own call (multiprocessing.forkserver.ensure_running); a run with one worker never uses it."""
    from multiprocessing import forkserver

    _context([*PRELOAD, *COLD_PRELOAD])
    forkserver.ensure_running()


def _check(tasks: list, after) -> list[frozenset]:
    for t in tasks:
        if not t or not callable(t[0]):
            raise TypeError(f"a task is (function, *args); got {t!r}")
    if after is None:
        return [frozenset()] * len(tasks)
    if len(after) != len(tasks):
        raise ValueError(f"after must give one collection of task indices per task ({len(tasks)}), got {len(after)}")
    out = [frozenset(a) for a in after]
    for i, a in enumerate(out):
        if any(not isinstance(j, int) or not 0 <= j < len(tasks) or j == i for j in a):
            raise ValueError(f"after[{i}] must name other tasks by index in [0, {len(tasks)}), got {sorted(a)!r}")
    return out


def _next(todo: list[int], done: set[int], after: list[frozenset]) -> int | None:
    """The first task of ``todo`` (in order) whose predecessors are all done, or None."""
    return next((i for i in todo if after[i] <= done), None)


def run(tasks: Sequence[Task], *, n_workers: int | None = None, after: Sequence | None = None,
        on_result: Callable[[int, object], None] | None = None) -> list:
    """``[fn(*args) for (fn, *args) in tasks]``, computed by a pool of ``n_workers`` processes (default
    :func:`workers`), each task started once the tasks ``after[i]`` names (indices) have finished; among
    those ready, the first in ``tasks``' order goes first. ``on_result(index, result)`` is called as each
    task finishes. An exception in a task is raised here (the other tasks are cancelled); a dependency
    cycle is a ValueError. The cache's counts (``normref.cache.STATS``) include the workers'."""
    tasks = list(tasks)
    after = _check(tasks, after)
    n = min(n_workers or workers(), len(tasks))
    results: list = [None] * len(tasks)
    LAST.clear()
    LAST.update(tasks=len(tasks), workers=max(n, 1), cpu_s=0.0, task_cpu_s=[0.0] * len(tasks),
                task_data=[[] for _ in tasks])
    t0, cpu0 = time.perf_counter(), _cpu()
    todo, done = list(range(len(tasks))), set()

    def finished(i: int, result, stats: dict, worker: bool = True) -> None:
        LAST["task_cpu_s"][i] += stats["cpu_s"]
        LAST["task_data"][i] = stats["data"]
        for k, v in stats["cache"].items() if worker else ():  # a task run here counted in this process already
            cache.STATS[k] = cache.STATS.get(k, 0) + v
        results[i] = result
        done.add(i)
        if on_result:
            on_result(i, result)

    if n <= 1:
        from normref.experiments import one_thread  # here: a process that only asks (a site build) imports no experiment

        with one_thread():
            while todo:
                i = _next(todo, done, after)
                if i is None:
                    raise ValueError(f"the tasks' dependencies form a cycle: {todo} cannot start")
                todo.remove(i)
                finished(i, *_call(tasks[i]), worker=False)
        LAST.update(cpu_s=_cpu() - cpu0, wall_s=time.perf_counter() - t0)
        return results
    with ProcessPoolExecutor(n, mp_context=_context(), initializer=_init,
                             initargs=(dict(os.environ), os.getcwd(), list(sys.path), os.getpid())) as ex:
        running: dict = {}
        try:
            while todo or running:
                while len(running) < n + BACKLOG and (i := _next(todo, done, after)) is not None:
                    todo.remove(i)
                    running[ex.submit(_call, tasks[i])] = i
                if not running:
                    raise ValueError(f"the tasks' dependencies form a cycle: {todo} cannot start")
                finished_now, _ = wait(running, return_when=FIRST_COMPLETED)
                for fut in finished_now:
                    result, stats = fut.result()
                    LAST["cpu_s"] += stats["cpu_s"]
                    finished(running.pop(fut), result, stats)
        except BaseException:
            for fut in running:
                fut.cancel()
            raise
    LAST["wall_s"] = time.perf_counter() - t0
    return results
