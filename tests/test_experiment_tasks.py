"""The experiments a build runs as tasks of their own: what modules declare (normref.experiments.declared) and
how the prepare pass plans them (normsite.ahead.experiment_tasks): one task per call, however many results
read it, each result after the experiments it reads, and an experiment after those it needs first.

Whether the declarations are complete is checked on the session's build, where a result that computed an
experiment itself is named in the log (tests/test_build.py)."""

from __future__ import annotations

import importlib

import pytest

from normref import cache, experiments, figures
from normsite import SiteError, ahead
from normsite.ahead import Task

LOAD = "normref.models.checkpoint:convert('smollm2-135m')"


def _figure(name: str, lang: str = "en", theme: str = "light") -> Task:
    return Task("figure", (name, lang, theme), figures.step_of(name, lang, theme), (figures.render_task, name, lang, theme))


def test_every_declaration_names_a_function():
    """Each declaration parses and names a function of its module (and the calls they need, in turn)."""
    declared = {s for m in ahead._declaring_modules() for s in experiments.declared(m)}
    pre = ahead._prerequisites(sorted(declared))
    assert declared <= set(pre) and LOAD in pre and len(declared) >= 20
    for spec in pre:
        module, name, _, _ = experiments.parse(spec)
        assert callable(getattr(importlib.import_module(module), name, None)), spec


@pytest.mark.usefixtures("built_cache")
def test_every_declared_experiment_is_whole_in_the_built_cache():
    """Once the site is built, running any declared experiment computes nothing: each stores what it computes in
    normref's cache (a cache.memo, or a wrapper around one), and the build ran them all."""
    declared = {s for m in ahead._declaring_modules() for s in experiments.declared(m)}
    for spec in sorted(ahead._prerequisites(sorted(declared))):
        assert experiments.call(spec), f"{spec}: computed something the build had not cached"


def test_one_task_per_experiment_and_each_figure_after_its_own():
    """Two variants of one figure and two figures of one module declare the same experiments: one task each.
    A figure waits for its module's experiments, and an experiment on SmolLM2 for the converted weights."""
    missing = [_figure("grad_per_layer"), _figure("grad_per_layer", "zh", "dark"), _figure("stream_norms"),
               _figure("s_curve")]
    tasks, own, deps = ahead.experiment_tasks(missing)
    specs = [t.what for t in tasks]
    assert len(specs) == len(set(specs)) and all(t.kind == "experiment" and t.step is None for t in tasks)
    toll = set(experiments.declared("normref.figures.toll_booth"))
    assert toll <= set(specs) and "normref.experiments.s_curve:s_curve()" in specs and LOAD in specs
    at = {s: i for i, s in enumerate(specs)}
    assert deps[0] == deps[1] == deps[2] == {at[s] for s in toll}
    assert deps[3] == {at["normref.experiments.s_curve:s_curve()"]}
    assert own[at["normref.experiments.s_curve:s_curve()"]] == {at[LOAD]} and own[at[LOAD]] == set()
    assert tasks[at[LOAD]].name == f"experiment/{LOAD}"


def test_any_other_result_waits_for_the_declared_experiments_its_code_reaches():
    """A directive expansion waits for the calls the modules of its key's import closure declare; a notebook or a
    snippet (which declares nothing) also for each declared call whose function is in that closure. A value that
    reads no experiment waits for none, and plans none."""
    drop = Task("directive", ("value", "layer_drop.base", "en"),
                cache.step_of("directives", "x", code=("normref.values.dropnorm",)), (print,))
    plain = Task("directive", ("value", "worked.x", "en"),
                 cache.step_of("directives", "y", code=("normref.values.basics",)), (print,))
    script = Task("notebook", "k3.py", cache.step_of("notebooks", "k3", code=("normref.experiments.moe",)), (print,))
    tasks, own, deps = ahead.experiment_tasks([_figure("softmax_saturation"), drop, plain, script])
    at = {t.what: i for i, t in enumerate(tasks)}
    assert deps[0] == set()  # its module reads no cached experiment
    assert deps[1] == {at[s] for s in experiments.declared("normref.values.dropnorm")}
    assert own[at["normref.experiments.layer_drop:layer_drop()"]] == {at[LOAD]}  # and that waits for the weights
    assert deps[2] == set(), "a value module that reads no experiment waits for some"
    assert {at["normref.experiments.moe:toy_training()"], at["normref.experiments.moe:u_spread()"]} <= deps[3]
    assert ahead.experiment_tasks([_figure("softmax_saturation"), plain])[0] == []


