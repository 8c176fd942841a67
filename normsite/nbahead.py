"""Notebook pages executed ahead, on the build's pool, into mkdocs-jupyter's own cache.

mkdocs-jupyter executes each notebook when MkDocs renders its page: one after
another, in each language's build, while the other core waits. On a cold build
that is the largest serial cost left (a kernel start and the notebook's cells,
six notebooks per language). The first build of a run (normsite.ahead) instead
hands every notebook of both languages to the pool, next to the figures: a
task renders the page exactly as the plugin would (the plugin's own functions,
taken from the plugin object the build hands us, so this module imports no
MkDocs) and writes the entry the plugin looks for, under the key the plugin
computes. The page loop then finds a cache hit. A notebook that fails is left
to the page loop, which names the file, cell and line (normsite.colab).

Only the plugin's own code renders: the bytes are the ones a serial build
makes. If the other language's plugin settings differ from this one's, its
key differs and its build simply executes its notebooks itself.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Plan", "plan", "cached", "render"]

FORMAT = "0.26."  # the mkdocs-jupyter versions whose cache entries render() writes (requirements.txt pins 0.26.3)

# The options of mkdocs-jupyter's nb2html that its cache key covers (mkdocs_jupyter.plugin._compute_cache_key).
_RENDER = ("kernel_name", "theme", "allow_errors", "show_input", "no_input", "no_prompt", "remove_tag_config",
           "highlight_extra_classes", "include_requirejs", "custom_mathjax_url")


@dataclass
class Plan:
    """How to render notebook pages as this build's mkdocs-jupyter does: its functions and settings."""

    nb2html: object  # mkdocs_jupyter.convert.nb2html
    toc_tokens: object  # mkdocs_jupyter.plugin._get_nb_toc_tokens
    key: object  # mkdocs_jupyter.plugin._compute_cache_key
    config: dict


def plan(plugin) -> Plan | None:
    """The plan for an mkdocs-jupyter plugin object, or None when it cannot be followed (its cache is off,
    it ignores some notebooks for execution, or its module lacks the functions this relies on)."""
    from importlib.metadata import PackageNotFoundError, version

    try:  # the cache entry's format (below) is mkdocs-jupyter 0.26's; another version renders its own pages
        if not version("mkdocs-jupyter").startswith(FORMAT):
            return None
    except PackageNotFoundError:
        return None
    cfg = getattr(plugin, "config", None)
    module = sys.modules.get(type(plugin).__module__)
    fns = [getattr(module, n, None) for n in ("_get_nb_toc_tokens", "_compute_cache_key")]
    convert = getattr(module, "convert", None)
    if cfg is None or not cfg.get("cache") or cfg.get("execute_ignore") or None in fns or convert is None:
        return None
    return Plan(convert.nb2html, fns[0], fns[1], {k: cfg[k] for k in (*_RENDER, "toc_depth", "execute")})


def _target(p: Plan, path: str, cache_dir: str) -> Path:
    return Path(cache_dir) / f"{p.key(path, p.config, p.config['execute'])}.json"


def cached(p: Plan, path: str, cache_dir: str) -> bool:
    """Is the page of the notebook at ``path`` in the plugin's cache already?"""
    return _target(p, path, cache_dir).exists()


def render(p: Plan, path: str, cache_dir: str) -> bool:
    """A pool task: render the notebook page at ``path`` into ``cache_dir`` as the plugin would, unless it is
    there. True if it was there already. A failure leaves no entry (the page loop reports it)."""
    execute, target = p.config["execute"], _target(p, path, cache_dir)
    if target.exists():
        return True
    try:
        body = p.nb2html(path, execute=execute, **{k: p.config[k] for k in _RENDER})
        toc_tokens, title = p.toc_tokens(path, p.config["toc_depth"])
    except Exception:  # noqa: BLE001 - reported by the page loop, with the cell and line
        return False
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".tmp-{os.getpid()}-{target.name}")
    tmp.write_text(json.dumps({"content": body, "toc_tokens": toc_tokens, "title": title}), encoding="utf-8")
    os.replace(tmp, target)
    return False
