"""The figure pipeline: registry, determinism, cache, and the CLI that works without MkDocs."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from normref import cache, figures
from support import figure_texts_without_weights, no_model_weights

ROOT = Path(__file__).resolve().parent.parent


def _has_alt_and_caption_in_both_languages(name, alt, caption):
    for lang in figures.LANGS:
        assert alt[lang].strip() and caption[lang].strip(), (name, lang)
    assert alt["zh"] != alt["en"], f"{name}: alt text is not translated"


def test_every_figure_has_alt_and_caption_in_both_languages():
    """Every figure whose texts need no real model weights (support.figure_texts_without_weights); the
    others, with the fields measured on real weights, in the test below that reads the build's cache."""
    assert figures.names(), "no figure registered"
    texts, need_weights = figure_texts_without_weights()
    assert set(texts) | set(need_weights) == set(figures.names()) and texts
    for name, t in texts.items():
        _has_alt_and_caption_in_both_languages(name, t["alt"], t["caption"])


def test_every_figure_with_its_measured_fields_has_alt_and_caption_in_both_languages(built_cache):
    """Every figure, its captions' measured fields read from the build's cache (build tier)."""
    for name in figures.names():
        spec = figures.get(name)
        _has_alt_and_caption_in_both_languages(name, spec.alt, spec.caption)


def test_unknown_figure_and_bad_arguments_are_clear_errors():
    with pytest.raises(KeyError, match="unknown figure 'nope'"):
        figures.get("nope")
    with pytest.raises(ValueError, match="lang must be one of"):
        figures.render_svg("scale_invariance", "fr", "light")
    with pytest.raises(ValueError, match="theme must be one of"):
        figures.render_svg("scale_invariance", "en", "sepia")
    with pytest.raises(TypeError, match="live in figures.yml"):
        figures.figure("x", alt={"zh": "图"}, caption={"zh": "a", "en": "b"})


def test_figure_texts_file_matches_the_registry_and_fills_every_placeholder():
    """Every placeholder of the figures whose fields need no real model weights resolves (the texts are filled
    in: support.figure_texts_without_weights); every figure's, in the test below that reads the build's cache."""
    raw = figures.texts()
    assert set(raw["figures"]) == set(figures.names())
    texts, need_weights = figure_texts_without_weights()
    assert set(texts) | set(need_weights) == set(figures.names())


def test_figure_texts_with_their_measured_fields_fill_every_placeholder(built_cache):
    figures.check_texts()


def _texts_file(tmp_path, figs: dict, phrases: dict | None = None):
    import yaml

    # One new folder per file: figures.texts() caches by path.
    path = tmp_path / str(len(list(tmp_path.iterdir()))) / "figures.yml"
    path.parent.mkdir()
    path.write_text(yaml.safe_dump({"phrases": phrases or {}, "figures": figs}, allow_unicode=True), encoding="utf-8")
    return path


def _entry(zh="图", en="a figure"):
    return {"alt": {"zh": zh, "en": en}, "caption": {"zh": zh, "en": en}}


def test_figure_texts_are_validated_naming_the_figure(tmp_path):
    every = {n: _entry() for n in figures.names()}
    no_en = {**every, "scale_invariance": {"alt": {"zh": "图"}, "caption": {"zh": "图", "en": "x"}}}
    with pytest.raises(figures.FigureTextError, match="figure 'scale_invariance': 'alt' has no 'en' text"):
        figures.texts(_texts_file(tmp_path, no_en))
    with pytest.raises(figures.FigureTextError, match="entries for unknown figures: no_such_figure"):
        figures.check_texts(_texts_file(tmp_path, {**every, "no_such_figure": _entry()}))
    missing = {n: e for n, e in every.items() if n != "softmax_saturation"}
    with pytest.raises(figures.FigureTextError, match="no alt text and caption for the figure.s. softmax_saturation"):
        figures.check_texts(_texts_file(tmp_path, missing))
    # The typo in the first figure check_texts fills: the figures before it would have their fields measured,
    # some on real model weights, which the fast tier does not load.
    first = figures.names()[0]
    typo = {**every, first: _entry(en="seed {{sed}}")}
    with no_model_weights(), pytest.raises(
            figures.FigureTextError, match=rf"'{first}', alt \(en\) uses the unknown placeholder \{{\{{sed\}}\}}"):
        figures.check_texts(_texts_file(tmp_path, typo))


