"""Cache keys derived from the code: a result's key covers the import closure of its module.

The invalidation tests edit a temporary copy of the normref package: the cache
reads module sources from the copy (``cache._package_root`` points at it), while
the figures themselves are drawn by the real package.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest

from support import ROOT
from normref import cache, figures
from normsite import snippets


@pytest.fixture
def pkg_copy(tmp_path, monkeypatch):
    """A copy of normref whose sources the cache hashes; yields a function that edits a file of it."""
    copy = tmp_path / "src" / "normref"
    shutil.copytree(ROOT / "normref", copy, ignore=shutil.ignore_patterns("__pycache__"))
    real = cache._package_root
    monkeypatch.setattr(cache, "_package_root", lambda top: copy if top == "normref" else real(top))
    monkeypatch.setenv("NORMREF_CACHE", str(tmp_path / "cache"))

    def clear():
        cache.clear()  # what the process has read of the sources, and the code hashes made of them

    def edit(rel: str, text: str = "\n# an edit that changes no behaviour\n") -> None:
        with (copy / rel).open("a", encoding="utf-8") as f:
            f.write(text)
        clear()

    clear()
    yield edit
    clear()


def test_closure_follows_indirect_relative_and_function_level_imports():
    tb = cache.closure(["normref.figures.toll_booth"])
    # figures.toll_booth imports experiments.toll_booth inside functions; that imports
    # ..blocks, which imports .nn: all reached.
    assert {"normref.experiments.toll_booth", "normref.blocks", "normref.nn", "normref.figures._style",
            "normref.figures", "normref"} <= set(tb)
    # A figure module registers only itself: other figures are not part of its key.
    assert not {"normref.figures.basics", "normref.figures.moe"} & set(tb)
    assert "normref.nn" not in cache.closure(["normref.figures.basics"])
    # A parent package's own source counts, not what it imports for its users: normref/__init__
    # imports norms, which the bench figures (drawn from a JSON file) never use.
    assert "normref" in cache.closure(["normref.figures.bench"])
    assert "normref.norms" not in cache.closure(["normref.figures.bench"])
    assert "normref.norms" in cache.closure(["normref.figures.basics"])  # via experiments.scale
    # `import normref.nn` binds normref, whose attributes (normref.rms_norm) a script may use.
    assert "normref.norms" in cache.script_closure("import normref.nn\n")
    # The measurement reaches the model code through function-level imports.
    assert {"normref.models.llama", "normref.models.bert", "normref.models.record", "normref.nn"} <= set(
        cache.closure(["normref.models.measurement"]))


def test_a_script_using_a_registry_depends_on_every_registered_module():
    got = set(cache.script_closure("from normref import values\nprint(values.get('worked.y', 'en'))\n"))
    assert {"normref.values", "normref.values.basics", "normref.norms"} <= got
    assert set(cache.script_closure("import numpy\nimport normref\n")) == {
        "normref", "normref.norms", "normref.stats"} | set(cache.closure(["normref"]))


def test_editing_a_module_a_figure_reaches_only_indirectly_re_renders_that_figure_alone(pkg_copy):
    reaches_nn, unrelated = "topologies", "scale_invariance"  # via experiments.toll_booth -> blocks -> nn
    for name in (reaches_nn, unrelated):
        assert figures.render_cached(name, "en", "light")[1] is False
        assert figures.render_cached(name, "en", "light")[1] is True
    pkg_copy("nn.py")
    assert figures.render_cached(reaches_nn, "en", "light")[1] is False, "stale figure: the nn edit was missed"
    assert figures.render_cached(unrelated, "en", "light")[1] is True, "an unrelated figure re-rendered"


def test_experiment_keys_follow_the_code_they_import(pkg_copy):
    def key(module):
        return cache.step_of("data", f"{module}.f", code=(module,)).key

    before = {m: key(m) for m in ("normref.experiments.toll_booth", "normref.experiments.moe",
                                  "normref.experiments.scale", "normref.models.measurement")}
    pkg_copy("blocks.py")  # imported by experiments.toll_booth only
    after = {m: key(m) for m in before}
    assert after["normref.experiments.toll_booth"] != before["normref.experiments.toll_booth"]
    assert {m for m in before if before[m] == after[m]} == {
        "normref.experiments.moe", "normref.experiments.scale", "normref.models.measurement"}
    pkg_copy("models/record.py")  # reached only through a function-level import of models.checkpoint
    assert key("normref.models.measurement") != after["normref.models.measurement"]


def test_declared_data_files_are_part_of_the_key(pkg_copy):
    fig = figures.get("bench_time")
    before = cache.step_of("figures", "bench_time", code=fig.modules).key
    pkg_copy("results/bench-cpu.json", " ")
    assert cache.step_of("figures", "bench_time", code=fig.modules).key != before


def test_snippet_key_changes_when_a_module_it_imports_indirectly_changes(pkg_copy):
    # residual_paths.py imports normref.blocks, which imports normref.nn; sqrt_d.py imports only normref.
    before = {s: snippets.key(s) for s in ("residual_paths.py", "sqrt_d.py")}
    pkg_copy("nn.py")
    assert snippets.key("residual_paths.py") != before["residual_paths.py"]
    assert snippets.key("sqrt_d.py") == before["sqrt_d.py"]


def test_memo_takes_no_dependency_list():
    with pytest.raises(TypeError, match="memo takes no arguments"):
        cache.memo("normref.nn")


def test_cache_files_must_be_a_literal(tmp_path, monkeypatch):
    pkg = tmp_path / "fakepkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("from pathlib import Path\n__cache_files__ = (Path('x').name,)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    cache._package_root.cache_clear()
    cache._scan.cache_clear()
    with pytest.raises(ValueError, match="fakepkg: __cache_files__ must be a literal"):
        cache.closure(["fakepkg"])
    cache._scan.cache_clear()


@pytest.mark.parametrize("package", ["figures", "values", "data"])
def test_listing_names_does_not_import_torch(package):
    """A module that imports torch at its top fails this with a traceback that names it."""
    code = ("import sys\n"
            "class NoTorch:\n"
            "    def find_spec(self, name, path=None, target=None):\n"
            "        if name.split('.')[0] == 'torch':\n"
            "            raise ImportError('listing names imported torch')\n"
            "sys.meta_path.insert(0, NoTorch())\n"
            f"from normref import {package}\nassert {package}.names()\n"
            "assert 'torch' not in sys.modules\n")
    p = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]


def test_normref_imports_and_caches_without_fcntl(tmp_path):
    # fcntl is POSIX only: with it blocked (as on Windows) normref.experiments imports, and a memo
    # computes and reads back its result (normref takes no lock).
    code = ("import sys\nsys.modules['fcntl'] = None\n"
            "import normref, normref.experiments\nfrom normref import cache\n"
            "s = cache.step_of('t', 'k')\n"
            "print(cache.step(s, lambda: b'v')[1], cache.step(s, lambda: b'w'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                         env={**__import__("os").environ, "NORMREF_CACHE": str(tmp_path)})
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "(b'v',", "True)"]


def test_normref_holds_no_scheduler_and_nothing_takes_a_lock():
    """The build's pool lives in normsite: normref (a reader's wheel) imports none of it and has no pool module;
    neither package takes a lock on a cache entry (a build plans each result as one task instead)."""
    code = ("import sys, pkgutil\n"
            "import normref, normref.cache, normref.figures, normref.experiments\n"
            "assert 'normsite' not in sys.modules, sorted(m for m in sys.modules if m.startswith('normsite'))\n"
            "assert 'pool' not in {m.name for m in pkgutil.iter_modules(normref.__path__)}\n"
            "from normref import cache\n"
            "assert not hasattr(cache, 'GUARD') and not hasattr(cache, 'locked')\n"
            "import normsite\n"
            "assert 'locks' not in {m.name for m in pkgutil.iter_modules(normsite.__path__)}\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr[-2000:]
    sources = [p for pkg in ("normref", "normsite", "hooks") for p in sorted((ROOT / pkg).rglob("*.py"))]
    assert not [p.name for p in sources if "fcntl" in p.read_text(encoding="utf-8")], "a lock in the build"


def test_a_miss_says_which_part_of_the_key_changed(pkg_copy, tmp_path):
    """The re-run log: a result seen for the first time is "new"; computed again, it names the input, the
    source file or the library version that changed since it was last computed under the same name."""
    calls = []

    def run(**inputs):
        s = cache.step_of("t", "one result", inputs=inputs, code=("normref.experiments.toll_booth",), libs=("numpy",))
        return cache.step(s, lambda: calls.append(1) or b"x")[1]

    del cache.WHY[:]
    assert run(lr="0.03") is False and cache.WHY == ["t/one result: new"]
    assert run(lr="0.03") is True and len(calls) == 1  # a hit logs nothing
    assert run(lr="0.003") is False and cache.WHY[-1] == "t/one result: inputs changed (lr)"
    pkg_copy("blocks.py")  # imported by experiments.toll_booth
    assert run(lr="0.003") is False
    assert cache.WHY[-1] == "t/one result: code changed (normref/blocks.py)", cache.WHY[-1]
    assert run(lr="0.003", seed="1") is False and cache.WHY[-1] == "t/one result: inputs changed (seed)"
    # The stored result deleted by hand: said as such, not blamed on the code.
    s = cache.step_of("t", "one result", inputs={"lr": "0.003", "seed": "1"}, code=("normref.experiments.toll_booth",),
                      libs=("numpy",))
    s.path.unlink()
    assert cache.why(s).startswith("its stored result is missing")


def test_step_names_its_bad_arguments():
    with pytest.raises(ValueError, match="kind must be"):
        cache.step_of("", "x")
    with pytest.raises(ValueError, match="name must be"):
        cache.step_of("t", "")


def test_a_value_module_edit_recomputes_only_its_values_and_no_figure(pkg_copy):
    """Editing one value module changes the keys of that module's values, and not those of other value modules,
    of a figure that formats numbers the pages' way (placement: values._format) or of the notebooks."""
    from normref import values
    from normsite import notebooks, nbexec

    def keys():
        return {"moe value": cache.step_of("directives", "v", code=(values.module_of("moe.d_model"),)).key,
                "placement value": cache.step_of("directives", "v", code=(values.module_of("placement.corpus.chars"),)).key,
                "placement figure": figures.step_of("placement_map", "en", "light").key,
                **{f"notebook {p.name}": nbexec.step_of(p).key for p in sorted((ROOT / "docs/en/notebooks").glob("*.py"))}}

    before = keys()
    pkg_copy("values/moe.py")
    after = keys()
    assert [k for k in before if before[k] != after[k]] == ["moe value"]
    assert notebooks.notebook_imports(ROOT / "docs/en/notebooks/formulas.py")  # the roots, not their closure


