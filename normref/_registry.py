"""One small registry shared by figures, values and widget data.

Each of those packages registers named functions from its modules, which are
found automatically (every module of the package not starting with "_"), so
adding a figure, a value or a dataset touches no central list.
"""

from __future__ import annotations

import importlib
import pkgutil


def registered_modules(package: str, path) -> list[str]:
    """The modules a registry loads: every module of the package whose name does not start with "_"."""
    paths = [str(path)] if isinstance(path, (str, bytes)) or hasattr(path, "__fspath__") else list(path)
    return [f"{package}.{info.name}" for info in pkgutil.iter_modules(paths) if not info.name.startswith("_")]


class Registry:
    def __init__(self, package: str, path, kind: str):
        self.package, self.path, self.kind = package, path, kind
        self._items: dict = {}
        self._loaded = False

    def add(self, name: str, item, same=lambda a, b: a is b) -> None:
        if name in self._items and not same(self._items[name], item):
            raise ValueError(f"{self.kind} {name!r} is registered twice")
        self._items[name] = item

    def _load_all(self) -> None:
        if not self._loaded:
            for module in registered_modules(self.package, self.path):
                importlib.import_module(module)
            self._loaded = True

    def names(self) -> list[str]:
        self._load_all()
        return sorted(self._items)

    def get(self, name: str):
        self._load_all()
        try:
            return self._items[name]
        except KeyError:
            raise KeyError(f"unknown {self.kind} {name!r}; known {self.kind}s: {', '.join(sorted(self._items))}") from None
