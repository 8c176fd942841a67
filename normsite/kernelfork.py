"""Jupyter kernels and Python scripts forked from a process that has already imported torch and ipykernel: the
build's notebooks and snippets.

A notebook's kernel is a fresh Python (``python -m ipykernel_launcher -f CONNECTION``), and most of what one of
the build's notebooks costs is that Python importing ipykernel and torch, about 2 s of a notebook's 1.3 to 5 CPU
seconds (measured here: kernel start 0.6 to 0.9 s, ``import torch`` 1.5 s). The prepare pass executes a dozen of
them, so it starts one *zygote* (:func:`serve`) that imports those once, and each kernel is a fork of it, the
way the pass's pool forks its workers from a fork server (normsite.pool). Jupyter has no such launcher (its
extension point, a kernel provisioner, is found through package entry points, which normsite, outside the
wheel, does not have), hence this module.

What a notebook sees is a fresh kernel: the fork runs ipykernel's own launcher code in the folder, environment
and ``sys.path`` the kernel manager gave the kernel's process, with the signal handlers reset; only the imports
are done already. matplotlib reads its backend from ``MPLBACKEND`` when it is imported, and a fresh kernel sets
that variable (ipykernel: its inline backend) before the notebook imports matplotlib. So the zygote imports
matplotlib with no ``MPLBACKEND``, and a fork gives ``rcParams["backend"]`` the value its own environment has by
the time the notebook's or the script's code runs, as matplotlib's import does (:func:`_backend_as_imported`).
(matplotlib also reads a ``matplotlibrc`` in the folder it is imported in: the repository has none, so the
zygote's import and a fresh kernel's read the same settings.) torch reads its thread count at import: the zygote
imports it with ``OMP_NUM_THREADS=1``, as normsite.nbexec runs every kernel.

A snippet (normsite.snippets) runs the same way, ``python kernelfork.py --run SNIPPET`` in place of ``python
SNIPPET``: the fork runs it as ``__main__`` with its folder first on the path, and an uncaught exception prints
the traceback Python would, from the script's own frames. The snippets' ``PYTHONHASHSEED=0`` is the zygote's too.

How a kernel is launched: normsite.nbexec's kernel manager starts this file as a script,
``python kernelfork.py -f CONNECTION`` (:func:`client`), in place of ipykernel's launcher, when
:data:`ENV` names a zygote's socket. That small process sends the zygote its folder, environment, path and
standard streams; the zygote forks; the client then stands in for the kernel: it forwards the signals the kernel
manager sends (an interrupt, a terminate) and exits with the kernel's exit status. A kernel whose client dies
(killed by the kernel manager) exits too. Without a zygote, or if it cannot be reached, the client becomes
ipykernel's launcher (exec), as if nothing stood between.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import sys

ENV = "NORMREF_KERNEL_FORK"  # the zygote's Unix socket, in the environment of the process that runs nbclient
# What the build's notebooks import (measured by profiling the forked kernels of a cold pass on an AMD EPYC, 2 cores:
# matplotlib.pyplot, 0.35 CPU-s in each of the 12 notebooks; torch._dynamo, which the benchmark's accounting imports
# in the two performance notebooks, 1.2 s in each).
PRELOAD = ("numpy", "torch", "torch._dynamo", "ipykernel.kernelapp", "matplotlib.pyplot")
_FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT)


# ---------------------------------------------------------------- the client: what the kernel manager starts


def _fresh(script: str | None, argv: list[str]) -> None:
    """Become what the zygote would have forked, started afresh: ipykernel's launcher, or ``python SCRIPT``."""
    os.environ.pop(ENV, None)
    os.execv(sys.executable, [sys.executable, *(["-m", "ipykernel_launcher"] if script is None else [script]), *argv])


