"""Snippets: short scripts in snippets/ that pages include verbatim, run at build time.

What a snippet prints is captured by running it (with the repository on
PYTHONPATH) and cached by the snippet's bytes and normref's source, so a warm
build runs nothing.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

from normref import cache

from . import SiteError

ROOT = Path(__file__).resolve().parent.parent
SNIPPETS = ROOT / "snippets"
TIMEOUT_S = 300

__all__ = ["SNIPPETS", "path", "run", "code_block", "output_block"]


def path(name: str) -> Path:
    p = SNIPPETS / name
    if not p.is_file():
        raise FileNotFoundError(f"snippet {name!r} not found in {SNIPPETS}")
    return p


def run(name: str) -> tuple[str, bool]:
    """Run snippets/NAME and return (stdout, was_cached).

    A snippet that exits non-zero or times out raises SiteError with the end of
    its stderr (which names the line that failed)."""
    p = path(name)
    key = cache.make_key("snippet", name, hashlib.sha256(p.read_bytes()).hexdigest(), ())
    key = hashlib.sha256((key + cache.package_hash()).encode()).hexdigest()
    out = cache.get("snippets", key, ".txt")
    if out is not None:
        return out.decode("utf-8"), True
    env = dict(os.environ, PYTHONPATH=str(ROOT), MPLBACKEND="Agg", PYTHONHASHSEED="0")
    try:
        proc = subprocess.run([sys.executable, str(p)], cwd=ROOT, env=env, capture_output=True, text=True,
                              timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired as e:
        raise SiteError(f"snippet {name} ran longer than {TIMEOUT_S} s") from e
    if proc.returncode != 0:
        raise SiteError(f"snippet {name} exited with {proc.returncode}:\n{proc.stderr[-2000:]}")
    cache.put("snippets", key, proc.stdout.encode("utf-8"), ".txt")
    return proc.stdout, False


def code_block(name: str) -> str:
    """The snippet's code, included verbatim by pymdownx.snippets (the copy button copies exactly the file)."""
    path(name)
    return f'```python title="snippets/{name}"\n--8<-- "{name}"\n```'


def output_block(out: str, lang: str) -> str:
    label = "输出" if lang == "zh" else "Output"
    return f'```text title="{label}" linenums="0"\n{out.rstrip()}\n```'
