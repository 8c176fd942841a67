"""Numbers that pages state in prose, computed by normref (one fact, one place).

A page writes ``[[value: NAME]]`` and the build inserts what the registered
function returns for that page's language. A test checks every value a page
uses. Value modules in this package are found automatically.
"""

from __future__ import annotations

from .._registry import Registry

__all__ = ["value", "get", "names", "fmt", "fmt_vec"]

_REGISTRY = Registry(__name__, __path__, "value")


def value(name: str):
    """Register ``fn(lang) -> str`` as the value called ``name``."""

    def deco(fn):
        _REGISTRY.add(name, fn)
        return fn

    return deco


def names() -> list[str]:
    return _REGISTRY.names()


def get(name: str, lang: str = "en") -> str:
    out = _REGISTRY.get(name)(lang)
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
