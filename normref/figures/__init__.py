"""Every figure of the site, one function each, in a registry.

A figure function takes ``(lang, theme)`` and returns a matplotlib Figure.
It is registered with :func:`figure`; its alt text and caption, in both
languages, live in ``figures.yml`` beside this file (prose belongs in a data
file, not in Python), which :func:`texts` loads and checks. Figure modules in
this package are found automatically, so adding a figure means adding a
decorated function in a module here and its entry in ``figures.yml``.

Nothing here knows about MkDocs: ``python -m normref figures --out DIR``
renders everything.
"""

from __future__ import annotations

import functools
import io
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from .. import cache
from .._yaml import yaml_load
from .. import labels as _texts_of_code  # normref/labels.yml: the values' and experiments' short texts
from .._registry import Registry

from ..bilingual import LANGS  # the one definition
THEMES = ("light", "dark")
TEXTS = Path(__file__).with_name("figures.yml")
TEXT_KINDS = ("alt", "caption")

__all__ = ["LANGS", "THEMES", "TEXTS", "FigureSpec", "FigureTextError", "figure", "get", "names", "texts",
           "check_texts", "label", "labels", "labels_of", "render_svg", "render_cached", "render_many", "render_task",
           "schedule", "key", "step_of",
           "declared", "module_of"]


class FigureTextError(ValueError):
    """figures.yml is malformed, or does not match the registered figures."""


@dataclass(frozen=True)
class FigureSpec:
    name: str
    func: Callable
    fields: Callable[[], Mapping] | None = None  # () -> {placeholder: value} for the texts

    @property
    def modules(self) -> tuple:
        """Where the cache key starts: the figure's module; the key covers all it imports (cache.closure)."""
        return (self.func.__module__,)

    @property
    def alt(self) -> dict[str, str]:
        """lang -> alt text: what the figure shows, for screen readers."""
        return _filled(self, "alt")

    @property
    def caption(self) -> dict[str, str]:
        """lang -> caption: what produced it (real weights, synthetic seed, or measurement)."""
        return _filled(self, "caption")


_REGISTRY = Registry(__name__, __path__, "figure")


def figure(name: str, *, fields: Callable[[], Mapping] | None = None, **removed):
    """Register a figure function under ``name``.

    Its alt text and caption are the entry ``name`` of figures.yml. ``fields``,
    if given, is called when the texts are needed and returns the values of the
    texts' ``{{placeholders}}`` (settings of the experiment the figure draws).
    """
    if "deps" in removed:
        raise TypeError(f"figure {name!r}: deps= is gone; the cache key covers every normref module the figure's "
                        "module imports, found from the code (normref.cache.closure)")
    if removed:
        raise TypeError(f"figure {name!r}: unexpected {', '.join(sorted(removed))}; alt text and caption "
                        f"live in {TEXTS.name} (an entry {name!r} with alt and caption, zh and en)")
    if fields is not None and not callable(fields):
        raise TypeError(f"figure {name!r}: fields must be a callable returning a mapping, got {type(fields).__name__}")

    def deco(fn):
        _REGISTRY.add(name, FigureSpec(name, fn, fields), same=lambda a, b: a.func is b.func)
        return fn

    return deco


def names() -> list[str]:
    return _REGISTRY.names()


def declared() -> dict[str, str]:
    """{figure name: module that registers it}, read from the figure modules' source (their
    ``@figure("NAME")`` decorators) without importing them: a build that finds every figure in the
    cache then imports no matplotlib just to know the names and keys. Equal to the registry's
    (tests/test_figures.py checks it); read again whenever a figure module's file changes."""
    from .._registry import registered_modules

    root = os.path.dirname(os.path.realpath(__file__))
    files = []
    for module in registered_modules(__name__, __path__):  # os, not pathlib: a build's keys call this 168 times
        short = module.rpartition(".")[2]
        f = os.path.join(root, f"{short}.py")
        if not os.path.isfile(f):
            f = os.path.join(root, short, "__init__.py")
        st = os.stat(f)
        files.append((module, f, st.st_size, st.st_mtime_ns))
    return dict(_declared(tuple(files)))


