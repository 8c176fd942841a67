"""Every figure of the site, one function each, in a registry.

A figure function takes ``(lang, theme)`` and returns a matplotlib Figure.
It is registered with :func:`figure`, which also records its alt text and
caption in both languages and the normref modules whose source it depends on
(the cache key). Figure modules in this package are found automatically, so
adding a figure means adding a decorated function in a module here.

Nothing here knows about MkDocs: ``python -m normref figures --out DIR``
renders everything.
"""

from __future__ import annotations

import io
from dataclasses import dataclass, field
from typing import Callable

from .. import cache
from .._registry import Registry

LANGS = ("zh", "en")
THEMES = ("light", "dark")

__all__ = ["LANGS", "THEMES", "FigureSpec", "figure", "get", "names", "render_svg", "render_cached"]


@dataclass(frozen=True)
class FigureSpec:
    name: str
    func: Callable
    alt: dict  # lang -> alt text (what the figure shows, for screen readers)
    caption: dict  # lang -> caption (what produced it: real weights, synthetic seed, or measurement)
    deps: tuple = field(default_factory=tuple)

    @property
    def modules(self) -> tuple:
        return (self.func.__module__, "normref.figures", "normref.figures._style", *self.deps)


_REGISTRY = Registry(__name__, __path__, "figure")


def figure(name: str, *, alt: dict, caption: dict, deps=()):
    """Register a figure function under ``name``; alt and caption need zh and en."""

    def deco(fn):
        for what, d in (("alt", alt), ("caption", caption)):
            missing = [lang for lang in LANGS if not (d.get(lang) or "").strip()]
            if missing:
                raise ValueError(f"figure {name!r}: {what} text missing for {', '.join(missing)}")
        _REGISTRY.add(name, FigureSpec(name, fn, dict(alt), dict(caption), tuple(deps)), same=lambda a, b: a.func is b.func)
        return fn

    return deco


def names() -> list[str]:
    return _REGISTRY.names()


def get(name: str) -> FigureSpec:
    return _REGISTRY.get(name)


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
        buf = io.BytesIO()
        fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None}, transparent=True)
        plt.close(fig)
    return buf.getvalue()


def render_cached(name: str, lang: str, theme: str) -> tuple[bytes, bool]:
    """SVG bytes for a figure, from the content-hash cache when possible; (svg, was_hit)."""
    _check(lang, theme)
    spec = get(name)
    key = cache.make_key("figure", name, (lang, theme), spec.modules)
    svg = cache.get("figures", key, ".svg")
    if svg is not None:
        return svg, True
    svg = render_svg(name, lang, theme)
    cache.put("figures", key, svg, ".svg")
    return svg, False
