"""Notebook pages executed ahead into mkdocs-jupyter's cache (normsite.nbahead): the entry lands where the
plugin looks for it, a failure leaves none (the page loop then reports it), and our pinned plugin is
one the plan can follow (otherwise every cold build would quietly execute its notebooks serially)."""

from __future__ import annotations

import json
import os
import sys
import types

import pytest

from support import ROOT
from normsite import nbahead


class _FakePlugin:
    pass


@pytest.fixture
def fake_plugin(monkeypatch):
    """A plugin object whose module has the functions nbahead takes from mkdocs-jupyter's."""
    mod = types.ModuleType("fake_mkdocs_jupyter_plugin")
    calls = []

    def nb2html(path, execute, **options):
        calls.append((path, execute, options))
        if "broken" in path:
            raise RuntimeError("a cell failed")
        return f"<div>{path} executed={execute}</div>"

    mod.convert = types.SimpleNamespace(nb2html=nb2html)
    mod._get_nb_toc_tokens = lambda path, depth: ([{"level": 1, "id": "t", "name": "T", "children": []}], "T")
    mod._compute_cache_key = lambda path, config, exec_nb: f"{os.path.basename(path)}-{exec_nb}-{config['theme']}"
    monkeypatch.setitem(sys.modules, mod.__name__, mod)
    cls = type("Plugin", (_FakePlugin,), {"__module__": mod.__name__})
    plugin = cls()
    plugin.config = {k: None for k in nbahead._RENDER} | {"theme": "light", "toc_depth": 3, "execute": True,
                                                           "cache": True, "execute_ignore": []}
    return plugin, calls


def test_render_writes_the_entry_the_plugin_reads(fake_plugin, tmp_path):
    plugin, calls = fake_plugin
    plan = nbahead.plan(plugin)
    assert plan is not None
    assert not nbahead.cached(plan, "nb/a.py", str(tmp_path))
    assert nbahead.render(plan, "nb/a.py", str(tmp_path)) is False  # rendered now
    entry = json.loads((tmp_path / "a.py-True-light.json").read_text(encoding="utf-8"))
    assert entry == {"content": "<div>nb/a.py executed=True</div>",
                     "toc_tokens": [{"level": 1, "id": "t", "name": "T", "children": []}], "title": "T"}
    assert nbahead.cached(plan, "nb/a.py", str(tmp_path))
    assert nbahead.render(plan, "nb/a.py", str(tmp_path)) is True and len(calls) == 1  # there already
    assert calls[0][2]["theme"] == "light"  # the plugin's own options reach nb2html


def test_a_failing_notebook_leaves_no_entry(fake_plugin, tmp_path):
    plugin, _ = fake_plugin
    plan = nbahead.plan(plugin)
    assert nbahead.render(plan, "nb/broken.py", str(tmp_path)) is False
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("change", [{"cache": False}, {"execute_ignore": ["*.py"]}])
def test_a_plugin_set_up_otherwise_is_left_alone(fake_plugin, change):
    plugin, _ = fake_plugin
    plugin.config |= change
    assert nbahead.plan(plugin) is None


def test_the_pinned_mkdocs_jupyter_is_one_the_plan_follows(monkeypatch):
    from mkdocs.config import load_config

    monkeypatch.setenv("NO_MKDOCS_2_WARNING", "1")
    config = load_config(str(ROOT / "mkdocs.yml"))
    plan = nbahead.plan(config.plugins["mkdocs-jupyter"])
    assert plan is not None, "mkdocs-jupyter changed: normsite.nbahead no longer executes notebooks ahead"
    from mkdocs_jupyter import convert, plugin

    assert plan.nb2html is convert.nb2html and plan.key is plugin._compute_cache_key
