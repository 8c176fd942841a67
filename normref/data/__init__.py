"""JSON data that the site's widgets read, computed by normref.

A page writes ``[[data: NAME]]``; the build embeds what the registered
function returns (for the page's language) as
``<script type="application/json">`` inside ``<template id="nr-data-NAME">``
(the template keeps Material's instant navigation from running it as a
script), so a widget needs no extra request and works offline and after instant navigation. Data modules in
this package are found automatically.
"""

from __future__ import annotations

import json

from .._registry import Registry

__all__ = ["dataset", "get", "names", "module_of", "to_json"]

_REGISTRY = Registry(__name__, __path__, "dataset")
_MODULES: dict[str, str] = {}  # name -> the module that registered it


def dataset(name: str):
    """Register ``fn(lang) -> JSON-able object`` as the dataset called ``name``."""

    def deco(fn):
        _REGISTRY.add(name, fn)
        _MODULES[name] = fn.__module__
        return fn

    return deco


def names() -> list[str]:
    return _REGISTRY.names()


def module_of(name: str) -> str:
    """The module that registered dataset ``name`` (a module of this package, or one a program plugged in:
    normref._registry.plug); KeyError for an unknown name."""
    _REGISTRY.get(name)
    return _MODULES[name]


def get(name: str, lang: str = "en"):
    return _REGISTRY.get(name)(lang)


def to_json(obj) -> str:
    """Compact, deterministic JSON; numpy scalars and arrays become plain numbers and lists."""

    def default(o):
        if hasattr(o, "tolist"):
            return o.tolist()
        raise TypeError(f"not JSON-serialisable: {type(o).__name__}")

    return json.dumps(obj, ensure_ascii=False, sort_keys=True, separators=(",", ":"), default=default)
