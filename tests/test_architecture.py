"""The layers point one way: normref (numerics) never imports the site layer, its content, pydantic or
MkDocs; the site's content (normsite.content) imports normref and itself, never the rest of the site
layer; the site layer never imports MkDocs; and the hooks stay thin adapters.

    normref  <-  normsite.content  <-  normsite (the rest)  <-  hooks
"""

from __future__ import annotations

import ast
import os
from pathlib import Path

import pytest

from normref._imports import imported
from support import ROOT



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
    """Every module a file imports, top level or inside a function, relative imports resolved
    (normref._imports, the scanner the cache key and the install lines use)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    return imported(tree, module, path.name == "__init__.py")


def _offenders(package: str, banned: tuple[str, ...]) -> list[str]:
    out = []
    for mod, path in _modules(package).items():
        for imp in sorted(imports(mod, path)):
            if imp.split(".")[0] in banned:
                out.append(f"{path.relative_to(ROOT)} imports {imp}")
    return out


# What the reader's normref must never import: the site layer (its content included), the site's schema
# library and the site's other libraries, MkDocs. Its wheel requires numpy and PyYAML only (pyproject.toml).
NOT_IN_NORMREF = ("normsite", "hooks", "mkdocs", "material", "pydantic", "jieba", "genanki")
CONTENT = "normsite.content"
# The content modules that register into normref's registries (plugged in by `import normsite`), and the
# one that validates normref's figure texts: the others are loaders, which the MkDocs process imports, so
# they import none of the modules it must not (normsite.prepare.HEAVY).
CONTENT_REGISTERS = {"normsite.content.values", "normsite.content.datasets"}
CONTENT_HEAVY_OK = CONTENT_REGISTERS | {"normsite.content.figure_texts"}


def test_normref_imports_neither_the_site_layer_nor_pydantic_nor_mkdocs():
    assert not _offenders("normref", NOT_IN_NORMREF)


def _in_content(module: str) -> bool:
    return module == CONTENT or module.startswith(CONTENT + ".")


def test_the_content_package_imports_normref_and_itself_only():
    """normsite.content sits between normref and the rest of the site layer: it never imports the site
    layer's other modules (they import it), and its loaders import no heavy module of normref."""
    from normsite.prepare import HEAVY

    found = []
    for mod, path in _modules("normsite").items():
        if not _in_content(mod):
            continue
        for imp in sorted(imports(mod, path)):
            if imp.split(".")[0] == "normsite" and imp != "normsite" and not _in_content(imp):
                found.append(f"{path.relative_to(ROOT)} imports {imp} (the site layer imports the content, not the reverse)")
            if mod not in CONTENT_HEAVY_OK and any(imp == h or imp.startswith(h + ".") for h in HEAVY):
                found.append(f"{path.relative_to(ROOT)} imports {imp}, which the MkDocs process must not import")
    assert not found, "\n".join(found)
    assert {m for m in _modules("normsite") if _in_content(m)} >= CONTENT_REGISTERS | CONTENT_HEAVY_OK


def test_the_site_plugs_its_content_into_normrefs_registries():
    """normref's registries find the content's values and datasets only in a process that imported normsite
    (normref._registry.plug): normref names none of them."""
    import normsite  # noqa: F401
    from normref import _registry

    assert set(_registry.plugged("normref.values")) | set(_registry.plugged("normref.data")) == CONTENT_REGISTERS
    from normref import data, values

    assert values.module_of("practice.n_cards") == "normsite.content.values"
    assert {data.module_of(n) for n in ("glossary", "quiz", "cards")} == {"normsite.content.datasets"}


