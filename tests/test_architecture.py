"""The layers point one way: normref (numerics) never imports the site layer or MkDocs,
the site layer never imports MkDocs, and the hooks stay thin adapters."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from conftest import ROOT

HOOK_CODE_LINES_MAX = 80  # "a few dozen typed lines": code, not counting docstrings, comments and blank lines


def _modules(package: str) -> dict[str, Path]:
    root = ROOT / package
    out = {}
    for f in sorted(root.rglob("*.py")):
        parts = list(f.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = f
    return out


def imports(module: str, path: Path) -> set[str]:
    """Every module a file imports, top level or inside a function, relative imports resolved."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    pkg = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = pkg.split(".")
                base = base[: len(base) - node.level + 1]
                stem = ".".join(base + ([node.module] if node.module else []))
            else:
                stem = node.module
            found.add(stem)
            found.update(f"{stem}.{a.name}" for a in node.names)
    return found


def _offenders(package: str, banned: tuple[str, ...]) -> list[str]:
    out = []
    for mod, path in _modules(package).items():
        for imp in sorted(imports(mod, path)):
            if imp.split(".")[0] in banned:
                out.append(f"{path.relative_to(ROOT)} imports {imp}")
    return out


def test_normref_imports_neither_the_site_layer_nor_mkdocs():
    assert not _offenders("normref", ("normsite", "mkdocs", "material", "hooks"))


def test_the_site_layer_is_mkdocs_free():
    assert not _offenders("normsite", ("mkdocs", "material", "hooks"))


def test_the_import_scanner_sees_relative_and_lazy_imports(tmp_path):
    f = tmp_path / "m.py"
    f.write_text("from .. import cache\nfrom . import x\n\ndef f():\n    import normsite.build\n", encoding="utf-8")
    got = imports("normref.figures.m", f)
    assert {"normref.cache", "normref.figures.x", "normsite.build"} <= got


def _code_lines(path: Path) -> int:
    src = path.read_text(encoding="utf-8")
    docs: set[int] = set()
    for node in ast.walk(ast.parse(src)):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) and \
                isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
            docs.update(range(body[0].lineno, body[0].end_lineno + 1))
    return sum(1 for i, line in enumerate(src.splitlines(), 1)
               if line.strip() and not line.strip().startswith("#") and i not in docs)


def test_hooks_are_thin_adapters():
    hooks = sorted((ROOT / "hooks").glob("*.py"))
    assert hooks
    total = sum(_code_lines(h) for h in hooks)
    assert total <= HOOK_CODE_LINES_MAX, f"hooks have {total} lines of code; move logic into normsite"


@pytest.mark.parametrize("package", ["normref", "normsite"])
def test_packages_import_without_mkdocs(package):
    """Importing every module of the package works with MkDocs made unimportable."""
    import subprocess
    import sys

    code = ("import sys, importlib, pkgutil\n"
            "class Block:\n"
            "    def find_spec(self, name, path=None, target=None):\n"
            "        if name.split('.')[0] in ('mkdocs', 'material'):\n"
            "            raise ImportError('blocked: ' + name)\n"
            "sys.meta_path.insert(0, Block())\n"
            f"import {package}\n"
            f"for m in pkgutil.walk_packages({package}.__path__, '{package}.'):\n"
            "    importlib.import_module(m.name)\n")
    p = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
