"""hooks/mkdocs_cli.py: MkDocs' command line with mkdocs-jupyter's converter imported on first use (normsite.lazyimport)."""

from __future__ import annotations

import json
import subprocess
import sys

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


def test_the_entry_point_runs_mkdocs_and_keeps_its_exit_status(tmp_path):
    ok = subprocess.run([sys.executable, "hooks/mkdocs_cli.py", "--version"], cwd=ROOT, capture_output=True,
                        text=True, timeout=300)
    assert ok.returncode == 0 and "version" in ok.stdout, ok.stderr[-2000:]
    bad = subprocess.run([sys.executable, "hooks/mkdocs_cli.py", "build", "-f", str(tmp_path / "none.yml")],
                         cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert bad.returncode == 2 and "none.yml" in bad.stderr and "Traceback" not in bad.stderr