@functools.lru_cache(maxsize=8)
def _declared(files: tuple) -> tuple:
    import ast

    out = []
    for module, path, _size, _mtime in files:
        for node in ast.walk(ast.parse(Path(path).read_bytes(), path)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for d in node.decorator_list:
                    if (isinstance(d, ast.Call) and getattr(d.func, "id", None) == "figure" and d.args
                            and isinstance(d.args[0], ast.Constant) and isinstance(d.args[0].value, str)):
                        out.append((d.args[0].value, module))
    return tuple(out)


def module_of(name: str) -> str:
    """The module that registers figure ``name`` (from :func:`declared`: nothing is imported);
    KeyError naming the known figures for an unknown one."""
    found = declared()
    if name not in found:
        raise KeyError(f"unknown figure {name!r}; known figures: {', '.join(sorted(found))}")
    return found[name]


def get(name: str) -> FigureSpec:
    return _REGISTRY.get(name)


# ---------------------------------------------------------------- texts (figures.yml)

_PLACEHOLDER = _texts_of_code.PLACEHOLDER  # the labels' {{field}}/{{field:spec}}, one definition (normref.labels)



_KEYS = ("phrases", "labels", "figures")


def _bilingual(value, where: str, errors: list[str]) -> dict[str, str] | None:
    """{zh, en}, both non-empty text (only stripped: the YAML folds the lines); None with a problem in ``errors``."""
    if not isinstance(value, dict):
        errors.append(f"{where} must be a mapping with 'zh' and 'en' text, got {type(value).__name__}")
        return None
    extra = sorted(str(k) for k in set(value) - set(LANGS))
    if extra:
        errors.append(f"{where} has unknown language(s) {extra}; expected only 'zh' and 'en'")
        return None
    for lang in LANGS:
        if not isinstance(value.get(lang), str) or not value[lang].strip():
            errors.append(f"{where} has no {lang!r} text (both languages are required)")
            return None
    return {lang: value[lang].strip() for lang in LANGS}


def _label_table(value, where: str, errors: list[str]) -> dict[str, str] | None:
    """{English label: Chinese label} of one figure module; both non-empty, with the same {{fields}}."""
    if not isinstance(value, dict):
        errors.append(f"{where} must map English labels to Chinese ones, got {type(value).__name__}")
        return None
    ok = True
    for en, zh in value.items():
        if not (isinstance(en, str) and en.strip() and isinstance(zh, str) and zh.strip()):
            errors.append(f"{where} maps {en!r} to {zh!r}; expected non-empty English and Chinese text")
            ok = False
        elif _placeholders(en) != _placeholders(zh):
            errors.append(f"{where} label {en!r} has the fields {sorted(_placeholders(en))} but its Chinese "
                          f"{zh!r} has {sorted(_placeholders(zh))}")
            ok = False
    return dict(value) if ok else None


_placeholders = _texts_of_code.placeholders


def parse_texts(raw, source: str = TEXTS.name) -> dict:
    """Check the parsed YAML and return {"phrases": {name: {lang: text}}, "labels": {module: {en: zh}},
    "figures": {name: {kind: {lang: text}}}}; FigureTextError naming the file, the entry and the key.

    Plain checks, enough to fail clearly: the reader's normref needs no validation library. The site
    validates the file whole with its pydantic schema (normsite.content.figure_texts)."""
    if not isinstance(raw, dict):
        raise FigureTextError(f"{source}: expected a mapping with the keys {', '.join(_KEYS)}, got {type(raw).__name__}")
    extra = sorted(str(k) for k in set(raw) - set(_KEYS))
    if extra:
        raise FigureTextError(f"{source}: unknown key(s) {extra}; expected only {', '.join(_KEYS)}")
    errors: list[str] = []
    phrases, labels_, figs = raw.get("phrases") or {}, raw.get("labels") or {}, raw.get("figures")
    out: dict = {"phrases": {}, "labels": {}, "figures": {}}
    for key, table in (("phrases", phrases), ("labels", labels_), ("figures", figs)):
        if not isinstance(table, dict):
            what = "{figure name: {alt, caption}}" if key == "figures" else "{name: ...}"
            errors.append(f"{source}: {key!r} must be a mapping {what}, got {type(table).__name__}")
    if errors:
        raise FigureTextError("\n".join(errors))
    for name, text in phrases.items():
        if (t := _bilingual(text, f"{source}: 'phrases'[{name!r}]", errors)) is not None:
            out["phrases"][str(name)] = t
    for module, table in labels_.items():
        if (t := _label_table(table, f"{source}: 'labels'[{module!r}]", errors)) is not None:
            out["labels"][str(module)] = t
    for name, entry in figs.items():
        where = f"{source}: figure {name!r}"
        if not isinstance(entry, dict) or sorted(entry) != sorted(TEXT_KINDS):
            got = sorted(entry) if isinstance(entry, dict) else type(entry).__name__
            errors.append(f"{where}: expected a mapping with the keys {', '.join(TEXT_KINDS)}, got {got}")
            continue
        texts_ = {kind: _bilingual(entry[kind], f"{where}: {kind!r}", errors) for kind in TEXT_KINDS}
        if None not in texts_.values():
            out["figures"][str(name)] = texts_
    if errors:
        raise FigureTextError("\n".join(errors))
    return out


def label(module: str, lang: str, en: str, fields: Mapping) -> str:
    """A figure's short label (axis, legend, title) in ``lang``: ``en`` itself, or its Chinese in
    figures.yml (``labels: {module: {en: zh}}``); ``{{field}}``/``{{field:spec}}`` filled from ``fields``."""
    if lang not in LANGS:
        raise ValueError(f"lang must be one of {LANGS}, got {lang!r}")
    short = module.rpartition(".")[2]
    text = en
    if lang == "zh":
        table = texts()["labels"].get(short, {})
        if en not in table:
            raise FigureTextError(f"{TEXTS.name}: no Chinese for the label {en!r} of figures/{short}.py; "
                                  f"add it under labels: {short}:")
        text = table[en]
    return _texts_of_code.fill(text, fields, f"figures/{short}.py: label {en!r}", FigureTextError)


def labels(module: str):
    """The label function of a figure module: ``t(lang, "English label", **fields)`` gives the
    label in ``lang``; the Chinese is in figures.yml under ``labels: {module's short name}``.
    ``{{field}}`` or ``{{field:spec}}`` in a label is filled from ``fields``."""

    def t(lang: str, en: str, /, **fields) -> str:
        return label(module, lang, en, fields)

    return t


def labels_of(modules) -> dict:
    """{module: its labels} for the figure modules among ``modules`` (part of a figure's cache key)."""
    table = texts()["labels"]
    return {m: table[m.rpartition(".")[2]] for m in sorted(modules)
            if m.startswith(__name__ + ".") and m.rpartition(".")[2] in table}


def texts(path: Path | None = None) -> dict:
    """figures.yml (or ``path``), loaded and validated once (see :func:`parse_texts`)."""
    return _load_texts(Path(path or TEXTS))


@functools.lru_cache(maxsize=None)
def _load_texts(path: Path) -> dict:
    with path.open(encoding="utf-8") as fh:
        return parse_texts(yaml_load(fh), path.name)


def check_texts(path: Path | None = None) -> None:
    """Every registered figure has an entry and every entry a figure; every placeholder resolves."""
    _check_names(Path(path or TEXTS))
    for name in names():
        for kind in TEXT_KINDS:
            _filled(get(name), kind, path)


@functools.lru_cache(maxsize=None)
def _check_names(path: Path) -> None:
    known, have = set(names()), set(texts(path)["figures"])
    source = path.name
    if have - known:
        raise FigureTextError(f"{source}: entries for unknown figures: {', '.join(sorted(have - known))}; "
                              f"known: {', '.join(sorted(known))}")
    if known - have:
        raise FigureTextError(f"{source}: no alt text and caption for the figure(s) "
                              f"{', '.join(sorted(known - have))}")


def _fill(text: str, lang: str, phrases: dict, fields: Mapping, where: str, depth: int = 0) -> str:
    def one(m):
        key, spec = m.group(1), m.group(2) or ""
        if key in fields:
            return format(fields[key], spec)
        if key in phrases and depth < 3:
            return _fill(phrases[key][lang], lang, phrases, fields, where, depth + 1)
        raise FigureTextError(f"{where} ({lang}) uses the unknown placeholder {{{{{key}}}}}; phrases: "
                              f"{', '.join(sorted(phrases))}; fields: {', '.join(sorted(fields)) or 'none'}")

    return _PLACEHOLDER.sub(one, text)


def _filled(spec: FigureSpec, kind: str, path: Path | None = None) -> dict[str, str]:
    t = texts(path)
    _check_names(Path(path or TEXTS))
    fields = dict(spec.fields()) if spec.fields else {}
    clash = sorted(set(fields) & set(t["phrases"]))
    if clash:
        raise FigureTextError(f"figure {spec.name!r}: field(s) {clash} shadow phrases of the same name")
    where = f"figure {spec.name!r}, {kind}"
    return {lang: _fill(t["figures"][spec.name][kind][lang], lang, t["phrases"], fields, where) for lang in LANGS}


# ---------------------------------------------------------------- rendering


def _check(lang: str, theme: str) -> None:
    if lang not in LANGS:
        raise ValueError(f"lang must be one of {LANGS}, got {lang!r}")
    if theme not in THEMES:
        raise ValueError(f"theme must be one of {THEMES}, got {theme!r}")


def render_svg(name: str, lang: str, theme: str) -> bytes:
    """Draw a figure and return deterministic SVG bytes (no cache)."""
    from . import _style
    import matplotlib.pyplot as plt

    _check(lang, theme)
    spec = get(name)
    with _style.context(lang, theme):
        fig = spec.func(lang, theme)
        try:
            _lay_out(fig)
            buf = io.BytesIO()
            fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None}, transparent=True)
        finally:
            plt.close(fig)
    return buf.getvalue()


