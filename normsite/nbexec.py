"""Notebooks executed with nbclient into normref's cache, keyed by their content: what the notebook pages show.

A notebook is a jupytext percent-format .py file (docs/<lang>/notebooks/NAME.py).
:func:`execute` runs it in a fresh kernel with nbclient, as sphinx-gallery runs
its examples (forked, when the prepare pass runs two or more, from a process that has imported torch and
ipykernel already: normsite.kernelfork; the notebook sees the same): in the notebook's own folder, with ``NORMREF_SITE_BUILD=1`` (a
cell may skip what would make two builds differ), on one torch thread
(``OMP_NUM_THREADS=1``, as the build's pool and the snippets run), and this repository first on
the kernel's path (so the normref it imports is the one the key hashed). Each
cell's consecutive stream outputs are then merged (nbconvert's
CoalesceStreamsPreprocessor): a print loop that a busy kernel flushed in two
messages must not make two builds differ. The executed .ipynb is stored under
:func:`key`, which covers

- the notebook's text (and, for a Chinese one, normsite/cjk.py, which joins its Markdown's soft line breaks);
- the source of the normref modules its code imports, directly or not
  (normref.cache.script_closure, the recipe figures and snippets use), and of this module;
- the versions of normref.cache's libraries and of the Jupyter stack that runs it.

So a warm build executes nothing, and an edit to normref code a notebook does
not import executes no notebook. The MkDocs build then hands mkdocs-jupyter the
stored .ipynb with ``execute: false`` (hooks/normref_site.py): the plugin only
converts it to HTML, through its documented options.

A failing cell raises SiteError naming the notebook, the code cell and the line
of the .py file (normsite.colab.describe_failure). Nothing here needs MkDocs or
the build's state: :func:`execute` runs in a pool worker (normsite.ahead) or in
any other process.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

from normref import cache

from . import SiteError

__all__ = ["KIND", "step_of", "key", "path", "is_cached", "execute", "LIBS", "TIMEOUT_S"]

KIND = "notebooks"  # the cache folder: KIND/KEY/NAME.ipynb
LIBS = ("nbclient", "nbconvert", "nbformat", "jupytext", "ipykernel", "jupyter-client")  # the runner's versions
TIMEOUT_S = 600  # per cell: a cell that hangs fails the build instead of holding it forever
ROOT = Path(__file__).resolve().parent.parent  # the repository: first on the kernel's path


def _own_source() -> bytes:
    return Path(__file__).read_bytes()


def step_of(source: str | Path) -> cache.Step:
    """The cache step of the notebook at ``source`` executed (see the module's docstring); it is stored as
    KIND/KEY/NAME.ipynb, so that mkdocs-jupyter is handed a file with the notebook's own name."""
    from . import notebooks

    source = Path(source)
    inputs = {"notebook": source.read_bytes(), "normsite/nbexec.py": _own_source(), "cell timeout": str(TIMEOUT_S)}
    if notebooks.language(source) == "zh":  # its Markdown as the reader sees it (notebooks.for_reader)
        inputs["normsite/cjk.py"] = (Path(__file__).parent / "cjk.py").read_bytes()
    return cache.step_of(KIND, _name(source), suffix=f"/{source.stem}.ipynb", code=notebooks.notebook_imports(source),
                         libs=cache.LIBS + LIBS, inputs=inputs)


def key(source: str | Path) -> str:
    return step_of(source).key


def path(source: str | Path) -> Path:
    """Where the executed notebook of ``source`` is stored (whether or not it is there yet)."""
    return step_of(source).path.resolve()


def is_cached(source: str | Path) -> bool:
    return path(source).is_file()


def _name(source: Path) -> str:
    """The notebook as a message names it: its path in the repository (docs/en/notebooks/x.py) when it is in it."""
    try:
        return source.resolve().relative_to(ROOT).as_posix()
    except ValueError:
        return str(source)


def _manager_class():
    """nbclient's kernel manager, which starts a kernel forked from the prepare pass's zygote
    (normsite.kernelfork) in place of ipykernel's launcher when the environment names one."""
    from jupyter_client.manager import AsyncKernelManager

    from . import kernelfork

    class Forked(AsyncKernelManager):
        def format_kernel_cmd(self, extra_arguments=None):
            cmd = super().format_kernel_cmd(extra_arguments)
            if os.environ.get(kernelfork.ENV) and cmd[:3] == [sys.executable, "-m", "ipykernel_launcher"]:
                return [sys.executable, kernelfork.__file__, *cmd[3:]]
            return cmd

    return Forked


def _run(source: Path) -> str:
    """Execute the notebook at ``source``; its .ipynb text, outputs merged."""
    import jupytext
    import nbclient
    import nbformat
    from nbclient.exceptions import CellExecutionError
    from nbconvert.preprocessors import CoalesceStreamsPreprocessor
    from traitlets.config import Config

    from . import colab, notebooks

    nb = notebooks.for_reader(jupytext.reads(source.read_text(encoding="utf-8"), fmt="py:percent"), source)
    for i, cell in enumerate(nb.cells):  # nbformat gives new cells random ids: number them (byte-stable)
        cell["id"] = f"cell-{i}"
    kernel = (nb.metadata.get("kernelspec") or {}).get("name") or "python3"
    # One torch thread, as the build's pool runs everything (normsite.pool) and as snippets run
    # (normsite.snippets): a kernel beside an experiment on two cores then does not fight it for them, and
    # its torch runs on one thread whatever the machine's core count.
    env = dict(os.environ, NORMREF_SITE_BUILD="1", OMP_NUM_THREADS="1")
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    # The kernel talks over Unix sockets in a private folder (jupyter_client's ipc transport), not TCP ports
    # on 127.0.0.1: no port to race for, and ipykernel's "running over TCP without encryption" warning
    # (one per notebook) stays out of the build's output.
    with tempfile.TemporaryDirectory(prefix="normref-kernel-") as sockets:
        ipc = Config({"KernelManager": {"transport": "ipc", "ip": os.path.join(sockets, "k")}})
        client = nbclient.NotebookClient(nb, kernel_name=kernel, timeout=TIMEOUT_S, allow_errors=False, config=ipc,
                                         record_timing=False, resources={"metadata": {"path": str(source.parent)}},
                                         kernel_manager_class=_manager_class())
        try:
            client.execute(env=env)
        except CellExecutionError as e:
            raise SiteError(colab.describe_failure(_name(source), source, str(e))) from None
        except Exception as e:  # a kernel that dies or a cell that times out: still name the notebook
            raise SiteError(f"notebook {_name(source)} could not be executed: {type(e).__name__}: {e}") from None
    nb, _ = CoalesceStreamsPreprocessor(enabled=True).preprocess(nb, {})
    return nbformat.writes(nb) + "\n"


def execute(source: str | Path) -> bool:
    """Execute the notebook at ``source`` into the cache unless it is there; True if it was there already.
    A failing cell raises SiteError naming the notebook, the code cell and the line. A build executes each
    notebook once, as one task of its prepare pass (normsite.ahead); it starts after the declared experiments
    its code reaches (normsite.ahead.experiment_tasks), so the kernel reads them from the cache."""
    source = Path(source)
    if not source.is_file():
        raise SiteError(f"notebook {source} not found")
    return cache.step(step_of(source), lambda: _run(source), lambda text: text.encode("utf-8"))[1]


if __name__ == "__main__":  # python -m normsite.nbexec NOTEBOOK.py ...: execute into the cache, print where
    import sys

    for arg in sys.argv[1:]:
        hit = execute(arg)
        print(f"{path(arg)} ({'cached' if hit else 'executed'})")