def test_the_cache_module_is_machinery_not_a_dependency(pkg_copy):
    """An edit to normref/cache.py (it stores results, computes none) recomputes nothing."""
    assert "normref.cache" not in cache.closure(["normref.experiments.toll_booth"])
    before = figures.step_of("topologies", "en", "light").key
    pkg_copy("cache.py")
    assert figures.step_of("topologies", "en", "light").key == before


def test_why_names_a_library_that_is_no_longer_counted(tmp_path, monkeypatch):
    monkeypatch.setenv("NORMREF_CACHE", str(tmp_path))
    cache.step(cache.step_of("t", "libs", libs=("numpy",)), lambda: b"x")
    s = cache.step_of("t", "libs", libs=())
    assert cache.why(s).startswith("library versions changed (numpy ") and s.key != cache.step_of("t", "libs").key


def test_the_rerun_record_reads_each_module_once_per_process(tmp_path, monkeypatch):
    """Each computed result records its key's parts (the digest of every module in its closure) for the re-run
    log; a pass records a thousand of them, so a module's file is read once per process, as for the keys."""
    from pathlib import Path

    monkeypatch.setenv("NORMREF_CACHE", str(tmp_path))
    cache.clear()
    read, real = [], Path.read_bytes
    monkeypatch.setattr(Path, "read_bytes", lambda self: read.append(self.name) or real(self))
    mods = cache.closure(("normref.experiments.toll_booth",))
    cache.step(cache.step_of("t", "one", code=("normref.experiments.toll_booth",), libs=()), lambda: b"x")
    first = [n for n in read if n.endswith(".py")]
    del read[:]
    cache.step(cache.step_of("t", "two", code=("normref.experiments.toll_booth",), libs=()), lambda: b"y")
    assert len(first) >= len(mods) > 3 and not [n for n in read if n.endswith(".py")]
    record = json.loads(next((tmp_path / "steps" / "t").glob("*.json")).read_text(encoding="utf-8"))
    assert set(record["code"]) == set(mods)