def test_experiments_run_first_in_the_pools_order(monkeypatch):
    monkeypatch.setattr(ahead, "_costs", lambda: {"experiment/b": 1.0, "experiment/a": 5.0, "figures/f[en,light]": 9.0})
    exp = [Task("experiment", s, None, (print,)) for s in ("b", "a", "c")]
    fig = _figure("s_curve")
    assert [t.name for t in ahead.order([fig, *exp])] == ["experiment/c", "experiment/a", "experiment/b", fig.name]


def test_tasks_never_computed_go_by_their_kinds_usual_cost_ahead_of_the_known(monkeypatch):
    """A cold build records no cost: the notebooks first, then the snippets, the figures and the directive
    expansions (ahead.KIND_ORDER), each kind in plan order; a task with a recorded cost comes after them."""
    monkeypatch.setattr(ahead, "_costs", lambda: {"directives/value:old[en]": 9.0})
    step = cache.step_of("directives", "value:old[en]", suffix=".json", code=())
    tasks = [_figure("s_curve"), Task("directive", ("value", "x", "en"), cache.step_of("directives", "value:x[en]", code=()), (print,)),
             Task("directive", ("value", "old", "en"), step, (print,)), Task("snippet", "a.py", cache.step_of("snippets", "a.py", code=()), (print,)),
             _figure("s_curve", "zh"), Task("notebook", "n.py", cache.step_of("notebooks", "n.py", code=()), (print,))]
    assert [t.kind for t in ahead.order(tasks)] == ["notebook", "snippet", "figure", "figure", "directive", "directive"]
    assert [t.what for t in ahead.order(tasks) if t.kind == "figure"] == [("s_curve", "en", "light"), ("s_curve", "zh", "light")]
    assert ahead.order(tasks)[-1].step is step


def test_a_cycle_of_declarations_is_a_site_error_naming_it(monkeypatch):
    loop = {"normref.a": ("normref.b:g()",), "normref.b": ("normref.a:f()",)}
    monkeypatch.setattr(experiments, "declared", lambda m: loop.get(m, ()))
    with pytest.raises(SiteError, match=r"cycle: normref.a:f\(\) -> normref.b:g\(\) -> normref.a:f\(\)"):
        ahead._prerequisites(["normref.a:f()"])


@pytest.mark.parametrize("spec", ["s_curve()", "normref.x:f", "normref.x:f(y)", "normref.x:f(**k)", "os:path()", 3])
def test_a_malformed_declaration_is_a_value_error_naming_it(spec):
    with pytest.raises(ValueError, match="an experiment is 'normref.module:function"):
        experiments.parse(spec)


def test_declared_reads_the_source_without_importing_it(tmp_path):
    f = tmp_path / "m.py"
    f.write_text("import not_a_module_anyone_has\nEXPERIMENTS = ('normref.x:f(1, k=\"a\")',)\n")
    assert experiments._declared(str(f), 0, "m") == ('normref.x:f(1, k="a")',)
    assert experiments.parse('normref.x:f(1, k="a")') == ("normref.x", "f", (1,), {"k": "a"})
    f.write_text("EXPERIMENTS = tuple(['normref.x:f()'])\n")
    with pytest.raises(ValueError, match="m: EXPERIMENTS must be a tuple of strings written out"):
        experiments._declared(str(f), 1, "m")
    f.write_text("X = 1\n")
    assert experiments._declared(str(f), 2, "m") == ()
    with pytest.raises(ValueError, match="module must be a normref or normsite module"):
        experiments.declared("no.such.module")


def test_an_experiment_that_computes_anothers_result_is_named():
    """An experiment task that computed a result of another declared experiment's module needs it first and does
    not say so: the pass names it (its log says "undeclared experiment: …"). Its own module's results, and those of
    a module no declared experiment lives in (a helper, the converted weights), are its own."""
    specs = ["normref.experiments.placement:grad_per_layer()", "normref.experiments.toll_booth:grad_per_layer()",
             "normref.models.checkpoint:convert('smollm2-135m')"]
    data = ["data/normref.experiments.toll_booth.grad_per_layer(n_layer=12): new",
            "data/normref.experiments.placement.grad_per_layer(n_layer=12): new",
            "data/normref.models.llama.load_gguf_cached('x'): new",
            "data/normref.experiments.toll_booth_extra.f(): new"]
    assert ahead._computed_for_another(specs[0], data, specs) == [
        "experiment/normref.experiments.placement:grad_per_layer() computed "
        "data/normref.experiments.toll_booth.grad_per_layer(n_layer=12)"]
    assert ahead._computed_for_another(specs[1], data[:1], specs) == []
