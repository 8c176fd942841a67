"""The build's parallel work: normsite.pool (tasks in priority order, each after the tasks it names), and
normref's one process pool (normref.cores.starmap: ``python -m normref figures --jobs N`` and the
refresh commands).

A figure drawn in another process must be the same bytes as one drawn serially (the
reproducibility test compares whole builds; this compares the ways of drawing),
and a task must start only after the tasks it names (the experiments it reads: normsite.ahead).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from support import ROOT
from normref import cache, cores, figures
from normsite import pool

# One figure that needs no model and no training run: cheap. Both languages and themes: four variants.
CHEAP = ("softmax_saturation",)


def test_parallel_draws_the_same_svg_bytes_as_a_serial_run(built_cache, tmp_path, monkeypatch):
    """The build drew these variants into the session's cache (normally through its pool, normsite.pool);
    normref's render_many draws them again on 1 and 2 processes (a plain process pool), each from a cold cache:
    the same bytes all three ways. In the build tier, where the build has drawn them anyway."""
    jobs = [(name, lang, theme) for name in CHEAP for lang in ("zh", "en") for theme in figures.THEMES]
    drawn = {"pool": [figures.step_of(*j).path.read_bytes() for j in jobs]}
    for n in (1, 2):
        monkeypatch.setenv("NORMREF_CACHE", str(tmp_path / f"cache-{n}"))  # each starts cold
        out = figures.render_many(jobs, n_workers=n)
        assert [hit for _, hit in out] == [False] * len(jobs), f"{n} processes: every variant is drawn"
        drawn[n] = [svg for svg, _ in out]
    # A second call finds every variant in the cache and starts no pool.
    assert [hit for _, hit in figures.render_many(jobs, n_workers=2)] == [True] * len(jobs)
    for job, serial, parallel, pooled in zip(jobs, drawn[1], drawn[2], drawn["pool"]):
        assert serial.startswith(b"<?xml") and serial == parallel == pooled, \
            f"{job}: SVG bytes differ between a serial run, 2 processes and the build's pool"


def test_the_pool_draws_a_figure_into_the_cache(tmp_path, monkeypatch):
    """The build's pool, in the everyday tier: one variant drawn on two workers lands in the cache."""
    monkeypatch.setenv("NORMREF_CACHE", str(tmp_path / "cache"))
    job = (CHEAP[0], "en", "light")
    assert pool.run([(figures.render_task, *job), (pow, 2, 3)], n_workers=2) == [False, 8]
    assert pool.LAST["workers"] == 2 and figures.step_of(*job).path.read_bytes().startswith(b"<?xml")


def test_pool_returns_results_in_task_order_and_raises_a_task_error(monkeypatch):
    monkeypatch.setenv("NORMREF_WORKERS", "2")
    tasks = [(pow, b, 2) for b in range(6)]
    seen = []
    assert pool.run(tasks, on_result=lambda i, r: seen.append(i)) == [b * b for b in range(6)]
    assert sorted(seen) == list(range(6)) and pool.LAST["workers"] == 2
    with pytest.raises(ZeroDivisionError):
        pool.run([(divmod, 1, 1), (divmod, 1, 0)])
    with pytest.raises(TypeError, match="a task is"):
        pool.run([("not a function", 1)])


def test_normrefs_one_process_pool_keeps_order_and_checks_its_count():
    """normref.cores.starmap: the calls' results in order, on 1 or 2 processes alike; a bad count names it."""
    calls = [(b, 2) for b in range(5)]
    assert list(cores.starmap(pow, calls, 1)) == list(cores.starmap(pow, calls, 2)) == [b * b for b in range(5)]
    assert list(cores.starmap(pow, [], 2)) == []
    for bad in (0, -1, True, 1.5):
        with pytest.raises(ValueError, match="processes must be a positive integer"):
            list(cores.starmap(pow, calls, bad))


