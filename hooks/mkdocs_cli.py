"""MkDocs' command line, with the notebook converter imported only when a notebook is converted.

    python hooks/mkdocs_cli.py build|serve …      (the arguments of ``python -m mkdocs``)

mkdocs-jupyter's plugin imports its converter (``mkdocs_jupyter.convert``: nbconvert, mistune, bs4) when
MkDocs loads it, about 0.6 s of every build and every `make serve` start. A warm build never needs it: the
plugin converts a notebook only when its own cache lacks the page (normsite.nbexec executes them ahead).
So this entry point registers the converter as a lazy module (the standard library's
importlib.util.LazyLoader) before MkDocs starts: it is imported on its first attribute access, so a cold
build converts exactly as before. (jupytext, which the plugin imports too, cannot be deferred this way: a
plain ``import jupytext`` of a module already in sys.modules reads its ``__spec__``, which loads it.) `make build` (normsite.sitebuild) and `make serve` run MkDocs
through it; plain ``mkdocs build`` still works, and only pays the import.
"""

from __future__ import annotations

import importlib.util
import sys

__all__ = ["LAZY", "lazy", "main"]

# What mkdocs-jupyter's plugin imports at the top and uses only to convert a notebook.
LAZY = ("mkdocs_jupyter.convert",)


def lazy(name: str) -> None:
    """Register ``name`` as a module imported on first use (nothing when it is imported already)."""
    if name in sys.modules:
        return
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None:
        raise ModuleNotFoundError(f"no module named {name!r} (is mkdocs-jupyter installed? make setup)")
    spec.loader = importlib.util.LazyLoader(spec.loader)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    parent, _, child = name.rpartition(".")
    if parent:
        setattr(sys.modules[parent], child, module)


def main() -> None:
    for name in LAZY:
        lazy(name)
    from mkdocs import __main__ as entry

    sys.argv[0] = "mkdocs"
    try:
        entry.cli()
    finally:
        # MkDocs' logging state (entry.State) removes its handler when it is collected. Run as __main__
        # (`python -m mkdocs`) it goes with that module, early at exit; imported, as here, only while the
        # interpreter tears the logging module down, and its removal then fails, printing a traceback. The
        # process is ending: leave the handler (logging flushes it at exit).
        entry.State.__del__ = lambda self: None


if __name__ == "__main__":
    main()
