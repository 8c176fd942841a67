"""Experiments whose results the site draws: one module per topic, results cached on disk."""

from __future__ import annotations

import ast as _ast
import contextlib
import functools
import re as _re

__all__ = ["one_thread", "EXPERIMENTS", "parse", "call", "declared"]


@contextlib.contextmanager
def one_thread():
    """Run torch on one thread, then restore the setting.

    The experiments' models are tiny: a matmul is far too small to split, and on
    a busy 2-core machine (the zh and en builds, the tests) a second thread spins
    and waits; we measured small matmuls 20-50x slower with 2 threads than with 1.
    Usable as a context manager or a decorator.
    """
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


# ---------------------------------------------------------------- what a module declares it reads
#
# A module that draws or states cached experiment results (a figure module, a value module, a widget
# data module) names the experiment calls it makes in a module-level tuple of strings,
#
#     EXPERIMENTS = ("normref.experiments.s_curve:s_curve()", "normref.experiments.models:run('minilm-l6', 'en')")
#
# each "module:function(literal arguments)". A scheduler (the site build's) reads it from the source,
# without importing anything (:func:`declared`), runs each call once as a task of its own
# (:func:`call`: the result lands in normref's cache), and starts what reads them after. So two figures
# that draw one experiment never compute it twice, and nothing has to wait on a lock.

EXPERIMENTS = "EXPERIMENTS"
_SPEC = _re.compile(r"(?P<module>normref(?:\.\w+)+):(?P<call>\w+\(.*\))", _re.S)


def parse(spec: str) -> tuple[str, str, tuple, dict]:
    """(module, function, args, kwargs) of ``spec``, "normref.module:function(literal arguments)";
    ValueError naming the spec and what was expected."""
    m = _SPEC.fullmatch(spec.strip()) if isinstance(spec, str) else None
    try:
        node = _ast.parse(m.group("call"), mode="eval").body if m else None
        if not isinstance(node, _ast.Call) or not isinstance(node.func, _ast.Name):
            raise ValueError
        args = tuple(_ast.literal_eval(a) for a in node.args)
        kwargs = {k.arg: _ast.literal_eval(k.value) for k in node.keywords if k.arg}
        if len(kwargs) != len(node.keywords):
            raise ValueError
    except (ValueError, SyntaxError, TypeError):
        raise ValueError(f"an experiment is 'normref.module:function(literal arguments)', "
                         f"such as 'normref.experiments.s_curve:s_curve()'; got {spec!r}") from None
    return m.group("module"), node.func.id, args, kwargs


def call(spec: str) -> bool:
    """Run the experiment ``spec`` names (:func:`parse`), so that its results are in normref's cache; was every
    result it asked the cache for already there? (A function that answers that itself, returning a bool, such
    as the model converter normref.models.checkpoint.convert, is taken at its word too.)"""
    import importlib

    from .. import cache

    module, name, args, kwargs = parse(spec)
    fn = getattr(importlib.import_module(module), name, None)
    if not callable(fn):
        raise ValueError(f"experiment {spec!r}: {module} has no function {name!r}")
    before = cache.STATS.get("miss", 0)
    with one_thread():
        result = fn(*args, **kwargs)
    return cache.STATS.get("miss", 0) == before and result is not False


def declared(module: str) -> tuple[str, ...]:
    """The experiments ``module`` declares (its module-level :data:`EXPERIMENTS`), read from its source
    without importing it; () when it declares none. ValueError naming the module for a malformed one."""
    from .. import cache

    path = cache.module_file(module)
    if path is None:
        raise ValueError(f"module must be a normref or normsite module with a source file, got {module!r}")
    return _declared(str(path), path.stat().st_mtime_ns, module)


@functools.lru_cache(maxsize=256)
def _declared(path: str, _mtime: int, module: str) -> tuple[str, ...]:
    from pathlib import Path

    tree = _ast.parse(Path(path).read_bytes(), path)
    for node in tree.body:
        if (isinstance(node, _ast.Assign) and len(node.targets) == 1
                and getattr(node.targets[0], "id", None) == EXPERIMENTS):
            try:
                specs = _ast.literal_eval(node.value)
            except ValueError:
                specs = None
            if not isinstance(specs, tuple) or not all(isinstance(s, str) for s in specs):
                raise ValueError(f"{module}: {EXPERIMENTS} must be a tuple of strings written out in the source, "
                                 "each 'normref.module:function(literal arguments)'")
            for s in specs:
                parse(s)
            return specs
    return ()
