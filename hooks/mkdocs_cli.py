"""MkDocs' command line, with the notebook converter and jupytext imported only when a notebook is converted
(normsite.lazyimport): `make build` (normsite.sitebuild) and `make serve` run MkDocs through it.

    python hooks/mkdocs_cli.py build|serve …      (the arguments of ``python -m mkdocs``)
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # normsite, beside the hooks
from normsite.lazyimport import DEFERRED, LAZY, deferred, lazy  # noqa: E402


def main() -> None:
    for name in LAZY:
        lazy(name)
    for name in DEFERRED:
        deferred(name)
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
