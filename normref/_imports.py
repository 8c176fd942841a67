"""The one import scanner: which modules a piece of Python source imports, read from its AST.

Used by the cache key (``normref.cache.closure``: the code a result depends on), by the
install lines (``normsite.install``: the extras a snippet needs) and by the layering tests
(``tests/test_architecture.py``). Nothing is imported to answer.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator

__all__ = ["imported", "statements"]


def statements(node: ast.AST, *, top_level_only: bool = False) -> Iterator[ast.stmt]:
    """Every statement in a tree, nested ones (in functions, classes, ifs, trys...) included; with
    ``top_level_only``, only what runs on import: the module's body and the bodies of its
    if/try/with statements. Imports are statements, so this visits a small fraction of the nodes
    ast.walk would."""
    for field in ("body", "orelse", "finalbody", "handlers", "cases"):
        for child in getattr(node, field, None) or ():
            if isinstance(child, (ast.stmt, ast.excepthandler, ast.match_case)):
                if isinstance(child, ast.stmt):
                    yield child
                if not top_level_only or isinstance(child, (ast.If, ast.Try, ast.With)):
                    yield from statements(child, top_level_only=top_level_only)


def imported(tree: ast.AST, module: str, is_package: bool, *, top_level_only: bool = False,
             is_module: Callable[[str], bool] | None = None) -> set[str]:
    """Every module name the code in ``tree`` imports, relative imports resolved against
    ``module`` (``is_package``: the tree is a package's ``__init__``).

    ``import a.b`` yields a.b and a (the name bound is a: code may use a's own attributes).
    ``from X import n`` yields X.n when that is a module and X when n is a name X defines; with
    no ``is_module`` to tell, it yields both."""
    pkg = module if is_package else module.rpartition(".")[0]
    found: set[str] = set()
    for node in statements(tree, top_level_only=top_level_only):
        if isinstance(node, ast.Import):
            found.update(n for a in node.names for n in (a.name, a.name.split(".")[0]))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = pkg.split(".")
                stem = ".".join(parts[: len(parts) - node.level + 1] + ([node.module] if node.module else []))
            else:
                stem = node.module or ""
            for a in node.names:
                sub = f"{stem}.{a.name}"
                if a.name == "*":
                    found.add(stem)
                elif is_module is None:
                    found.update((stem, sub))
                else:
                    found.add(sub if is_module(sub) else stem)
    return found
