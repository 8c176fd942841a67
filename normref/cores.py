"""How many processes a command may run at once (``NORMREF_WORKERS``, else the cores it may use), and
normref's one way of using them: :func:`starmap`, a plain process pool.

normref's commands that run independent work side by side (``python -m normref figures``, the placement
lab's and the norm-free measurement's refresh commands) all go through :func:`starmap`; a site build
schedules its own work (normsite.pool) and calls none of them.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator

__all__ = ["workers", "starmap"]


def workers() -> int:
    """NORMREF_WORKERS if set (a positive integer, else ValueError naming it), else the cores this
    process may run on. ``python -m normref figures`` and the build's pool (normsite.pool) size by it."""
    env = os.environ.get("NORMREF_WORKERS", "").strip()
    if env:
        try:
            n = int(env)
        except ValueError:
            raise ValueError(f"NORMREF_WORKERS must be a positive integer, got {env!r}") from None
        if n < 1:
            raise ValueError(f"NORMREF_WORKERS must be a positive integer, got {env!r}")
        return n
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _one_torch_thread() -> None:
    """A worker's start: torch on one thread, as a serial run computes."""
    import torch

    torch.set_num_threads(1)


def starmap(fn: Callable, calls: Iterable[tuple], processes: int | None = None, *, fresh: bool = False) -> Iterator:
    """``fn(*args)`` for each ``args`` of ``calls``, yielded in the calls' order (each once it and those before it are done), on ``processes``
    processes at once (default :func:`workers`; at most one per call). Each runs torch on one thread, so the
    results are those a serial run computes; with one process the calls run here, in order, on one thread.
    The workers are fresh interpreters (spawn): they inherit no thread of this process, and see its
    environment (NORMREF_CACHE). ``fn`` is a module-level function and ``args`` are picklable. ``fresh``: each
    call in a process of its own, even with one process (what a call loads, a model say, is not left for the
    next; the committed results' refresh times each so). A generator: a bad ``processes`` is a ValueError at
    the first result asked for.

    Python's ProcessPoolExecutor does the work; this only fixes how normref uses it (the start method and
    the thread setting), so that its three commands cannot drift apart."""
    from .experiments import one_thread

    calls = [tuple(c) for c in calls]
    if processes is not None and (isinstance(processes, bool) or not isinstance(processes, int) or processes < 1):
        raise ValueError(f"processes must be a positive integer, got {processes!r}")
    n = min(processes or workers(), len(calls))
    if n <= 1 and not fresh:
        with one_thread():
            for c in calls:
                yield fn(*c)
        return
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(max(n, 1), mp_context=multiprocessing.get_context("spawn"), initializer=_one_torch_thread,
                             max_tasks_per_child=1 if fresh else None) as ex:
        yield from ex.map(fn, *zip(*calls))
