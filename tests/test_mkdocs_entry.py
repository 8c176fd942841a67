"""hooks/mkdocs_cli.py: MkDocs' command line with mkdocs-jupyter's converter and jupytext imported on first use
(normsite.lazyimport)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from support import ROOT

CODE = """
import json, sys
from normsite.lazyimport import LAZY, lazy
for name in LAZY:
    lazy(name)
from mkdocs_jupyter import plugin  # what MkDocs imports when it loads the plugin
loaded = ["nbconvert" in sys.modules, "mistune" in sys.modules]
from mkdocs_jupyter import convert
convert.nb2html  # the first use imports it, whole
print(json.dumps([loaded, "nbconvert" in sys.modules, plugin.convert is convert]))
"""


def test_the_plugin_loads_without_its_converter_and_a_first_use_imports_it():
    p = subprocess.run([sys.executable, "-c", CODE], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    loaded, after, same = json.loads(p.stdout.splitlines()[-1])
    assert loaded == [False, False], "mkdocs-jupyter's plugin imported its converter at load"
    assert after and same


DEFERRED = """
import json, sys
from normsite import lazyimport
lazyimport.install()  # as hooks/mkdocs_cli.py does
from mkdocs_jupyter import plugin  # what MkDocs imports when it loads the plugin
import jupytext
loaded = ["nbformat" in sys.modules, "jupyter_client" in sys.modules]
nb = jupytext.reads("# %%\\nx = 1\\n", fmt="py:percent")  # the first use imports it, whole
from jupytext import writes
print(json.dumps([loaded, nb.cells[0].source, sys.modules["jupytext"].__file__ == jupytext.__file__,
                  plugin.jupytext.read is sys.modules["jupytext"].read, writes is sys.modules["jupytext"].writes]))
"""


def test_jupytext_is_imported_on_its_first_use_not_when_the_plugin_loads():
    p = subprocess.run([sys.executable, "-c", DEFERRED], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    loaded, source, *same = json.loads(p.stdout.splitlines()[-1])
    assert loaded == [False, False], "importing mkdocs-jupyter's plugin loaded jupytext's dependencies"
    assert source == "x = 1" and all(same)


def test_deferred_names_a_top_level_module_that_exists():
    from normsite.lazyimport import deferred

    with pytest.raises(ValueError, match="top-level"):
        deferred("jupytext.formats")
    with pytest.raises(ModuleNotFoundError, match="no_such_module_here"):
        deferred("no_such_module_here")


def test_the_entry_point_runs_mkdocs_and_keeps_its_exit_status(tmp_path):
    ok = subprocess.run([sys.executable, "hooks/mkdocs_cli.py", "--version"], cwd=ROOT, capture_output=True,
                        text=True, timeout=300)
    assert ok.returncode == 0 and "version" in ok.stdout, ok.stderr[-2000:]
    bad = subprocess.run([sys.executable, "hooks/mkdocs_cli.py", "build", "-f", str(tmp_path / "none.yml")],
                         cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert bad.returncode == 2 and "none.yml" in bad.stderr and "Traceback" not in bad.stderr


POLL = """
import json, sys
sys.path.insert(0, "hooks")
import mkdocs_cli
mkdocs_cli.poll_faster()
from mkdocs.commands import serve
server = serve.LiveReloadServer(builder=lambda: None, host="127.0.0.1", port=0, root=".")
print(json.dumps([server.observer.timeout, mkdocs_cli.POLL_S]))
"""


def test_serve_polls_for_edits_more_often_than_mkdocs_does():
    """MkDocs' server looks for edits every 0.5 s; `make serve` (hooks/mkdocs_cli.py serve) every POLL_S."""
    p = subprocess.run([sys.executable, "-c", POLL], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    timeout, poll = json.loads(p.stdout.splitlines()[-1])
    assert timeout == poll < 0.5
