"""MkDocs' command line, with the notebook converter and jupytext imported only when a notebook is converted
(normsite.lazyimport), and `serve` looking for edits every POLL_S seconds: `make build` (normsite.sitebuild) and
`make serve` run MkDocs through it.

    python hooks/mkdocs_cli.py build|serve …      (the arguments of ``python -m mkdocs``)
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # normsite, beside the hooks
from normsite import lazyimport  # noqa: E402

# How often `serve` looks for edits, in seconds. MkDocs' server polls its watched folders every 0.5 s (watchdog's
# PollingObserver, which MkDocs chose over OS events), a quarter of a second of every edit's wait on average, and
# its command line has no option for it. Measured on an AMD EPYC, 2 cores: an idle `make serve` used 1.6% of a
# core polling every 0.5 s, 4.2% every 0.2 s (7.9% every 0.1 s); a prose edit was served in 1.51 s, then 1.22 s.
POLL_S = 0.2


def poll_faster() -> None:
    """`mkdocs serve` in this process polls every :data:`POLL_S` seconds: its server is made with that interval."""
    import functools

    from mkdocs.commands import serve
    from mkdocs.livereload import LiveReloadServer

    serve.LiveReloadServer = functools.partial(LiveReloadServer, polling_interval=POLL_S)


def main() -> None:
    lazyimport.install()
    if sys.argv[1:2] == ["serve"]:
        poll_faster()
    from mkdocs import __main__ as entry

    sys.argv[0] = "mkdocs"
    try:
        entry.cli()
    finally:
        # MkDocs' logging state removes its handler when collected: under `python -m mkdocs` early at exit, with
        # its __main__ module; imported, as here, while the interpreter tears logging down, where that fails
        # and prints a traceback. The process is ending: leave the handler (logging flushes it at exit).
        entry.State.__del__ = lambda self: None


if __name__ == "__main__":
    main()