def test_figure_text_placeholders_take_phrases_and_fields(tmp_path):
    path = _texts_file(tmp_path, {n: _entry() for n in figures.names()} | {
        "grad_per_layer": _entry(zh="{{seeds}}；{{note}}", en="{{n_layer}} layers, {{note}}")},
        phrases={"note": {"zh": "共 {{n_seeds}} 个", "en": "{{n_seeds}} seeds"}})
    spec = figures.get("grad_per_layer")
    from normref.experiments.toll_booth import GRAD

    n = len(GRAD["seeds"])
    assert figures._filled(spec, "alt", path) == {
        "zh": f"{GRAD['seeds'][0]}–{GRAD['seeds'][-1]}；共 {n} 个", "en": f"{GRAD['n_layer']} layers, {n} seeds"}


def test_render_is_deterministic_localised_and_themed():
    a = figures.render_svg("scale_invariance", "zh", "light")
    b = figures.render_svg("scale_invariance", "zh", "light")
    assert a == b, "two renders differ: SVG output must be byte-identical"
    assert b"<dc:date>" not in a and not re.search(rb"\d{4}-\d\d-\d\dT\d\d:\d\d", a)
    assert a != figures.render_svg("scale_invariance", "en", "light")
    assert a != figures.render_svg("scale_invariance", "zh", "dark")


def _savefig_bytes(fig) -> bytes:
    """What savefig gives ``fig`` as it is (its layout engine left in place), as render_svg saves; ``fig`` closed."""
    import io

    import matplotlib.pyplot as plt

    buf = io.BytesIO()
    fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None}, transparent=True)
    plt.close(fig)
    return buf.getvalue()


def _count_draws(monkeypatch) -> list:
    """A list that gets an item for each Figure.draw from now on."""
    from matplotlib.figure import Figure

    draws, real = [], Figure.draw
    monkeypatch.setattr(Figure, "draw", lambda self, renderer: draws.append(1) or real(self, renderer))
    return draws


def test_a_tight_layout_figure_is_drawn_once_with_the_bytes_savefig_gives_it(monkeypatch):
    """fig.tight_layout() leaves a placeholder layout engine, and savefig lays out a figure with any engine by
    drawing it once more; render_svg drops the placeholder, so the figure is drawn once, to the same bytes."""
    from matplotlib.layout_engine import PlaceHolderLayoutEngine
    from normref.figures import _style

    with _style.context("zh", "light"):  # what savefig gives with the placeholder left in place
        fig = figures.get("scale_invariance").func("zh", "light")
        assert isinstance(fig.get_layout_engine(), PlaceHolderLayoutEngine)
        expected = _savefig_bytes(fig)
    draws = _count_draws(monkeypatch)
    assert figures.render_svg("scale_invariance", "zh", "light") == expected
    assert len(draws) == 1


@pytest.mark.parametrize("rc", [{}, {"figure.autolayout": True}, {"figure.constrained_layout.use": True}])
def test_a_constrained_layout_figure_is_drawn_once_with_the_bytes_savefig_gives_it(monkeypatch, rc):
    """savefig lays out a figure with layout="constrained" in a first, non-drawing pass; render_svg lays it out
    itself, as savefig would (the SVG renderer's text sizes), so the figure is drawn once, to the same bytes, and
    closed. Also where a matplotlibrc asks for a layout engine by default (render_svg then drops the figure's
    engine all the same)."""
    import types

    import matplotlib as mpl
    import matplotlib.pyplot as plt
    import numpy as np
    from matplotlib.layout_engine import ConstrainedLayoutEngine
    from normref.figures import _style

    def func(lang, theme):  # text of several sizes, a colorbar, a legend above the axes: what constrained lays out
        fig, axes = plt.subplots(1, 2, figsize=(6.4, 3.0), layout="constrained")
        for k, ax in enumerate(axes.flat):
            ax.plot(np.arange(10) ** k, label=f"x^{k}")
            ax.set_title(f"panel {k}: a long title to make room for")
            ax.set_xlabel("input $x_i$")
            ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0))
        fig.colorbar(plt.cm.ScalarMappable(cmap="viridis"), ax=axes, orientation="horizontal", label="scale")
        return fig

    monkeypatch.setattr(figures, "get", lambda name: types.SimpleNamespace(func=func))
    open_before = plt.get_fignums()
    with mpl.rc_context(rc):
        with _style.context("en", "dark"):  # what savefig gives, laying the figure out itself
            fig = func("en", "dark")
            assert isinstance(fig.get_layout_engine(), ConstrainedLayoutEngine)
            expected = _savefig_bytes(fig)
        draws = _count_draws(monkeypatch)
        assert figures.render_svg("any", "en", "dark") == expected
    assert len(draws) == 1
    assert plt.get_fignums() == open_before


