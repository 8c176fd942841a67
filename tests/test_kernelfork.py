"""Kernels forked from the prepare pass's zygote (normsite.kernelfork): what a notebook sees is a fresh kernel's,
a kernel whose client is killed goes too, and without a zygote the client becomes ipykernel's launcher."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from pathlib import Path

import pytest

from normsite import ahead, kernelfork, nbexec

# What a notebook can see of the process it runs in (not its pid, nor its parent's).
PROBE = '''# %%
import os, sys
import matplotlib
print(sys.argv[1:2], sys.path[:2], os.getcwd())
print(sorted(k for k in os.environ if k.startswith(("NORMREF", "JPY", "MPL", "OMP"))))
print(matplotlib.get_backend(), sys.stdout.isatty(), __name__)
# %%
import torch
print(torch.get_num_threads())
'''


@pytest.fixture(scope="module")
def zygote(tmp_path_factory):
    """The pass's zygote, torch and all (2 s to load)."""
    proc, path = kernelfork.start(str(tmp_path_factory.mktemp("zygote")))
    yield path
    proc.stdin.close()
    proc.wait(timeout=10)


@pytest.fixture(scope="module")
def light(tmp_path_factory):
    """A zygote that imports a module no kernel or script does, and ipykernel: quick, and what a fork was given
    shows."""
    proc, path = kernelfork.start(str(tmp_path_factory.mktemp("light")), preload=("normsite.cjk", "ipykernel.kernelapp"))
    yield path
    proc.stdin.close()
    proc.wait(timeout=10)


SCRIPT = """import os, sys
print(__name__, sys.argv, sys.path[0] == os.path.dirname(os.path.abspath(__file__)), os.getcwd())
print(sorted(k for k in os.environ if k.startswith("NORMREF")), "normsite.cjk" in sys.modules)
if len(sys.argv) > 1:
    raise ValueError("as asked")
"""


def _python(args, cwd, env):
    import subprocess
    import sys

    return subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=60)


def test_a_forked_script_runs_as_python_runs_it_and_fails_the_same_way(tmp_path, light):
    """`python kernelfork.py --run SCRIPT ARGS` (normsite.snippets in the pass) prints what `python SCRIPT ARGS`
    does, but for what the zygote imported; a failure exits 1 with the script's own frames in its traceback."""
    script = tmp_path / "s.py"
    script.write_text(SCRIPT, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != kernelfork.ENV}
    fresh = _python([str(script)], tmp_path, env)
    forked = _python([kernelfork.__file__, "--run", str(script)], tmp_path, env | {kernelfork.ENV: light})
    assert fresh.returncode == forked.returncode == 0, forked.stderr
    assert forked.stdout == fresh.stdout.replace("] False", "] True"), (forked.stdout, fresh.stdout)
    fresh = _python([str(script), "x"], tmp_path, env)
    forked = _python([kernelfork.__file__, "--run", str(script), "x"], tmp_path, env | {kernelfork.ENV: light})
    assert fresh.returncode == forked.returncode == 1
    assert forked.stderr == fresh.stderr, forked.stderr


# A fresh kernel to compare with, or a second zygote: a few seconds each, so make test only (marker command).
@pytest.mark.command
def test_a_forked_kernel_shows_a_notebook_what_a_fresh_one_does(tmp_path, monkeypatch, zygote):
    src = tmp_path / "probe.py"
    src.write_text(PROBE, encoding="utf-8")
    monkeypatch.delenv(kernelfork.ENV, raising=False)
    fresh = nbexec._run(src)
    monkeypatch.setenv(kernelfork.ENV, zygote)
    forked = nbexec._run(src)
    assert forked == fresh
    assert "module://matplotlib_inline.backend_inline" in fresh and "NORMREF_KERNEL_FORK" not in fresh


BACKEND = """import sys
import matplotlib
import matplotlib.pyplot as plt
print(matplotlib.rcParams["backend"] if "MPLBACKEND" in __import__("os").environ else "", matplotlib.get_backend())
plt.plot([0, 1])
print(type(plt.gcf().canvas).__name__, sorted(m for m in ("torch._dynamo", "matplotlib_inline") if m in sys.modules))
"""


@pytest.mark.command
@pytest.mark.parametrize("backend", [None, "Agg", "svg"])
def test_a_forked_script_draws_with_the_backend_its_environment_names(tmp_path, zygote, backend):
    """The zygote imported matplotlib with no MPLBACKEND; a script forked from it draws with the backend its own
    environment names (the snippets' Agg), or with matplotlib's own choice, as `python SCRIPT` does."""
    script = tmp_path / "b.py"
    script.write_text(BACKEND, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k not in (kernelfork.ENV, "MPLBACKEND")}
    env |= {"MPLBACKEND": backend} if backend else {}
    fresh = _python([str(script)], tmp_path, env)
    forked = _python([kernelfork.__file__, "--run", str(script)], tmp_path, env | {kernelfork.ENV: zygote})
    assert fresh.returncode == forked.returncode == 0, forked.stderr
    assert forked.stdout == fresh.stdout.replace("[]", "['torch._dynamo']"), (forked.stdout, fresh.stdout)


