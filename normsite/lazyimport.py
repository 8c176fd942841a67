"""Modules registered to be imported on first use (the standard library's importlib.util.LazyLoader).

mkdocs-jupyter's plugin imports its converter (``mkdocs_jupyter.convert``: nbconvert, mistune, bs4) when
MkDocs loads it, about 0.6 s of every build and every `make serve` start. A warm build never needs it: the
plugin converts a notebook only when its own cache lacks the page (normsite.nbexec executes them ahead).
hooks/mkdocs_cli.py registers it as lazy (:func:`lazy`, :data:`LAZY`) before MkDocs starts: it is imported
on its first attribute access, so a cold build converts exactly as before.

jupytext, which the plugin imports too (0.2 s: nbformat, jsonschema, jupyter_client), cannot be deferred that way:
a plain ``import jupytext`` of a module already in sys.modules reads its ``__spec__``, and a LazyLoader module
loads on any attribute. The plugin uses it only to look for a notebook's front matter in Markdown files, which
mkdocs.yml's "ignore" rules out, and normsite only on a cache miss (normsite.notebooks). So it gets a stand-in
(:func:`deferred`, :data:`DEFERRED`): a module whose ``__spec__`` is its own attribute, which imports the real one
on the first attribute it lacks. (lazy_loader, the scientific Python package, wraps the same LazyLoader, so it
does not help here: hence this class.)
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import types

__all__ = ["LAZY", "lazy", "DEFERRED", "deferred", "install"]

# What mkdocs-jupyter's plugin imports at the top and uses only to convert a notebook.
LAZY = ("mkdocs_jupyter.convert",)
# What it imports at the top and a warm build never uses (see above).
DEFERRED = ("jupytext",)


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


class _Deferred(types.ModuleType):
    """A stand-in for a top-level module in sys.modules, replaced by the module itself on the first attribute
    it lacks (a function, a submodule's ``__path__``); then every attribute read through it is the module's."""

    def __getattr__(self, attr: str):
        name = self.__name__
        if sys.modules.get(name) is self:
            del sys.modules[name]
            importlib.import_module(name)  # puts the module itself in sys.modules
        return getattr(sys.modules[name], attr)


def deferred(name: str) -> None:
    """Put a stand-in for the top-level module ``name`` in sys.modules (nothing when it is imported already):
    ``import name`` gets the stand-in without loading anything; its first use imports the module."""
    if "." in name:
        raise ValueError(f"name must be a top-level module, got {name!r}")
    if name in sys.modules:
        return
    spec = importlib.util.find_spec(name)
    if spec is None:
        raise ModuleNotFoundError(f"no module named {name!r} (make setup)")
    stand_in = _Deferred(name)
    stand_in.__spec__ = spec
    sys.modules[name] = stand_in


def install() -> None:
    """Register every module of :data:`LAZY` as lazy and every one of :data:`DEFERRED` as deferred (before MkDocs
    loads its plugins: hooks/mkdocs_cli.py)."""
    for name in LAZY:
        lazy(name)
    for name in DEFERRED:
        deferred(name)