def client(argv: list[str], script: str | None = None) -> int:
    """Have the zygote at :data:`ENV` fork a kernel with ``argv`` (``-f CONNECTION``), or run ``script`` with
    ``argv`` as ``python SCRIPT ARGV`` would, and stand in for it until it exits; its exit status. Without a
    zygote, exec ipykernel's launcher (or Python on the script) instead."""
    path = os.environ.get(ENV)
    if not path:
        _fresh(script, argv)
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.connect(path)
    except OSError:
        conn.close()
        _fresh(script, argv)
    env = {k: v for k, v in os.environ.items() if k != ENV}
    # The path a fresh process has here: `python -m` puts the cwd first, `python SCRIPT` the script's folder, where
    # this file's own folder is now.
    first = os.getcwd() if script is None else os.path.dirname(os.path.abspath(script))
    request = {"argv": argv, "cwd": os.getcwd(), "env": env, "path": [first, *sys.path[1:]], "script": script}
    data = json.dumps(request).encode("utf-8")
    socket.send_fds(conn, [len(data).to_bytes(8, "big") + data], [0, 1, 2])
    # Read line by line through a buffer: a child that exits at once has its pid and its exit status arrive
    # together ("3839\n0\n" in one read failed a cold build).
    lines = conn.makefile("rb")
    got = _line(lines)
    if not got:  # the zygote went away before it forked (its imports failed, say): start afresh
        conn.close()
        _fresh(script, argv)
    pid = int(got)
    for sig in _FORWARDED:
        signal.signal(sig, lambda signum, frame: _forward(pid, signum))
    status = _line(lines)
    return int(status) if status else 1


def _forward(pid: int, signum: int) -> None:
    try:
        os.kill(pid, signum)
    except ProcessLookupError:
        pass


def _line(lines) -> str:
    """The next line the zygote sends (a pid, then an exit status) from ``lines`` (the connection's
    ``makefile("rb")``); "" if it closed the connection first. A signal during the read is retried (PEP 475)."""
    line = lines.readline()
    return line.decode().strip() if line.endswith(b"\n") else ""


# ---------------------------------------------------------------- the zygote


def serve(path: str, preload: tuple[str, ...] = PRELOAD) -> None:
    """Listen on the Unix socket ``path``, import the modules ``preload`` names and fork a kernel for each client,
    until standard input closes (the process that started it has gone)."""
    import importlib
    import selectors

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a Ctrl-C stops the build, whose end then stops this
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(64)  # first: a client that comes while the imports run waits to be accepted
    backend = os.environ.pop("MPLBACKEND", None)  # matplotlib imported as with none set: _backend_as_imported
    for name in preload:
        importlib.import_module(name)
    if backend is not None:
        os.environ["MPLBACKEND"] = backend
    sel = selectors.DefaultSelector()
    sel.register(listener, selectors.EVENT_READ, "accept")
    sel.register(sys.stdin, selectors.EVENT_READ, "owner")
    kernels: dict[int, socket.socket] = {}  # pid -> its client's connection
    while True:
        for key, _ in sel.select(timeout=0.05):
            if key.data == "owner":
                if not sys.stdin.buffer.read1(1):
                    return
            else:
                conn, _ = listener.accept()
                pid = _fork(conn, [listener, *kernels.values()])
                if pid is not None:
                    kernels[pid] = conn
        while kernels:  # reap the kernels that exited, and tell their clients how
            pid, status = os.waitpid(-1, os.WNOHANG)
            if pid == 0:
                break
            conn = kernels.pop(pid, None)
            if conn is not None:
                try:
                    conn.sendall(f"{os.waitstatus_to_exitcode(status)}\n".encode())
                except OSError:
                    pass
                conn.close()


def _fork(conn: socket.socket, others: list[socket.socket]) -> int | None:
    """Read a client's request and fork its kernel or script; the fork's pid (None if the request was broken).
    ``others``: the zygote's sockets the fork does not keep."""
    try:
        msg, fds, _, _ = socket.recv_fds(conn, 1 << 20, 3)
        size = int.from_bytes(msg[:8], "big")
        while len(msg) < 8 + size:
            more = conn.recv(1 << 20)
            if not more:
                raise OSError("the client closed its connection")
            msg += more
        request = json.loads(msg[8:8 + size])
    except (OSError, ValueError):
        conn.close()
        return None
    pid = os.fork()
    if pid == 0:
        try:
            for other in others:
                other.close()
            _become(conn, fds, request)
            if request.get("script") is None:
                _kernel(request)
            else:
                _script(request)
        finally:
            os._exit(1)
    for fd in fds:
        os.close(fd)
    conn.sendall(f"{pid}\n".encode())
    return pid


