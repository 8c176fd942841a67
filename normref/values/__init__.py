"""Numbers that pages state in prose, and the tables they show, computed by normref (one fact, one place).

A page writes ``[[value: NAME]]`` and the build inserts what the registered
value computes for that page's language; ``[[table: NAME]]`` inserts a
:class:`Table` (rows of data: normref computes it, the site layer renders it).
A test checks every value a page uses, and fails for a value no page uses.

Each module of this package is one topic and declares its values as one table,
``{name: compute}``, passed to :func:`register`; ``compute()`` returns the text
(or ``compute(lang)``, for the few that differ between languages). Modules are
found automatically. Value modules import experiments that need torch inside
their functions, so listing the names loads no torch.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from .._registry import Registry

__all__ = ["value", "count", "register", "register_tables", "get", "names", "module_of", "Column", "Table", "table", "table_names",
           "fmt", "fmt_vec"]

from ..bilingual import LANGS  # the one definition
from ._format import count, fmt, fmt_vec  # noqa: F401 (the value modules' helpers, here for them)

_REGISTRY = Registry(__name__, __path__, "value")
_TABLES = Registry(__name__, __path__, "table")
_MODULES: dict[tuple[str, str], str] = {}  # (kind, name) -> the module that registered it


def _takes_lang(fn: Callable, name: str) -> bool:
    """Does compute take ``lang``? Any other parameter must have a default (a loop variable bound early)."""
    params = inspect.signature(fn).parameters
    required = [p for p in params.values() if p.default is inspect.Parameter.empty and p.name != "lang"]
    if required:
        raise TypeError(f"value {name!r}: compute() takes no argument or just lang, "
                        f"got ({', '.join(p.name for p in required)})")
    return "lang" in params


def register(table: Mapping[str, Callable]) -> None:
    """Register a module's values: ``{name: compute}``, compute() or compute(lang) -> str."""
    for name, fn in table.items():
        if not callable(fn):
            raise TypeError(f"value {name!r}: expected a function, got {type(fn).__name__}")
        _REGISTRY.add(name, fn if _takes_lang(fn, name) else (lambda lang, f=fn: f()))
        _MODULES["value", name] = fn.__module__


def value(name: str):
    """Register ``fn(lang) -> str`` as the value called ``name`` (a decorator; :func:`register` takes a table)."""

    def deco(fn):
        _REGISTRY.add(name, fn)
        _MODULES["value", name] = fn.__module__
        return fn

    return deco


def names() -> list[str]:
    return _REGISTRY.names()


def module_of(name: str, kind: str = "value") -> str:
    """The module that registered the value (or, ``kind`` "table", the table) called ``name``: what its
    cache key covers, so that editing one value module recomputes only that module's values."""
    if kind not in ("value", "table"):
        raise ValueError(f"kind must be 'value' or 'table', got {kind!r}")
    (_REGISTRY if kind == "value" else _TABLES).get(name)  # loads the modules; an unknown name raises KeyError
    return _MODULES[kind, name]


def get(name: str, lang: str = "en") -> str:
    if lang not in LANGS:
        raise ValueError(f"lang must be one of {LANGS}, got {lang!r}")
    out = _REGISTRY.get(name)(lang)
    if not isinstance(out, str):
        raise TypeError(f"value {name!r} must return str, got {type(out).__name__}")
    return out


# ---------------------------------------------------------------- tables


@dataclass(frozen=True)
class Column:
    label: str
    align: str = "right"  # "left" or "right"
    code: bool = False  # the cells are code (names of functions)

    def __post_init__(self):
        if self.align not in ("left", "right"):
            raise ValueError(f"column {self.label!r}: align must be 'left' or 'right', got {self.align!r}")


@dataclass(frozen=True)
class Table:
    """A table of a page: column labels in the page's language and rows of formatted cells."""

    columns: tuple[Column, ...]
    rows: tuple[tuple[str, ...], ...]

    def __post_init__(self):
        for row in self.rows:
            if len(row) != len(self.columns):
                raise ValueError(f"a row has {len(row)} cells for {len(self.columns)} columns: {row!r}")


def register_tables(tables: Mapping[str, Callable[[str], Table]]) -> None:
    """Register a module's tables: ``{name: build}``, build(lang) -> Table."""
    for name, fn in tables.items():
        _TABLES.add(name, fn)
        _MODULES["table", name] = fn.__module__


def table_names() -> list[str]:
    return _TABLES.names()


def table(name: str, lang: str = "en") -> Table:
    if lang not in LANGS:
        raise ValueError(f"lang must be one of {LANGS}, got {lang!r}")
    out = _TABLES.get(name)(lang)
    if not isinstance(out, Table):
        raise TypeError(f"table {name!r} must return a values.Table, got {type(out).__name__}")
    return out


# ---------------------------------------------------------------- formatting