def test_normref_starts_processes_only_through_cores_starmap():
    """normref keeps one process pool (normref.cores.starmap), for its own commands; nothing else in the
    package starts processes side by side (the build's scheduler is normsite.pool)."""
    offenders = [p.relative_to(ROOT).as_posix() for p in sorted((ROOT / "normref").rglob("*.py"))
                 if p.name != "cores.py" and any(w in p.read_text(encoding="utf-8")
                                                 for w in ("ProcessPoolExecutor", "multiprocessing", "Pool("))]
    assert offenders == [], f"start processes through normref.cores.starmap: {offenders}"


@pytest.mark.parametrize("value", ["two", "0", "-1", "1.5"])
def test_a_bad_normref_workers_is_a_value_error_naming_it(monkeypatch, value):
    monkeypatch.setenv("NORMREF_WORKERS", value)
    with pytest.raises(ValueError, match=f"NORMREF_WORKERS must be a positive integer, got '{value}'"):
        cores.workers()


def test_normref_workers_sets_the_pool_size(monkeypatch):
    assert pool.workers is cores.workers  # one rule for normref's CLI and the build's pool
    monkeypatch.setenv("NORMREF_WORKERS", "3")
    assert cores.workers() == 3
    monkeypatch.delenv("NORMREF_WORKERS")
    assert cores.workers() >= 1


def _after(tmp: str, name: str, hold_s: float, needs: str) -> bool:
    """A pool task: wait ``hold_s`` seconds, mark ``name`` done; had ``needs`` been marked before it started?"""
    from pathlib import Path

    saw = not needs or (Path(tmp) / needs).exists()
    time.sleep(hold_s)
    (Path(tmp) / name).touch()
    return saw


@pytest.mark.parametrize("n", [1, 2])
def test_a_task_starts_only_after_the_tasks_it_names(tmp_path, n):
    """Task 1 comes after task 0 (which takes a while), task 2 after nothing: on two workers task 2 runs beside
    task 0, and task 1 still finds task 0 done; serially, the same order holds."""
    tasks = [(_after, str(tmp_path), "zero", 0.5, ""), (_after, str(tmp_path), "one", 0.0, "zero"),
             (_after, str(tmp_path), "two", 0.0, "")]
    assert pool.run(tasks, n_workers=n, after=[set(), {0}, set()]) == [True, True, True]
    assert pool.LAST["workers"] == n


def test_dependencies_that_cannot_be_met_are_a_value_error():
    with pytest.raises(ValueError, match="form a cycle"):
        pool.run([(pow, 2, 2), (pow, 3, 2)], n_workers=1, after=[{1}, {0}])
    with pytest.raises(ValueError, match="form a cycle"):
        pool.run([(pow, 2, 2), (pow, 3, 2)], n_workers=2, after=[{1}, {0}])
    with pytest.raises(ValueError, match=r"after\[0\] must name other tasks"):
        pool.run([(pow, 2, 2)], after=[{0}])
    with pytest.raises(ValueError, match="one collection of task indices per task"):
        pool.run([(pow, 2, 2)], after=[])


def test_a_worker_reports_the_experiments_a_task_computed(tmp_path, monkeypatch):
    """The pass finds undeclared experiments from this: each task's new "data/..." lines of cache.WHY."""
    monkeypatch.setenv("NORMREF_CACHE", str(tmp_path / "cache"))
    pool.run([(_computes_data, "one"), (pow, 2, 2)], n_workers=2)
    assert pool.LAST["task_data"] == [["data/t one: new"], []]


def _computes_data(name: str) -> bool:
    return cache.step(cache.step_of("data", f"t {name}"), lambda: b"x")[1]


OWNER = r"""
import os, sys, time
from normsite import pool
if __name__ == "__main__":
    pool.run([(os.getpid,), (os.getpid,), (time.sleep, 120), (time.sleep, 120)], n_workers=2,
             on_result=lambda i, r: print(r, flush=True) if i < 2 else None)
"""


