"""Modules registered to be imported on first use (the standard library's importlib.util.LazyLoader).

mkdocs-jupyter's plugin imports its converter (``mkdocs_jupyter.convert``: nbconvert, mistune, bs4) when
MkDocs loads it, about 0.6 s of every build and every `make serve` start. A warm build never needs it: the
plugin converts a notebook only when its own cache lacks the page (normsite.nbexec executes them ahead).
hooks/mkdocs_cli.py registers it as lazy (:func:`lazy`, :data:`LAZY`) before MkDocs starts: it is imported
on its first attribute access, so a cold build converts exactly as before. (jupytext, which the plugin
imports too, cannot be deferred this way: a plain ``import jupytext`` of a module already in sys.modules
reads its ``__spec__``, which loads it.)
"""

from __future__ import annotations

import importlib.util
import sys

__all__ = ["LAZY", "lazy"]

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
