"""One small registry shared by figures, values and widget data.

Each of those packages registers named functions from its modules, which are
found automatically (every module of the package not starting with "_"), so
adding a figure, a value or a dataset touches no central list.

A program built on normref may add modules of its own to a registry with :func:`plug` (the site adds the
values and widget data of its content): they are imported by name when the registry loads, so normref
never imports them itself.
"""

from __future__ import annotations

import functools
import importlib
import os
import pkgutil


def _paths(path) -> tuple[str, ...]:
    return (str(path),) if isinstance(path, (str, bytes)) or hasattr(path, "__fspath__") else tuple(map(str, path))


def _mtimes(paths: tuple[str, ...]) -> tuple:
    """The folders' mtimes: a module added to or removed from a folder changes its mtime."""
    return tuple(os.stat(p).st_mtime_ns if os.path.isdir(p) else None for p in paths)


def registered_modules(package: str, path) -> list[str]:
    """The modules a registry loads: every module of the package whose name does not start with "_"."""
    paths = _paths(path)
    return list(_listed(package, paths, _mtimes(paths)))


@functools.lru_cache(maxsize=64)
def _listed(package: str, paths: tuple[str, ...], _mtimes: tuple) -> tuple[str, ...]:
    # Every registry lookup lists its package (a build's keys make ~1,500 lookups): listing the folder each
    # time took 0.8 s of the 1.7 s that computing every key took; a stat of the folder is enough to know (as
    # importlib's own FileFinder knows when to list a folder again).
    return tuple(f"{package}.{info.name}" for info in pkgutil.iter_modules(list(paths))
                 if not info.name.startswith("_"))


# {registry package: modules outside it that register into it}, added by plug().
_PLUGGED: dict[str, tuple[str, ...]] = {}


def plug(package: str, *modules: str) -> None:
    """Load ``modules`` (importable names, outside normref) with the registry of ``package``
    ("normref.values", "normref.data"), after the package's own modules."""
    if not isinstance(package, str) or not package.startswith("normref."):
        raise ValueError(f"package must be a registry package of normref such as 'normref.values', got {package!r}")
    for m in modules:
        if not isinstance(m, str) or not m or m.startswith("normref."):
            raise ValueError(f"modules must be importable names outside normref, got {m!r}")
    _PLUGGED[package] = tuple(dict.fromkeys(_PLUGGED.get(package, ()) + modules))


def plugged(package: str) -> tuple[str, ...]:
    """The modules :func:`plug` added to the registry of ``package``."""
    return _PLUGGED.get(package, ())


class Registry:
    def __init__(self, package: str, path, kind: str):
        self.package, self.path, self.kind = package, path, kind
        self._items: dict = {}
        self._loaded: set[str] = set()
        self._seen: tuple | None = None  # what the last _load_all saw: the folders' mtimes and the plugged modules

    def add(self, name: str, item, same=lambda a, b: a is b) -> None:
        if name in self._items and not same(self._items[name], item):
            raise ValueError(f"{self.kind} {name!r} is registered twice")
        self._items[name] = item

    def _load_all(self) -> None:
        paths = _paths(self.path)
        seen = (_mtimes(paths), plugged(self.package))
        if seen == self._seen:
            return
        for module in [*_listed(self.package, paths, seen[0]), *plugged(self.package)]:
            if module not in self._loaded:
                importlib.import_module(module)
                self._loaded.add(module)
        self._seen = seen

    def names(self) -> list[str]:
        self._load_all()
        return sorted(self._items)

    def get(self, name: str):
        self._load_all()
        try:
            return self._items[name]
        except KeyError:
            raise KeyError(f"unknown {self.kind} {name!r}; known {self.kind}s: {', '.join(sorted(self._items))}") from None
