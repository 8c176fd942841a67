"""The build's pool: independent work (figure renders, experiments, snippets, notebooks) on every core.

:func:`run` calls ``fn(*args)`` for each task in a pool of processes, one per
core this process may use (:func:`workers`), and returns the results in task
order. Each worker runs torch on one thread, as the experiments always do
(:func:`normref.experiments.one_thread`): two workers on two cores, not four
threads fighting over them. With one worker, or one task, the tasks run here,
in order, under the same one-thread setting, so a serial run computes exactly
what a parallel one does (a figure's bytes do not depend on where it was drawn).

Two tasks that need the same cached experiment do not compute it twice: the
build locks a cache entry while it is computed (:func:`normsite.locks.locked`,
normref's cache guard in every process that imports normsite, the workers
included). In a worker a locked entry raises :class:`normsite.locks.Busy`
instead of waiting; the task goes to the back of the queue, and on its second
turn it waits for the entry. So while one worker computes an experiment, the
other draws figures that do not need it.

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

from . import locks

__all__ = ["workers", "run", "Task", "LAST"]

Task = tuple  # (fn, *args): fn a module-level function, args picklable

# What the last run did: tasks, workers, wall and CPU seconds (all processes), CPU seconds per task
# (by index: where the time goes), tasks sent back to the queue because another worker held an entry
# they needed.
LAST: dict = {}

# What the fork server imports once, so that workers start with it loaded.
PRELOAD = ["torch", "matplotlib.pyplot", "normref.figures", "normref.figures._style", "normsite.locks"]


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
    locks.install()  # done by importing normsite already; said here, since the pool depends on it
    locks.WAIT_FOR_OTHERS = False
    cache.STATS.update(hit=0, miss=0)
    locks.STATS.update(waited=0)


def _cpu() -> float:
    """CPU seconds of this process and of the subprocesses it has waited for (a snippet's run)."""
    c = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + c.ru_utime + c.ru_stime


def _call(task: Task, wait_for_others: bool):
    """Run one task in a worker: ("ok", result, stats) or ("busy", None, stats); stats: the changes of
    the cache's and the locks' counts, and the CPU seconds."""
    locks.WAIT_FOR_OTHERS = wait_for_others
    before = (dict(cache.STATS), dict(locks.STATS))
    cpu = _cpu()
    try:
        result = task[0](*task[1:])
        status = "ok"
    except locks.Busy:
        result, status = None, "busy"
    finally:
        locks.WAIT_FOR_OTHERS = False
    stats = [{k: counts[k] - old.get(k, 0) for k in counts} for counts, old in zip((cache.STATS, locks.STATS), before)]
    return status, result, {"cache": stats[0], "locks": stats[1], "cpu_s": _cpu() - cpu}


def _context():
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(PRELOAD)
    return ctx


def run(tasks: Sequence[Task], *, n_workers: int | None = None,
        on_result: Callable[[int, object], None] | None = None) -> list:
    """``[fn(*args) for (fn, *args) in tasks]``, computed by a pool of ``n_workers`` processes
    (default :func:`workers`). ``on_result(index, result)`` is called as each task finishes.
    An exception in a task is raised here (the other tasks are cancelled). The cache's and the
    locks' counts (``normref.cache.STATS``, :data:`normsite.locks.STATS`) include the workers'."""
    tasks = list(tasks)
    for t in tasks:
        if not t or not callable(t[0]):
            raise TypeError(f"a task is (function, *args); got {t!r}")
    n = min(n_workers or workers(), len(tasks))
    results: list = [None] * len(tasks)
    LAST.clear()
    LAST.update(tasks=len(tasks), workers=max(n, 1), cpu_s=0.0, requeued=0, task_cpu_s=[0.0] * len(tasks))
    t0, cpu0 = time.perf_counter(), _cpu()
    if n <= 1:
        from normref.experiments import one_thread  # here: a process that only asks (a site build) imports no experiment

        with one_thread():
            for i, t in enumerate(tasks):
                c0 = _cpu()
                results[i] = t[0](*t[1:])
                LAST["task_cpu_s"][i] = _cpu() - c0
                if on_result:
                    on_result(i, results[i])
        LAST.update(cpu_s=_cpu() - cpu0, wall_s=time.perf_counter() - t0)
        return results
    with ProcessPoolExecutor(n, mp_context=_context(), initializer=_init,
                             initargs=(dict(os.environ), os.getcwd(), list(sys.path), os.getpid())) as ex:
        pending = {ex.submit(_call, t, False): i for i, t in enumerate(tasks)}
        try:
            while pending:
                done, _ = wait(pending, return_when=FIRST_COMPLETED)
                for fut in done:
                    i = pending.pop(fut)
                    status, result, stats = fut.result()
                    cpu = stats.pop("cpu_s")
                    LAST["cpu_s"] += cpu
                    LAST["task_cpu_s"][i] += cpu
                    for counts, name in ((cache.STATS, "cache"), (locks.STATS, "locks")):
                        for k, v in stats[name].items():
                            counts[k] = counts.get(k, 0) + v
                    if status == "busy":
                        LAST["requeued"] += 1
                        # Another worker holds an entry this task needs: back of the queue; next time, wait.
                        pending[ex.submit(_call, tasks[i], True)] = i
                        continue
                    results[i] = result
                    if on_result:
                        on_result(i, result)
        except BaseException:
            for fut in pending:
                fut.cancel()
            raise
    LAST["wall_s"] = time.perf_counter() - t0
    return results