def test_normref_imports_and_loads_its_registries_without_pydantic_or_the_site(tmp_path):
    """Every module of normref imports with pydantic, normsite and jieba made unimportable, and its figure
    texts, values and datasets load: what a reader who installed the wheel alone has."""
    import subprocess
    import sys

    code = ("import sys, importlib, pkgutil\n"
            "class Block:\n"
            "    def find_spec(self, name, path=None, target=None):\n"
            f"        if name.split('.')[0] in {NOT_IN_NORMREF!r}:\n"
            "            raise ImportError('blocked: ' + name)\n"
            "sys.meta_path.insert(0, Block())\n"
            "import normref\n"
            "for m in pkgutil.walk_packages(normref.__path__, 'normref.'):\n"
            "    importlib.import_module(m.name)\n"
            "from normref import data, figures, labels, values\n"
            "figures.texts(); labels.texts()\n"
            "print(len(values.names()), len(data.names()))\n")
    p = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=300,
                       env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert p.returncode == 0, p.stderr[-2000:]
    n_values, n_data = map(int, p.stdout.split())
    assert n_values > 100 and n_data >= 4, p.stdout


def test_the_site_layer_is_mkdocs_free():
    assert not _offenders("normsite", ("mkdocs", "material", "hooks"))


def test_the_import_scanner_sees_relative_and_lazy_imports(tmp_path):
    f = tmp_path / "m.py"
    f.write_text("from .. import cache\nfrom . import x\n\ndef f():\n    import normsite.build\n", encoding="utf-8")
    got = imports("normref.figures.m", f)
    assert {"normref.cache", "normref.figures.x", "normsite.build"} <= got


# normref's every module imports with MkDocs (and the rest of NOT_IN_NORMREF) unimportable in
# test_normref_imports_and_loads_its_registries_without_pydantic_or_the_site, in a process of its own as here.
@pytest.mark.parametrize("package", ["normsite"])
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


def import_graph(packages=("normref", "normsite")) -> dict[str, set[str]]:
    """{module: the first-party modules it imports}, every import counted (top level and inside
    functions). A registry's run-time imports of its package's modules are not edges: a package
    that loads its modules by name does not make a cycle with them."""
    mods: dict[str, Path] = {}
    for p in packages:
        mods.update(_modules(p))
    return {m: {i for i in _edges(m, path, mods) if i != m} for m, path in mods.items()}