def _become(conn: socket.socket, fds: list[int], request: dict) -> None:
    """In the fork: take the client's standard streams, folder, environment and path, reset the signal handlers,
    and exit when the client is gone."""
    import threading

    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGCHLD):
        signal.signal(sig, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)  # Python's own, which ipykernel expects
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    sys.stdin = open(0, closefd=False)  # noqa: SIM115 - the kernel's standard streams, as a fresh process has them
    sys.stdout = open(1, "w", closefd=False)  # noqa: SIM115
    sys.stderr = open(2, "w", closefd=False)  # noqa: SIM115
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    sys.path[:] = request["path"]

    def watch() -> None:  # the client gone (killed by the kernel manager): so is the kernel
        while conn.recv(64):
            pass
        os._exit(1)

    threading.Thread(target=watch, daemon=True, name="normsite-kernel-client").start()


def _backend_as_imported() -> None:
    """In the fork, once its environment is the one its code will run in: if the zygote imported matplotlib, give
    it the backend that importing it now would read (matplotlib/__init__.py: ``MPLBACKEND``, if set, becomes
    ``rcParams["backend"]``). The zygote imported it with no ``MPLBACKEND``, so without one there is nothing to do."""
    mpl = sys.modules.get("matplotlib")
    if mpl is not None and os.environ.get("MPLBACKEND"):
        mpl.rcParams["backend"] = os.environ["MPLBACKEND"]


def _exit(code: int) -> None:
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def _script(request: dict) -> None:
    """Run the script as ``python SCRIPT ARGV`` runs it (as ``__main__``, its folder first on the path), and exit
    with its status; an uncaught exception prints its traceback from the script's own frames."""
    import runpy
    import traceback

    script = request["script"]
    sys.argv = [script, *request["argv"]]
    _backend_as_imported()
    try:
        runpy.run_path(script, run_name="__main__")
    except SystemExit as e:
        _exit(e.code if isinstance(e.code, int) else (0 if e.code is None else 1))
    except BaseException as e:
        tb = e.__traceback__
        while tb is not None and tb.tb_frame.f_code.co_filename != script:  # runpy's own frames
            tb = tb.tb_next
        traceback.print_exception(type(e), e, tb or e.__traceback__)
        _exit(1)
    _exit(0)


def _kernel(request: dict) -> None:
    """In the fork: become the kernel a fresh ``python -m ipykernel_launcher`` would be, and exit with it."""
    import ipykernel_launcher

    os.setsid()  # a session of its own, as jupyter_client starts a kernel (start_new_session)
    sys.argv = [ipykernel_launcher.__file__, *request["argv"]]
    from pathlib import Path

    if sys.path and (sys.path[0] == "" or Path(sys.path[0]) == Path.cwd()):  # as ipykernel_launcher does
        del sys.path[0]
    from ipykernel import kernelapp

    code = 0
    try:
        # parent_handle's default is read from the environment when ipykernel is imported (in the zygote): give
        # it the value a fresh kernel would read (the kernel manager's pid, which jupyter_client sets).
        # launch_instance (traitlets) in its three steps: initialize sets MPLBACKEND to ipykernel's inline backend
        # (unless the environment names one), before any cell runs.
        app = kernelapp.IPKernelApp.instance(parent_handle=int(os.environ.get("JPY_PARENT_PID") or 0))
        app.initialize()
        _backend_as_imported()
        app.start()
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    _exit(code)


def start(folder: str, preload: tuple[str, ...] = PRELOAD) -> tuple[object, str]:
    """Start a zygote with its socket in ``folder``: (its process, the socket's path, for :data:`ENV`), once the
    socket is there. It goes on importing ``preload`` (:data:`PRELOAD`); a client that connects meanwhile waits
    for it. Stop it by closing its standard input."""
    import subprocess

    path = os.path.join(folder, "zygote")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONHASHSEED="0", PYTHONPATH=os.pathsep.join(
        [root] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    env.pop(ENV, None)
    proc = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--serve", path, ",".join(preload)],
                            stdin=subprocess.PIPE, env=env)
    import time

    deadline = time.monotonic() + 10
    while not os.path.exists(path) and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)  # it binds the socket before its imports: tens of milliseconds
    return proc, path


if __name__ == "__main__":
    if sys.argv[1:2] == ["--serve"]:
        sys.path[0] = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # not normsite/ itself
        serve(sys.argv[2], tuple(m for m in sys.argv[3].split(",") if m))
    elif sys.argv[1:2] == ["--run"]:
        sys.exit(client(sys.argv[3:], script=os.path.abspath(sys.argv[2])))
    else:
        sys.exit(client(sys.argv[1:]))