def _lay_out(fig) -> None:
    """Lay ``fig`` out as savefig would, and drop its layout engine, so that savefig draws it once.

    With a layout engine set, savefig first draws the whole figure with drawing disabled, for the engine to lay it
    out, and then draws it. Only the layout is needed from that first draw: done here, the figure is drawn once, to
    the same bytes (tests/test_figures.py).
    - fig.tight_layout() leaves a placeholder engine behind: the layout is done already.
    - Any other (layout="constrained") lays the figure out here as Figure.draw would (only with axes; a ValueError
      passed over), measured by the SVG renderer, which is the figure's canvas while savefig writes an SVG.
    """
    import matplotlib as mpl
    from matplotlib.backends.backend_svg import FigureCanvasSVG
    from matplotlib.layout_engine import PlaceHolderLayoutEngine

    engine = fig.get_layout_engine()
    if engine is None:
        return
    if not isinstance(engine, PlaceHolderLayoutEngine) and fig.axes:
        canvas, dpi = fig.canvas, fig.dpi
        FigureCanvasSVG(fig)  # becomes the figure's canvas
        try:
            engine.execute(fig)
        except ValueError:  # as Figure.draw
            pass
        finally:
            fig.set_canvas(canvas)
            fig.dpi = dpi  # the SVG renderer set 72; savefig sets it again (to the figure's own) before it draws
    with mpl.rc_context({"figure.autolayout": False, "figure.constrained_layout.use": False}):
        fig.set_layout_engine(None)  # None means what those two settings say: here, no engine