def _edges(module: str, path: Path, mods) -> set[str]:
    """The modules a file depends on. ``from pkg import sub`` (a submodule) depends on sub, not on
    pkg's own code: the parent package is imported first anyway, and that is not a cycle."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    return imported(tree, module, path.name == "__init__.py", is_module=lambda m: m in mods) & set(mods)


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle as [a, b, ..., a], or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(m: str) -> list[str] | None:
        state[m] = 1
        path.append(m)
        for n in sorted(graph.get(m, ())):
            if state.get(n) == 1:
                return path[path.index(n):] + [n]
            if n not in state and (found := visit(n)):
                return found
        path.pop()
        state[m] = 2
        return None

    for m in sorted(graph):
        if m not in state and (found := visit(m)):
            return found
    return None


def test_no_import_cycle():
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_the_cycle_check_sees_a_lazy_cycle(tmp_path):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("def measure():\n    from .m import f\n    return f()\n", encoding="utf-8")
    (pkg / "m.py").write_text("from . import spec\n", encoding="utf-8")
    mods = {"pkg", "pkg.m"}
    graph = {"pkg": _edges("pkg", pkg / "__init__.py", mods), "pkg.m": _edges("pkg.m", pkg / "m.py", mods)}
    assert find_cycle(graph) == ["pkg", "pkg.m", "pkg"]
    # Importing a sibling submodule through the package is no cycle.
    (pkg / "m.py").write_text("from . import n\n", encoding="utf-8")
    (pkg / "n.py").write_text("X = 1\n", encoding="utf-8")
    mods = {"pkg", "pkg.m", "pkg.n"}
    graph = {m: _edges(m, pkg / ("__init__.py" if m == "pkg" else m[4:] + ".py"), mods) - {m} for m in mods}
    assert graph["pkg.m"] == {"pkg.n"} and find_cycle(graph) is None


def test_the_directive_grammar_is_written_once():
    """Every reader of [[KIND: NAME]] builds its pattern from normsite.content.grammar; no other module writes a
    regular expression for a directive (the card bank's digit check masks any [[…]] whole: not a directive reader)."""
    allowed = {"normsite/content/grammar.py", "normsite/content/cards.py:_NOT_PROSE"}
    found = []
    for package in ("normref", "normsite"):
        for path in sorted((ROOT / package).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Constant) and isinstance(node.value, str) and r"\[\[" in node.value:
                    target = rel
                    if rel == "normsite/content/cards.py" and node.value.startswith(r"\[\[[^\]]*\]\]|"):
                        target = f"{rel}:_NOT_PROSE"
                    if target not in allowed:
                        found.append(f"{rel}:{node.lineno}: {node.value[:60]}")
    assert not found, "directive patterns outside normsite/content/grammar.py:\n" + "\n".join(found)


def test_the_directive_grammar_names_kind_and_name():
    from normsite.content.grammar import names, pattern

    both = pattern("snippet", "snippet-code")
    assert [m.group("kind", "name") for m in both.finditer("[[snippet-code: a.py]] [[snippet:b.py ]]")] == \
        [("snippet-code", "a.py"), ("snippet", "b.py")]
    assert pattern("value").findall("[[value: x]] [[value]] [[table: t]]") == [("value", "x")]
    optional = pattern("value", "quiz", named=None)
    assert [m.group("kind", "name") for m in optional.finditer("[[quiz]] [[value: y]]")] == [("quiz", None), ("value", "y")]
    assert pattern("quiz", named=False).fullmatch("[[quiz]]") and not pattern("quiz", named=False).search("[[quiz: x]]")
    line = pattern("snippet", at_line_start=True)
    assert [m.group("indent", "name") for m in line.finditer("    [[snippet: a.py]]\ntext [[snippet: b.py]]")] == [("    ", "a.py")]
    assert names("[[value: a]] and [[value: b]], [[figure: c]], [[value: a]]", "value") == ["a", "b", "a"]
    with pytest.raises(ValueError, match="kinds must be"):
        pattern()
    with pytest.raises(ValueError, match="kinds must be"):
        pattern("Value")
    with pytest.raises(TypeError, match="named must be"):
        pattern("value", named="yes")


# ---------------------------------------------------------------- complexity

MAX_COMPLEXITY = 15  # issue U: no function of the site layer or the hooks above McCabe complexity 15


class _EveryGraph(dict):
    """mccabe keys its graphs by name, so a second ``def x`` (a property's setter) would hide the first:
    keyed by name and line here, every function is measured."""

    def __setitem__(self, name, graph):
        super().__setitem__((name, graph.lineno), graph)


def complexities(path: Path) -> list[tuple[int, str, int]]:
    """(line, name, complexity) of each function in a file, as mccabe (flake8's C901) measures it: the
    PathGraphingAstVisitor that mccabe.get_code_complexity runs. A nested function counts toward the
    function around it, and a statement with branches at module level is measured as one ("If 12")."""
    import mccabe

    visitor = mccabe.PathGraphingAstVisitor()
    visitor.graphs = _EveryGraph()
    visitor.preorder(ast.parse(path.read_text(encoding="utf-8"), str(path)), visitor)
    return sorted((g.lineno, g.entity, g.complexity()) for g in visitor.graphs.values())


def too_complex(paths, root: Path = ROOT, limit: int = MAX_COMPLEXITY) -> list[str]:
    """``file:line name complexity`` (the file relative to ``root``) for each function of ``paths`` above ``limit``."""
    return [f"{path.relative_to(root).as_posix()}:{line} {name} {n}"
            for path in paths for line, name, n in complexities(path) if n > limit]


def test_no_function_of_the_site_layer_or_the_hooks_is_above_complexity_15():
    found = too_complex(sorted(p for package in ("normsite", "hooks") for p in (ROOT / package).rglob("*.py")))
    assert not found, f"above McCabe complexity {MAX_COMPLEXITY} (split into named helpers):\n" + "\n".join(found)


def test_the_complexity_check_counts_branches_and_closures_and_sees_a_getter_beside_its_setter(tmp_path):
    """mccabe's own numbers (python -m mccabe) on a file written here: a closure's branch counts toward its
    function, and a property's setter does not hide its getter."""
    f = tmp_path / "m.py"
    branches = "".join(f"    if x == {i}:\n        return {i}\n" for i in range(15))
    f.write_text("def flat(x):\n" + branches + "    return -1\n\n"
                 "def outer(x):\n    def inner(y):\n        if y:\n            return 1\n        return 0\n"
                 "    return inner(x)\n\n"
                 "class C:\n    @property\n    def p(self):\n" + branches.replace("    ", "        ") + "        return 0\n\n"
                 "    @p.setter\n    def p(self, v):\n        self.v = v\n", encoding="utf-8")
    got = {(name, n) for _, name, n in complexities(f)}
    assert got == {("flat", 16), ("outer", 3), ("C.p", 16), ("C.p", 1)}, got
    assert too_complex([f], tmp_path) == ["m.py:1 flat 16", "m.py:43 C.p 16"]
    assert too_complex([f], tmp_path, limit=16) == []


# ---------------------------------------------------------------- the hooks: thin, typed adapters

HOOK_COMPLEXITY = 4  # a hook event wires MkDocs to the site layer; a branch more is logic for normsite


def code_lines(path: Path) -> int:
    """Lines of a file that hold code: not blank, not only a comment, not a docstring."""
    import io
    import tokenize

    src = path.read_text(encoding="utf-8")
    docs = {n for node in ast.walk(ast.parse(src)) if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef))
            and ast.get_docstring(node, clean=False) is not None
            for n in range(node.body[0].lineno, node.body[0].end_lineno + 1)}
    skip = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER}
    lines = {n for tok in tokenize.generate_tokens(io.StringIO(src).readline) if tok.type not in skip
             for n in range(tok.start[0], tok.end[0] + 1)}
    return len(lines - docs)


