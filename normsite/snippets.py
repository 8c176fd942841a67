"""Snippets: short scripts in snippets/ that pages include verbatim, run at build time.

What a snippet prints is captured by running it (with the repository on
PYTHONPATH) and cached by the snippet's bytes, the source of every normref
module it reaches (its import closure, found from its imports by
normref.cache) and the library versions, so a warm build runs nothing and an
edit re-runs only the snippets that import the edited code.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
from pathlib import Path

from normref import cache

from . import SiteError

ROOT = Path(__file__).resolve().parent.parent
SNIPPETS = ROOT / "snippets"
TIMEOUT_S = 300

__all__ = ["SNIPPETS", "path", "key", "step_of", "run", "failure_line", "shown", "code_block", "output_block"]


def path(name: str) -> Path:
    p = SNIPPETS / name
    if not p.is_file():
        raise FileNotFoundError(f"snippet {name!r} not found in {SNIPPETS}")
    return p


def step_of(name: str) -> cache.Step:
    """The cache step of a snippet's output: its bytes, its normref import closure, the library versions."""
    p = path(name)
    src = p.read_bytes()
    return cache.step_of("snippets", name, inputs={"source": src}, code=cache.script_imports(src, str(p)), suffix=".txt")


def key(name: str) -> str:
    return step_of(name).key


def run(name: str) -> tuple[str, bool]:
    """Run snippets/NAME and return (stdout, was_cached).

    A snippet that exits non-zero or times out raises SiteError with the end of
    its stderr (which names the line that failed)."""
    p, s = path(name), step_of(name)

    def execute() -> str:
        # One torch thread, as the build's pool runs everything (normsite.pool): two snippets at once
        # on two cores then do not fight over them, and the output does not depend on the core count.
        env = dict(os.environ, PYTHONPATH=str(ROOT), MPLBACKEND="Agg", PYTHONHASHSEED="0", OMP_NUM_THREADS="1")
        # In the prepare pass, forked from its zygote, which has imported torch (normsite.kernelfork): the same
        # run as `python SNIPPET`, its imports done already.
        from . import kernelfork

        cmd = [str(p)] if not os.environ.get(kernelfork.ENV) else [kernelfork.__file__, "--run", str(p)]
        try:
            proc = subprocess.run([sys.executable, *cmd], cwd=ROOT, env=env, capture_output=True, text=True,
                                  timeout=TIMEOUT_S)
        except subprocess.TimeoutExpired as e:
            raise SiteError(f"snippet {name} ran longer than {TIMEOUT_S} s") from e
        if proc.returncode != 0:
            raise SiteError(f"{failure_line(name, proc.stderr)} (exit status {proc.returncode}):\n{proc.stderr[-2000:]}")
        return proc.stdout

    # Stored by an atomic rename (normref.cache.step): two processes that need it at once may both run it.
    return cache.step(s, execute, lambda out: out.encode("utf-8"), lambda b: b.decode("utf-8"))


def failure_line(name: str, stderr: str) -> str:
    """"snippet NAME failed at line N: the error" from a traceback: its last frame in the snippet's own file."""
    lines = re.findall(r'File "[^"]*' + re.escape(name) + r'", line (\d+)', stderr)
    last = next((ln.strip() for ln in reversed(stderr.strip().splitlines()) if ln.strip()), "no error message")
    return f"snippet {name} failed" + (f" at line {lines[-1]}" if lines else "") + f": {last}"


def shown(name: str, lang: str) -> str:
    """The file a ``lang`` page shows of snippet NAME, relative to snippets/: on a Chinese page its variant
    snippets/zh/NAME when there is one (the same code, Chinese comments and docstring; tests/test_snippets.py
    holds them to the same code and output), else NAME itself. What it prints is the English file's run."""
    path(name)
    if lang not in ("zh", "en"):
        raise ValueError(f"lang must be 'zh' or 'en', got {lang!r}")
    return f"zh/{name}" if lang == "zh" and (SNIPPETS / "zh" / name).is_file() else name


def code_block(name: str, lang: str) -> str:
    """The snippet's code as a ``lang`` page shows it (:func:`shown`), included verbatim by pymdownx.snippets
    (the copy button copies exactly the file). The prepare pass's fingerprint covers every file under
    snippets/, zh/ included, and pymdownx.snippets reads the file at each build: a comment edit re-renders."""
    f = shown(name, lang)
    return f'```python title="snippets/{f}"\n--8<-- "{f}"\n```'


def output_block(out: str, lang: str) -> str:
    label = "输出" if lang == "zh" else "Output"
    return f'```text title="{label}" linenums="0"\n{out.rstrip()}\n```'
