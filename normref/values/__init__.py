"""Numbers that pages state in prose, computed by normref (one fact, one place).

A page writes ``[[value: NAME]]`` and the build inserts what the registered
function returns for that page's language. A test checks every value a page
uses. Value modules in this package are found automatically.
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import Callable

__all__ = ["value", "get", "names", "fmt", "fmt_vec"]

_REGISTRY: dict[str, Callable[[str], str]] = {}
_loaded = False


def value(name: str):
    """Register ``fn(lang) -> str`` as the value called ``name``."""

    def deco(fn):
        if name in _REGISTRY and _REGISTRY[name] is not fn:
            raise ValueError(f"value {name!r} is registered twice")
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


def get(name: str, lang: str = "en") -> str:
    _load_all()
    if name not in _REGISTRY:
        raise KeyError(f"unknown value {name!r}; known values: {', '.join(sorted(_REGISTRY))}")
    out = _REGISTRY[name](lang)
    if not isinstance(out, str):
        raise TypeError(f"value {name!r} must return str, got {type(out).__name__}")
    return out


def fmt(v: float, digits: int = 2) -> str:
    """Format a number the way the pages print it: fixed digits, a real minus sign, no '-0.00'."""
    s = f"{v:.{digits}f}"
    if float(s) == 0:
        s = s.lstrip("-")
    return s.replace("-", "−")


def fmt_vec(vs, digits: int = 2) -> str:
    return "[" + ", ".join(fmt(float(v), digits) for v in vs) + "]"
