"""The reader's wheel as a reader installs it: what it holds, and that numpy and PyYAML are all it needs.

1. The wheel the site publishes (normsite.wheel.build: setuptools without build isolation, offline, from
   a scratch copy of the sources) holds exactly the files of :data:`ALLOWED`. A file that is not on the
   list fails the test, named: decide whether a reader needs it (numerics, models, experiments, figures,
   values, their labels, results), and add it here, or move it to the site side (normsite/, tools/).
2. Its metadata requires numpy and PyYAML, and nothing else outside its extras.
3. It is installed with ``--no-deps`` into a fresh virtualenv (support.make_venv: nothing of the
   repository on sys.path, an empty working folder), with numpy and PyYAML at requirements.txt's pins
   (pip's usual sources: this machine's wheel folders and cache, or the registry), and nothing else: no
   pydantic, no torch, no matplotlib.
4. Every public module of normref whose import needs no extra (found from the code: its module-level
   imports, followed through normref) imports there, and the command line answers ``--help``.
5. Every snippet whose install line is normref alone (normsite.install: no extra) runs there, in its
   English and its Chinese variant, and prints what the site shows under it (the build's captured
   output, normsite.snippets.run), compared as the copy test compares (support.comparable).

Marker: `copy`, written on the file, as on tests/test_copy.py: it builds a wheel and a virtualenv, so the
fast tier never runs it; it needs no built site.
"""

from __future__ import annotations

import ast
import io
import json
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from support import ROOT, Venv, comparable, make_venv

pytestmark = pytest.mark.copy

DIST = "normref-0.1.0.dist-info"
# Every file the reader's wheel may hold. Keep it exact: a new file fails the test until it is listed.
ALLOWED = frozenset({
    "normref/README.md",  # the wheel's long description (pyproject's readme), shipped beside the code
    *(f"normref/{m}.py" for m in ("__init__", "__main__", "_imports", "_registry", "_yaml", "bilingual", "blocks",
                                  "cache", "cache_cli", "cores", "equivalence", "labels", "moe", "nn", "norms",
                                  "stats", "usage")),
    "normref/labels.yml",
    *(f"normref/bench/{m}.py" for m in ("__init__", "accounting", "budgets", "cli", "harness", "implementations")),
    *(f"normref/data/{m}.py" for m in ("__init__", "basics", "models", "placement", "softmax")),
    *(f"normref/experiments/{m}.py" for m in ("__init__", "dropnorm", "exercises", "formulas", "layer_drop", "models",
                                              "moe", "normfree", "placement", "pre_ln_gradient", "s_curve", "scale",
                                              "sink", "smollm2_batch", "softmax", "toll_booth")),
    "normref/experiments/normfree.yml", "normref/experiments/smollm2_batch.yml",
    *(f"normref/figures/{m}.py" for m in ("__init__", "_style", "basics", "batchnorm", "bench", "cli", "layer_drop",
                                          "models", "moe", "normfree", "palette", "placement", "pre_ln_gradient",
                                          "s_curve", "softmax", "toll_booth")),
    "normref/figures/figures.yml",
    *(f"normref/models/{m}.py" for m in ("__init__", "bert", "checkpoint", "cli", "files", "llama", "measurement",
                                         "record")),
    *(f"normref/results/{m}" for m in ("__init__.py", "committed.py", "dropnorm.py", "normfree.py", "placement.py",
                                       "bench-cpu.json", "dropnorm-cpu.json", "normfree-cpu.json",
                                       "placement-cpu.json", "small-cpu.json")),
    # the committed experiment results: the manifest and the files it names (normref.results.committed)
    "normref/results/committed/manifest.json",
    *(f"normref/results/committed/{e['file']}" for e in json.loads(
        (ROOT / "normref/results/committed/manifest.json").read_text(encoding="utf-8"))["entries"].values()),
    *(f"normref/values/{m}.py" for m in ("__init__", "_format", "basics", "batchnorm", "bench", "committed", "dropnorm",
                                         "followups", "formulas", "models", "moe", "normfree", "placement", "position0",
                                         "pre_ln_gradient", "real_models_prompt", "seed_model", "sink", "solutions",
                                         "toll_booth")),
    *(f"{DIST}/{f}" for f in ("METADATA", "WHEEL", "top_level.txt", "RECORD")),
})
# What a reader's normref may import without an extra, besides the standard library.
BASE = {"numpy", "yaml"}
STDLIB = frozenset(sys.stdlib_module_names) | {"__future__"}


@pytest.fixture(scope="module")
def built():
    from normsite import wheel

    return wheel.build()


def _names(data: bytes) -> list[str]:
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        return z.namelist()


def test_the_wheel_holds_exactly_the_allowed_files(built):
    names = set(_names(built.data))
    new, gone = sorted(names - ALLOWED), sorted(ALLOWED - names)
    assert not new, ("files the reader's wheel holds that tests/test_wheel_install.py's ALLOWED does not list "
                     "(a reader's file: add it there; the site's: move it out of normref/): " + ", ".join(new))
    assert not gone, "ALLOWED lists files the wheel no longer holds (drop them from the list): " + ", ".join(gone)


def test_the_wheel_requires_numpy_and_pyyaml_only(built):
    with zipfile.ZipFile(io.BytesIO(built.data)) as z:
        meta = z.read(f"{DIST}/METADATA").decode()
    plain = [ln.split(":", 1)[1].strip() for ln in meta.splitlines()
             if ln.startswith("Requires-Dist:") and "extra ==" not in ln]
    assert sorted(plain) == ["PyYAML>=6.0", "numpy>=2.0"], plain