@pytest.mark.command  # a process that starts a pool, killed hard (3 s): make test only
def test_workers_exit_when_the_process_that_started_them_is_killed(tmp_path):
    import os
    import signal

    script = tmp_path / "owner.py"
    script.write_text(OWNER)
    owner = subprocess.Popen([sys.executable, str(script)], cwd=ROOT, stdout=subprocess.PIPE, text=True,
                             env=dict(os.environ, PYTHONPATH=str(ROOT)))  # normsite is beside normref, not installed
    try:
        workers = {int(owner.stdout.readline()), int(owner.stdout.readline())}
    finally:
        owner.send_signal(signal.SIGKILL)  # no cleanup of its own: a build stopped hard
        owner.wait(timeout=30)

    def alive(pid):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True

    t0 = time.monotonic()
    while any(alive(p) for p in workers) and time.monotonic() - t0 < 30:
        time.sleep(0.2)
    left = [p for p in workers if alive(p)]
    for p in left:  # do not leave them behind, whatever the result
        os.kill(p, signal.SIGKILL)
    assert not left, "pool workers outlived the process that started them"


@pytest.mark.parametrize("n", [1, 2])
def test_the_caches_counts_include_each_task_once(tmp_path, monkeypatch, n):
    """Serially or on workers, each task's cache lookups are counted once in this process's normref.cache.STATS."""
    monkeypatch.setenv("NORMREF_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(cache, "STATS", {"hit": 0, "miss": 0})
    pool.run([(_computes_data, "a"), (_computes_data, "b")], n_workers=n)
    assert cache.STATS == {"hit": 0, "miss": 2}
    pool.run([(_computes_data, "a"), (_computes_data, "b")], n_workers=n)
    assert cache.STATS == {"hit": 2, "miss": 2}


def test_started_early_the_fork_server_is_the_one_the_pool_forks_from():
    """pool.start() (a cold pass calls it before it plans) starts the standard library's fork server, with torch
    and matplotlib loading in it; the pool's workers are then forked from that very process."""
    from multiprocessing import forkserver

    pool.start()
    server = forkserver._forkserver._forkserver_pid
    assert server is not None
    assert pool.run([(os.getppid,), (os.getppid,)], n_workers=2) == [server, server]


def _imported(name: str) -> bool:  # a pool task: is the module loaded in this worker before the task imports it?
    return name in sys.modules


COLD_SERVER = """
import sys
sys.path[:0] = {path!r}
import test_pool
from normsite import pool
if {cold}:
    pool.start()
print(pool.run([(test_pool._imported, 'torch._dynamo'), (test_pool._imported, 'matplotlib.pyplot')], n_workers=2))
"""


@pytest.mark.command  # a Python process of its own per case, each starting a fork server that loads torch (3-4 s)
@pytest.mark.parametrize("cold", [True, False])
def test_a_cold_builds_fork_server_loads_dynamo_and_an_edits_does_not(cold):
    """pool.start(), which only a cold pass calls, loads COLD_PRELOAD (torch._dynamo, which both workers of a cold
    build import) in the fork server; a pool started by run() alone, an edit's, forks its first worker without
    waiting for it. In a process of its own: a process has one fork server, started once."""
    code = COLD_SERVER.format(path=[str(ROOT), str(ROOT / "tests")], cold=cold)
    p = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    assert p.stdout.split() == [f"[{cold},", "True]"]


def test_a_pass_over_a_cold_cache_starts_the_fork_server_before_it_plans(tmp_path, monkeypatch):
    """No recorded costs: everything is missing, so the fork server loads while the tasks are planned. With costs
    recorded (a later build), or on one worker, it starts only if the pool is used."""
    from normsite import ahead

    calls = []
    monkeypatch.setattr(pool, "start", lambda: calls.append("start"))
    monkeypatch.setattr(ahead, "plan", lambda *a, **k: calls.append("plan") or [])
    monkeypatch.setenv("NORMREF_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("NORMREF_WORKERS", "2")
    ahead.run({})
    assert calls == ["start", "plan"]
    calls.clear()
    monkeypatch.setenv("NORMREF_WORKERS", "1")
    ahead.run({})
    assert calls == ["plan"]
    calls.clear()
    monkeypatch.setenv("NORMREF_WORKERS", "2")
    (cache.folder("prepare") / ahead.COSTS).write_text("{}", encoding="utf-8")
    ahead.run({})
    assert calls == ["plan"]
