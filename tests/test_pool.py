"""The build's parallel work: normsite.pool, normsite.locks (the cache's per-entry locks in a build), and
normref's one process pool (normref.cores.starmap: ``python -m normref figures --jobs N`` and the
refresh commands).

A figure drawn in another process must be the same bytes as one drawn serially (the
reproducibility test compares whole builds; this compares the ways of drawing),
and a missing cache entry that two processes of a build want at once must be computed once.
"""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from support import ROOT
from normref import cache, cores, figures
from normsite import locks, pool

# Two figures that need no model and no training run: cheap, and each from a different module.
CHEAP = ("scale_invariance", "softmax_saturation")


def test_parallel_draws_the_same_svg_bytes_as_a_serial_run(tmp_path, monkeypatch):
    """normref's render_many on 1 and 2 processes (a plain process pool) and the build's pool all draw the
    same bytes, each from a cold cache."""
    jobs = [(name, lang, theme) for name in CHEAP for lang in ("zh", "en") for theme in figures.THEMES]
    drawn = {}
    for n in (1, 2):
        monkeypatch.setenv("NORMREF_CACHE", str(tmp_path / f"cache-{n}"))  # each starts cold
        out = figures.render_many(jobs, n_workers=n)
        assert [hit for _, hit in out] == [False] * len(jobs), f"{n} processes: every variant is drawn"
        drawn[n] = [svg for svg, _ in out]
    # A second call finds every variant in the cache and starts no pool.
    assert [hit for _, hit in figures.render_many(jobs, n_workers=2)] == [True] * len(jobs)
    monkeypatch.setenv("NORMREF_CACHE", str(tmp_path / "cache-pool"))
    assert pool.run([(figures.render_task, *j) for j in jobs], n_workers=2) == [False] * len(jobs)
    assert pool.LAST["workers"] == 2 and pool.LAST["tasks"] == len(jobs)
    drawn["pool"] = [figures.step_of(*j).path.read_bytes() for j in jobs]
    for job, serial, parallel, pooled in zip(jobs, drawn[1], drawn[2], drawn["pool"]):
        assert serial.startswith(b"<?xml") and serial == parallel == pooled, \
            f"{job}: SVG bytes differ between a serial run, 2 processes and the build's pool"


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


# A process of a build (it imports normsite, which installs the locks) that asks the cache for entry t/k;
# its compute() records that it ran, and (for the first process) holds the entry until the test lets it go.
ASKER = r"""
import sys, time
from pathlib import Path
from normref import cache
import normsite.locks
tmp, hold = Path(sys.argv[1]), sys.argv[2] == "hold"

def compute():
    with (tmp / "computed").open("a") as f:
        f.write("x")
    (tmp / "computing").touch()
    while hold and not (tmp / "release").exists():
        time.sleep(0.02)
    return b"the result"

print("asking", flush=True)
value, hit = cache.step(cache.step_of("t", "k"), compute)
print(value.decode(), hit, normsite.locks.STATS["waited"], flush=True)
"""


def _wait_for(path, what, timeout=60):
    t0 = time.monotonic()
    while not path.exists():
        assert time.monotonic() - t0 < timeout, f"timed out waiting for {what}"
        time.sleep(0.02)


def test_a_missing_entry_two_processes_want_is_computed_once(tmp_path, monkeypatch):
    monkeypatch.setenv("NORMREF_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("PYTHONPATH", str(ROOT))  # normsite is beside normref, not installed
    script = tmp_path / "ask.py"
    script.write_text(ASKER)

    def start(mode):
        return subprocess.Popen([sys.executable, str(script), str(tmp_path), mode], cwd=ROOT, text=True,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)

    first = start("hold")
    try:
        _wait_for(tmp_path / "computing", "the first process to start computing")
        # Here, in a pool worker's mode, the held entry is Busy at once instead of a wait.
        assert cache.GUARD is locks.locked  # this process imported normsite
        monkeypatch.setattr(locks, "WAIT_FOR_OTHERS", False)
        with pytest.raises(locks.Busy, match="being computed by another process"):
            with cache.guard("t", cache.step_of("t", "k").key):
                pass
        second = start("wait")
        assert second.stdout.readline().strip() == "asking"
        time.sleep(2)  # long enough for the second to find the entry missing and block on its lock
    finally:
        (tmp_path / "release").touch()
    out1, err1 = first.communicate(timeout=60)
    out2, err2 = second.communicate(timeout=60)
    assert first.returncode == 0, err1
    assert second.returncode == 0, err2
    assert out1.split("\n")[1] == "the result False 0"  # computed it
    assert out2.strip() == "the result True 1"  # waited for it, then read it
    assert (tmp_path / "computed").read_text() == "x", "computed more than once"
    assert cache.step_of("t", "k").path.read_bytes() == b"the result"


def _needs_the_shared_entry(tmp: str, hold_s: float) -> bool:
    """A pool task that needs cache entry t/shared; computing it takes ``hold_s`` seconds. Was it cached?"""
    from pathlib import Path

    def compute():
        with (Path(tmp) / "computed").open("a") as f:
            f.write("x")
        time.sleep(hold_s)
        return b"shared"

    return cache.step(cache.step_of("t", "shared"), compute)[1]


def test_a_task_that_meets_a_locked_entry_is_requeued_and_the_entry_computed_once(tmp_path, monkeypatch):
    """Two tasks of the pool need one missing entry: one computes it; the other meets its lock, goes to the
    back of the queue (Busy, not a wait), and on its second turn waits and reads what the first stored."""
    monkeypatch.setenv("NORMREF_CACHE", str(tmp_path / "cache"))
    tasks = [(_needs_the_shared_entry, str(tmp_path), 3.0)] * 2
    assert sorted(pool.run(tasks, n_workers=2)) == [False, True]
    assert pool.LAST["requeued"] == 1 and pool.LAST["workers"] == 2
    assert (tmp_path / "computed").read_text() == "x", "the entry was computed more than once"
    assert cache.step_of("t", "shared").path.read_bytes() == b"shared"


OWNER = r"""
import os, sys, time
from normsite import pool
if __name__ == "__main__":
    pool.run([(os.getpid,), (os.getpid,), (time.sleep, 120), (time.sleep, 120)], n_workers=2,
             on_result=lambda i, r: print(r, flush=True) if i < 2 else None)
"""


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