def _requirements_pin(name: str) -> str:
    pins = [ln.strip() for ln in (ROOT / "requirements.txt").read_text(encoding="utf-8").splitlines()]
    found = [p for p in pins if p.lower().startswith(name.lower() + "==")]
    assert len(found) == 1, f"requirements.txt pins {name} once, got {found}"
    return found[0]


@pytest.fixture(scope="module")
def venv(built, tmp_path_factory) -> Venv:
    """A fresh virtualenv with the wheel (--no-deps), numpy and PyYAML at the site's pins, and nothing else."""
    tmp = tmp_path_factory.mktemp("wheel")
    whl = tmp / built.name
    whl.write_bytes(built.data)
    v = make_venv(tmp / "venv", tmp)
    (tmp / "work").mkdir()
    for line in (f"pip install --no-deps {whl}", f"pip install {_requirements_pin('numpy')} {_requirements_pin('PyYAML')}"):
        p = v.sh(line, tmp / "work")
        assert p.returncode == 0, f"{line}\n{p.stdout[-2000:]}\n{p.stderr[-3000:]}"
    for absent in ("pydantic", "torch", "matplotlib", "normsite", "jieba"):
        assert not v.can_import(absent, tmp / "work"), f"the wheel's virtualenv has {absent}"
    return v


def _module_file(module: str) -> tuple[Path, bool] | None:
    base = ROOT.joinpath(*module.split("."))
    if (base / "__init__.py").is_file():
        return base / "__init__.py", True
    return (base.with_suffix(".py"), False) if base.with_suffix(".py").is_file() else None


def import_time_needs(module: str) -> set[str]:
    """The third-party modules importing ``module`` imports: module-level imports only (a function's lazy
    import runs when it is called), followed through normref's modules and their parent packages
    (normref._imports, the scanner the cache keys and the install lines use)."""
    from normref._imports import imported

    seen, todo, out = set(), [module], set()
    while todo:
        m = todo.pop()
        if m in seen:
            continue
        seen.add(m)
        parts = m.split(".")
        todo += [".".join(parts[:i]) for i in range(1, len(parts))]
        found = _module_file(m)
        if found is None:
            continue
        path, is_package = found
        for imp in imported(ast.parse(path.read_bytes(), str(path)), m, is_package, top_level_only=True):
            top = imp.split(".")[0]
            if top == "normref":
                todo.append(imp)
            elif top not in STDLIB:
                out.add(top)
    return out



def _public_modules(names: list[str]) -> list[str]:
    out = []
    for n in names:
        if not n.endswith(".py"):
            continue
        parts = n[:-3].split("/")
        if parts[-1] == "__init__":
            parts.pop()
        if parts[-1] == "__main__" or any(p.startswith("_") for p in parts):
            continue
        out.append(".".join(parts))
    return sorted(out)


def test_every_public_module_that_needs_no_extra_imports_without_the_site(built, venv, tmp_path):
    modules = _public_modules(_names(built.data))
    plain = [m for m in modules if import_time_needs(m) <= BASE]
    # The core a reader meets first is among them (a module-level torch import here would be a regression).
    assert {"normref", "normref.norms", "normref.stats", "normref.labels", "normref.figures", "normref.values",
            "normref.data", "normref.cache", "normref.experiments.softmax"} <= set(plain), plain
    p = subprocess.run([venv.python, "-c", "import importlib, sys\nfor m in sys.argv[1:]:\n    importlib.import_module(m)\n"
                        "import normref.figures as f\nf.texts()\nimport normref.labels as l\nl.texts()\n", *plain],
                       cwd=tmp_path, env=venv.env, capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, f"importing {len(plain)} modules in the wheel's virtualenv:\n{p.stderr[-3000:]}"
    p = subprocess.run([venv.python, "-m", "normref", "--help"], cwd=tmp_path, env=venv.env, capture_output=True,
                       text=True, timeout=300)
    assert p.returncode == 0 and "figures" in p.stdout, p.stderr[-2000:]


def _numpy_only_snippets() -> list[str]:
    from normsite import install

    return [p.name for p in sorted((ROOT / "snippets").glob("*.py"))
            if install.needs_of_file(p) == install.Needs((), False)]


def test_some_snippets_need_numpy_only():
    assert len(_numpy_only_snippets()) >= 3, _numpy_only_snippets()


@pytest.mark.parametrize("name", _numpy_only_snippets())
def test_numpy_only_snippet_prints_what_the_site_shows_from_the_wheel(name, venv, tmp_path):
    from normsite import snippets

    shown, _ = snippets.run(name)  # the output the build captured, shown under the snippet on both pages
    for rel in (name, f"zh/{name}"):  # what the English and the Chinese page show of it
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        script = tmp_path / rel
        script.write_text((ROOT / "snippets" / rel).read_text(encoding="utf-8"), encoding="utf-8")
        work = tmp_path / "work"
        work.mkdir(exist_ok=True)
        p = subprocess.run([venv.python, str(script)], cwd=work, env=venv.env, capture_output=True, text=True,
                           timeout=600)
        assert p.returncode == 0, f"snippets/{rel} in the wheel's virtualenv:\n{p.stderr[-3000:]}"
        assert comparable(p.stdout) == comparable(shown), f"snippets/{rel}: the output differs from what the site shows"
        assert not re.search(r"pydantic|normsite", p.stderr), p.stderr[-2000:]
