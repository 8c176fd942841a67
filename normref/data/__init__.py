"""JSON data that the site's widgets read, computed by normref.

A page writes ``[[data: NAME]]``; the build embeds what the registered
function returns (for the page's language) as
``<script type="application/json">`` inside ``<template id="nr-data-NAME">``
(the template keeps Material's instant navigation from running it as a
script), so a widget needs no extra request and works offline and after instant navigation. Data modules in
this package are found automatically.
"""

from __future__ import annotations

import importlib
import json
import pkgutil
from typing import Callable

__all__ = ["dataset", "get", "names", "to_json"]

_REGISTRY: dict[str, Callable[[str], object]] = {}
_loaded = False


def dataset(name: str):
    """Register ``fn(lang) -> JSON-able object`` as the dataset called ``name``."""

    def deco(fn):
        if name in _REGISTRY and _REGISTRY[name] is not fn:
            raise ValueError(f"dataset {name!r} is registered twice")
        _REGISTRY[name] = fn
        return fn

    return deco


def _load_all() -> None:
    global _loaded
    if not _loaded:
        for info in pkgutil.iter_modules(__path__):
            if not info.name.startswith("_"):
                importlib.import_module(f"{__name__}.{info.name}")
        _loaded = True


def names() -> list[str]:
    _load_all()
    return sorted(_REGISTRY)


def get(name: str, lang: str = "en"):
    _load_all()
    if name not in _REGISTRY:
        raise KeyError(f"unknown dataset {name!r}; known datasets: {', '.join(sorted(_REGISTRY))}")
    return _REGISTRY[name](lang)


def to_json(obj) -> str:
    """Compact, deterministic JSON; numpy scalars and arrays become plain numbers and lists."""

    def default(o):
        if hasattr(o, "tolist"):
            return o.tolist()
        raise TypeError(f"not JSON-serialisable: {type(o).__name__}")

    return json.dumps(obj, ensure_ascii=False, sort_keys=True, separators=(",", ":"), default=default)