def test_cache_hits_on_second_render(tmp_path, monkeypatch):
    monkeypatch.setenv("NORMREF_CACHE", str(tmp_path))
    svg1, hit1 = figures.render_cached("scale_invariance", "en", "dark")
    svg2, hit2 = figures.render_cached("scale_invariance", "en", "dark")
    assert (hit1, hit2) == (False, True) and svg1 == svg2
    assert len(list((tmp_path / "figures").glob("*.svg"))) == 1


def test_cache_key_changes_with_the_code_it_depends_on():
    spec = figures.get("scale_invariance")

    def key(modules, lang="en"):
        return cache.step_of("figures", "scale_invariance", inputs={"lang": lang}, code=modules).key

    assert key(spec.modules) == key(spec.modules)
    assert key(spec.modules) != key(spec.modules + ("normref.nn",))
    assert key(spec.modules) != key(spec.modules, "zh")
    assert figures.step_of("scale_invariance", "en", "light").key != figures.step_of("scale_invariance", "en", "dark").key


@pytest.mark.command  # a slow command end to end, in its own process: make test only
def test_cli_renders_every_figure_without_mkdocs(tmp_path):
    # One process: the pool is tests/test_pool.py's (its workers would import matplotlib again).
    env = dict(os.environ, NORMREF_CACHE=str(tmp_path / "cache"), NORMREF_WORKERS="1")
    # A guard module that makes any MkDocs import fail proves the CLI does not need it.
    guard = tmp_path / "guard"
    (guard / "mkdocs").mkdir(parents=True)
    (guard / "mkdocs" / "__init__.py").write_text("raise ImportError('normref must not import mkdocs')\n")
    env["PYTHONPATH"] = os.pathsep.join([str(guard), str(ROOT)])
    out = tmp_path / "figs"
    cmd = [sys.executable, "-m", "normref", "figures", "--out", str(out), "--only", "scale_invariance"]
    p = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr
    assert "4 drawn, 0 from the cache" in p.stdout, p.stdout
    written = sorted(str(f.relative_to(out)) for f in out.rglob("*.svg"))
    assert written == [f"{lang}/scale_invariance-{theme}.svg" for lang in ("en", "zh") for theme in ("dark", "light")]
    p2 = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert "0 drawn, 4 from the cache" in p2.stdout, p2.stdout
    # An unknown --only is one line naming it: tests/test_cli.py (unknown-figure).


