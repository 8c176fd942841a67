"""hooks/normref_site.py is a thin adapter: its one dispatch hands each MkDocs event to this build's Site (the site
layer) and turns a SiteError, which names the page and the culprit, into MkDocs' PluginError (reported without a
traceback). The site build (tests/test_build.py) runs every event; this checks the error path alone."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import types

import pytest

from support import ROOT


def _hook():
    spec = importlib.util.spec_from_file_location("normref_site_under_test", ROOT / "hooks" / "normref_site.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_site_error_reaches_mkdocs_as_a_plugin_error_naming_the_page():
    from mkdocs.exceptions import PluginError

    from normsite.build import Site

    hook = _hook()
    hook._state["site"] = Site("en", ROOT / "docs" / "en")
    page = types.SimpleNamespace(file=types.SimpleNamespace(src_uri="broken.md"))
    files = types.SimpleNamespace(documentation_pages=lambda: [])
    with pytest.raises(PluginError, match=r"broken\.md.*unknown figure 'nope'") as info:
        hook.on_page_markdown("text [[figure: nope]] text", page, types.SimpleNamespace(nav=None), files)
    assert type(info.value.__cause__).__name__ == "SiteError"


REBUILD_AFTER_A_FAILURE = """
import sys
sys.path.insert(0, 'hooks')
import normref_site as hook
hook.on_startup('serve', False)
import normsite.build

def broken(cls, config, rebuild=False):
    raise sys.modules['normsite'].SiteError('glossary: broken')

normsite.build.Site.from_config = classmethod(broken)
for _ in range(2):
    first = sys.modules['normsite.build'], sys.modules['normref']
    try:
        hook.on_config(None)
    except Exception as e:
        print(type(e).__name__, sys.modules['normsite.build'] is not first[0], sys.modules['normref'] is not first[1])
"""


def test_a_serve_rebuild_after_a_failed_build_imports_the_site_layer_anew():
    """Under `mkdocs serve`, a rebuild imports normsite and normref afresh (every edit shows), also after a build
    whose config step failed: the second on_config here finds the real Site (and trips on the None config)."""
    p = subprocess.run([sys.executable, "-c", REBUILD_AFTER_A_FAILURE], cwd=ROOT, capture_output=True, text=True,
                       timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    assert p.stdout.split("\n")[:2] == ["PluginError False False", "AttributeError True True"], p.stdout