def test_a_miss_names_the_declared_data_file_that_changed_relative(pkg_copy):
    """A data file a module declares (__cache_files__) is named by itself in the re-run log, relative to the
    checkout, not as an edit to the module's code."""
    def run():
        s = cache.step_of("t", "bench", code=("normref.results",), libs=())
        return cache.step(s, lambda: b"x")[1]

    run()
    pkg_copy("results/bench-cpu.json", " ")
    assert run() is False
    assert cache.WHY[-1] == "t/bench: data files changed (normref/results/bench-cpu.json)", cache.WHY[-1]


def test_the_layer_drop_memo_keys_on_the_sentences_it_reads(pkg_copy):
    """layer_drop's memo reads smollm2_batch.TEXTS, loaded from smollm2_batch.yml: that module declares the
    file, so an edit to the sentences changes the memo's key (the weights and libraries aside)."""
    def key():
        return cache.step_of("data", "layer_drop", code=("normref.experiments.layer_drop",), libs=()).key

    before = key()
    pkg_copy("experiments/smollm2_batch.yml", "# a comment: the same sentences, other bytes\n")
    assert key() != before


def test_a_shallow_module_counts_only_its_module_level_imports():
    """normsite.directives dispatches to every kind inside functions; each expansion names its own modules."""
    found = cache.closure(("normsite.directives",))
    assert "normsite.assets" in found and "normsite.content.grammar" in found
    assert not {"normsite.practice", "normsite.ledger", "normsite.content.cards", "normref.values"} & set(found)


def test_source_facts_parse_each_version_of_a_file_once(tmp_path, monkeypatch):
    """cache.source_facts: what a function finds in a file's source is kept by the file's bytes and the
    arguments, so a later process reads it back; another version of the file, or other arguments, ask again."""
    monkeypatch.setenv("NORMREF_CACHE", str(tmp_path / "cache"))
    f = tmp_path / "m.py"
    f.write_text("import os\n")
    calls = []

    def facts(data: bytes, tag: str):
        calls.append(tag)
        return (len(data), tag)

    assert cache.source_facts(f, facts, "a") == [10, "a"]  # as JSON gives it back, here as later
    assert cache.source_facts(f, facts, "a") == [10, "a"] and calls == ["a"]
    assert cache.source_facts(f, facts, "b") == [10, "b"] and calls == ["a", "b"]
    f.write_text("import sys, json\n")
    assert cache.source_facts(f, facts, "a") == [17, "a"] and calls == ["a", "b", "a"]
    assert len(list((tmp_path / "cache" / "scans").glob("*.json"))) == 3