def test_figure_names_and_modules_are_known_without_importing_matplotlib():
    # A warm build lists and keys the figures from the figure modules' source (figures.declared): in a
    # fresh interpreter that imports no matplotlib, and it agrees with the registry the imports fill.
    code = ("import sys, json\nfrom normref import figures\nd = figures.declared()\n"
            "keys = {n: figures.key(n, 'en', 'light') for n in d}\n"
            "print(json.dumps([d, 'matplotlib' in sys.modules, 'torch' in sys.modules]))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=Path(__file__).resolve().parent.parent)
    import json

    found, mpl, torch = json.loads(out.stdout)
    assert not mpl and not torch, "listing figure names imported matplotlib or torch"
    assert found == {n: figures.get(n).func.__module__ for n in figures.names()}
    with pytest.raises(KeyError, match="unknown figure 'nope'"):
        figures.module_of("nope")


# ---------------------------------------------------------------- labels (figures.yml, labels:)

_CJK = re.compile(r"[\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef]")


def rendered_cjk(path: Path) -> list[tuple[int, str]]:
    """(line, text) of every string constant in a Python file that holds Chinese (or full-width)
    characters, docstrings left out: text the code can put on a figure or a page."""
    import ast

    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {id(n.body[0].value) for n in ast.walk(tree)
                  if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                  and n.body and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
    return [(n.lineno, n.value) for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docstrings
            and _CJK.search(n.value)]


# Chinese text in normref's Python: none. A figure's labels are in figures/figures.yml, a table's headers and
# the other short texts of values and experiments in normref/labels.yml (normref.labels), an experiment's
# input sentences in a YAML file beside it (experiments/smollm2_batch.yml). Comments and docstrings may
# still quote Chinese (data/cards.py names the zh number style its cards use); they never reach a page.
CJK_LEFT: dict[str, int] = {}


def test_no_chinese_text_left_in_normref_python_beyond_the_known_files():
    root = ROOT / "normref"
    found = {}
    for f in sorted(root.rglob("*.py")):
        n = sum(len(_CJK.findall(text)) for _, text in rendered_cjk(f))
        if n:
            found[f.relative_to(root).as_posix()] = n
    figures_py = {f: n for f, n in found.items() if f.startswith("figures/")}
    assert not figures_py, f"Chinese labels in figure modules (put them in figures.yml, labels:): {figures_py}"
    grown = {f: (n, CJK_LEFT.get(f, 0)) for f, n in found.items() if n > CJK_LEFT.get(f, 0)}
    assert not grown, ("Chinese text in normref's Python ((now, allowed)); write the English in the code, "
                       f"t(lang, \"English\") with normref.labels, and its Chinese in normref/labels.yml: {grown}")


def test_rendered_cjk_finds_a_label_and_skips_docstrings(tmp_path):
    f = tmp_path / "m.py"
    f.write_text('"""模块说明。"""\n\ndef g(lang):\n    """函数说明。"""\n    return "层" if lang == "zh" else "layer"\n',
                 encoding="utf-8")
    assert rendered_cjk(f) == [(5, "层")]


def test_labels_come_from_figures_yml_in_chinese_and_from_the_code_in_english():
    t = figures.labels("normref.figures.basics")
    assert t("en", "L2 length") == "L2 length"
    assert t("zh", "L2 length") == figures.texts()["labels"]["basics"]["L2 length"] == "L2 长度"
    tb = figures.labels("normref.figures.s_curve")
    assert tb("en", "tanh fit, R² = {{r2_tanh:.3f}}", r2_tanh=0.98765) == "tanh fit, R² = 0.988"
    assert tb("zh", "tanh fit, R² = {{r2_tanh:.3f}}", r2_tanh=0.98765) == "tanh 拟合，R² = 0.988"
    with pytest.raises(figures.FigureTextError, match=r"no Chinese for the label 'no such label' of figures/basics.py"):
        t("zh", "no such label")
    with pytest.raises(figures.FigureTextError, match=r"uses \{\{r2_tanh\}\}, which the call does not give"):
        tb("en", "tanh fit, R² = {{r2_tanh:.3f}}")
    with pytest.raises(ValueError, match="lang must be one of"):
        t("fr", "L2 length")


def test_labels_are_validated_naming_the_module_and_label(tmp_path):
    import yaml

    every = {n: _entry() for n in figures.names()}
    path = tmp_path / "figures.yml"
    path.write_text(yaml.safe_dump({"labels": {"s_curve": {"fit {{r2}}": "拟合 {{r}}"}}, "figures": every},
                                   allow_unicode=True), encoding="utf-8")
    with pytest.raises(figures.FigureTextError, match=r"'labels'\['s_curve'\] label 'fit \{\{r2\}\}' has the fields \['r2'\]"):
        figures.texts(path)
    path.write_text(yaml.safe_dump({"labels": {"s_curve": {"fit": ""}}, "figures": every}, allow_unicode=True),
                    encoding="utf-8")
    with pytest.raises(figures.FigureTextError, match="expected non-empty English and Chinese text"):
        figures.texts(path)


def test_every_label_in_figures_yml_is_a_string_of_its_module():
    """A label whose English changed in the code leaves its old entry behind: this finds it."""
    import ast

    for module, table in figures.texts()["labels"].items():
        f = ROOT / "normref" / "figures" / f"{module}.py"
        assert f.is_file(), f"figures.yml labels: {module!r} is not a module in normref/figures"
        strings = {n.value for n in ast.walk(ast.parse(f.read_text(encoding="utf-8")))
                   if isinstance(n, ast.Constant) and isinstance(n.value, str)}
        unused = sorted(set(table) - strings)
        assert not unused, f"figures.yml labels: {module}: not in {f.name}: {unused}"


def test_a_changed_label_changes_the_figure_key(monkeypatch):
    before = figures.key("placement_map", "zh", "light")
    table = {m: dict(v) for m, v in figures.texts()["labels"].items()}
    table["toll_booth"][next(iter(table["toll_booth"]))] = "改过的标签"  # placement_map draws toll_booth's layouts
    monkeypatch.setattr(figures, "texts", lambda path=None: {"labels": table})
    assert figures.key("placement_map", "zh", "light") != before
    assert figures.key("scale_invariance", "zh", "light") == figures.key("scale_invariance", "zh", "light")


# ---------------------------------------------------------------- legends clear of the data


def legend_clashes(fig) -> list[str]:
    """What each axes' legend box covers of that axes' data, in display coordinates: a line's
    path (its segments, not only its vertices) or a scattered point inside the part of the
    legend's box that lies in the axes (the data is clipped to the axes). [] when every
    legend is clear of its plot."""
    from matplotlib.transforms import Bbox

    fig.canvas.draw()
    r = fig.canvas.get_renderer()
    out = []
    for i, ax in enumerate(fig.axes):
        leg = ax.get_legend()
        if leg is None:
            continue
        box = Bbox.intersection(leg.get_window_extent(r), ax.bbox)
        if box is None or box.width <= 0 or box.height <= 0:
            continue
        for line in ax.lines:
            if line.get_transform().transform_path(line.get_path()).intersects_bbox(box, filled=False):
                out.append(f"axes {i}: the legend covers the line {line.get_label()!r}")
        for coll in ax.collections:
            pts = coll.get_offset_transform().transform(coll.get_offsets())
            inside = ((pts[:, 0] > box.x0) & (pts[:, 0] < box.x1) & (pts[:, 1] > box.y0) & (pts[:, 1] < box.y1))
            if inside.any():
                out.append(f"axes {i}: the legend covers {int(inside.sum())} points of {coll.get_label()!r}")
    return out


def test_legend_clashes_finds_a_legend_over_a_line_or_points():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (a, b) = plt.subplots(1, 2)
    for ax in (a, b):
        ax.plot([0, 1], [0, 1], label="diagonal")
        ax.scatter([0.5], [0.5], label="middle")
    a.legend(loc="center")  # over both
    b.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0))  # above the plot
    try:
        found = legend_clashes(fig)
    finally:
        plt.close(fig)
    assert found == ["axes 0: the legend covers the line 'diagonal'", "axes 0: the legend covers 1 points of 'middle'"]


@pytest.mark.parametrize("lang", figures.LANGS)
def test_s_curve_legends_cover_no_data_and_are_legible(real_models, lang):
    """The S-curve's legends (its panels' titles and the fits' R²) sit clear of the points and curves
    (browser review D3: the tanh plateau ran through "line fit, R² = …"), at 8 pt or more."""
    import matplotlib.pyplot as plt

    from normref.figures import _style

    with _style.context(lang, "light"):
        fig = figures.get("s_curve").func(lang, "light")
        try:
            assert not legend_clashes(fig)
            sizes = [t.get_fontsize() for ax in fig.axes if ax.get_legend() for t in ax.get_legend().get_texts()]
            assert sizes and min(sizes) >= 8
        finally:
            plt.close(fig)