def step_of(name: str, lang: str, theme: str) -> cache.Step:
    """The cache step of one variant of a figure: its module's import closure, lang, theme, the labels
    figures.yml gives those modules, the texts they read from normref's other data files (labels.yml, a YAML
    file beside a module: normref.labels.key_inputs), the library versions (normref.cache.step_of, the one key recipe)."""
    _check(lang, theme)
    module = module_of(name)
    mods = cache.closure((module,))
    return cache.step_of("figures", f"{name}[{lang},{theme}]", suffix=".svg", code=(module,),
                         inputs={"lang": lang, "theme": theme, "labels in figures.yml": repr(labels_of(mods)),
                                 **_texts_of_code.key_inputs(mods)})


def key(name: str, lang: str, theme: str) -> str:
    """The cache key of one variant of a figure (:func:`step_of`)."""
    return step_of(name, lang, theme).key


def render_cached(name: str, lang: str, theme: str) -> tuple[bytes, bool]:
    """SVG bytes for a figure, from the content-hash cache when possible; (svg, was_hit).
    Two processes that ask for the same missing figure draw it once (the cache entry's lock)."""
    return cache.step(step_of(name, lang, theme), lambda: render_svg(name, lang, theme))


def render_task(name: str, lang: str, theme: str) -> bool:
    """A pool task: draw one variant into the cache unless it is there; was it there?"""
    return render_cached(name, lang, theme)[1]


def render_many(jobs, n_workers: int | None = None) -> list[tuple[bytes, bool]]:
    """``[render_cached(name, lang, theme) for (name, lang, theme) in jobs]``, the misses drawn by
    ``n_workers`` processes at once (default: normref.cores.workers, NORMREF_WORKERS or one per core;
    1: here, in order). Each draws with torch on one thread, as a serial run does, so the SVG bytes
    are those a serial run draws. Two workers that need the same missing experiment may both compute
    it (normref takes no locks; a site build runs each experiment a module declares once, as a task of its own,
    before the figures that read it: normsite.ahead)."""
    from ..cores import starmap

    jobs = [tuple(j) for j in jobs]
    for name, lang, theme in jobs:
        _check(lang, theme)
        get(name)  # an unknown name fails before any work
    steps = [step_of(*j) for j in jobs]
    missing = schedule([j for j, s in zip(jobs, steps) if not s.cached()])
    hits = list(starmap(render_task, missing, n_workers))  # normref's one process pool (normref.cores)
    drawn = {j for j, hit in zip(missing, hits) if not hit}
    out = []
    for j, s in zip(jobs, steps):
        out.append((s.path.read_bytes(), j not in drawn))
        drawn.discard(j)  # a job listed twice was drawn once
    return out


def schedule(jobs) -> list[tuple]:
    """The jobs (name, lang, theme), each once, in the order a pool should take them: every figure's
    first variant (the one that computes the experiments it draws) before any figure's second, each
    group in the order given. The slow experiments then start early, and quick drawings from the
    cache fill the cores at the end."""
    seen: set = set()
    firsts, rest = [], []
    for j in dict.fromkeys(tuple(j) for j in jobs):
        (rest if j[0] in seen else firsts).append(j)
        seen.add(j[0])
    return firsts + rest