def untyped(path: Path) -> list[str]:
    """``name(param)`` or ``name -> ?`` for each function of a file with a parameter (not self) or return unannotated."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.FunctionDef):
            a = node.args
            params = [*a.posonlyargs, *a.args, *a.kwonlyargs, *filter(None, (a.vararg, a.kwarg))]
            out += [f"{node.name}({p.arg})" for p in params if p.annotation is None and p.arg != "self"]
            out += [f"{node.name} -> ?"] * (node.returns is None)
    return out


HOOKS = sorted((ROOT / "hooks").glob("*.py"))


@pytest.mark.parametrize("path", HOOKS, ids=lambda p: p.name)
def test_each_hook_is_a_thin_typed_adapter(path):
    """DESIGN: the hooks are "a few dozen typed lines" that hand MkDocs' events to the site layer; any logic
    lives in normsite, where it is importable and tested without MkDocs."""
    assert not too_complex([path], limit=HOOK_COMPLEXITY), "move the logic into normsite"
    assert not untyped(path)
    assert code_lines(path) <= 80, f"{path.name}: {code_lines(path)} lines of code"


def test_the_thin_hook_checks_see_logic_and_missing_types(tmp_path):
    f = tmp_path / "h.py"
    f.write_text('"""doc\nstring"""\n# a comment\n\ndef on_x(a, b: int) -> int:\n    """doc"""\n'
                 "    if a:\n        return 1\n    elif b:\n        return 2\n    for _ in a:\n        pass\n"
                 "    while b:\n        b -= 1\n    return 0\n", encoding="utf-8")
    assert untyped(f) == ["on_x(a)"]
    assert code_lines(f) == 10
    assert too_complex([f], root=tmp_path, limit=HOOK_COMPLEXITY) == ["h.py:5 on_x 5"]