def test_the_kernel_is_forked_from_the_zygote_and_goes_when_its_client_is_killed(monkeypatch, light):
    """The kernel is forked from the zygote (what it imported is there before the first cell), not the process the
    kernel manager started; killing that process, as the kernel manager does with a kernel that will not stop,
    ends it."""
    monkeypatch.setenv(kernelfork.ENV, light)

    async def run():
        km = nbexec._manager_class()(kernel_name="python3")
        await km.start_kernel()
        kc = km.client()
        kc.start_channels()
        await kc.wait_for_ready(timeout=60)
        out = []
        await kc.execute_interactive("import os, sys; print(os.getpid(), 'normsite.cjk' in sys.modules)", timeout=60,
                                     output_hook=lambda m: out.append(m["content"].get("text", "")))
        kc.stop_channels()
        pid, preloaded = "".join(out).split()
        client = km.provisioner.pid
        os.kill(client, signal.SIGKILL)
        km.cleanup_connection_file()
        return int(pid), preloaded, client

    pid, preloaded, client = asyncio.run(run())
    assert preloaded == "True" and pid != client
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and Path(f"/proc/{pid}").exists() and "Z" not in _state(pid):
        time.sleep(0.05)
    assert not Path(f"/proc/{pid}").exists() or "Z" in _state(pid), "the kernel outlived its client"


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(")")[1].split()[0]
    except (FileNotFoundError, IndexError):
        return "Z"


@pytest.mark.command
def test_without_a_reachable_zygote_the_client_becomes_ipykernels_launcher(tmp_path, monkeypatch):
    src = tmp_path / "probe.py"
    src.write_text(PROBE, encoding="utf-8")
    monkeypatch.delenv(kernelfork.ENV, raising=False)
    fresh = nbexec._run(src)
    monkeypatch.setenv(kernelfork.ENV, str(tmp_path / "no-zygote-here"))
    assert nbexec._run(src) == fresh


@pytest.mark.command
def test_the_pass_forks_from_two_runs_and_counts_their_cpu(monkeypatch):
    """Below ahead.FORK_FROM notebooks and snippets no zygote starts; from there one does, named in the
    environment while the pass runs and gone after (a zygote named before, the test session's, named again), and
    its CPU seconds are counted."""
    monkeypatch.delenv(kernelfork.ENV, raising=False)
    with ahead._zygote(ahead.FORK_FROM - 1) as spent:
        assert kernelfork.ENV not in os.environ
    assert spent == {"cpu_s": 0.0}
    with ahead._zygote(ahead.FORK_FROM) as spent:
        path = os.environ[kernelfork.ENV]
        assert os.path.exists(path)
    assert kernelfork.ENV not in os.environ and not os.path.exists(path) and spent["cpu_s"] > 0
    monkeypatch.setenv(kernelfork.ENV, "/the/sessions/zygote")
    with ahead._zygote(ahead.FORK_FROM):
        assert os.environ[kernelfork.ENV] != "/the/sessions/zygote"
    assert os.environ[kernelfork.ENV] == "/the/sessions/zygote"


def test_no_matplotlibrc_where_a_kernel_or_snippet_runs():
    """matplotlib reads a matplotlibrc in the folder it is imported in: the zygote imports it in the checkout's root,
    a fresh kernel in its notebook's folder. With none in the repository both read the same settings."""
    import subprocess

    root = Path(kernelfork.__file__).resolve().parent.parent
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=root, capture_output=True, text=True,
                           check=True).stdout.split()
    assert not [f for f in files if Path(f).name in ("matplotlibrc", ".matplotlibrc")]


def test_the_client_reads_a_pid_and_an_exit_status_that_arrive_together(tmp_path, monkeypatch):
    """A child that exits at once: the zygote's two lines ("pid\\n", then "status\\n") can reach the client in one
    read. A stand-in zygote sends them in one write; the client still returns the status."""
    import socket
    import threading

    path = str(tmp_path / "z.sock")
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(1)

    def zygote():
        conn, _ = server.accept()
        with conn:
            msg, fds, _, _ = socket.recv_fds(conn, 1 << 16, 3)
            for fd in fds:
                os.close(fd)
            conn.sendall(b"4242\n7\n")

    t = threading.Thread(target=zygote, daemon=True)
    t.start()
    monkeypatch.setenv(kernelfork.ENV, path)
    saved = {sig: signal.getsignal(sig) for sig in kernelfork._FORWARDED}
    try:
        assert kernelfork.client(["-f", "x.json"]) == 7
    finally:
        for sig, handler in saved.items():
            signal.signal(sig, handler)
        server.close()
    t.join(timeout=10)
