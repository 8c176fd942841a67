"""Both languages' builds at once: `make build`, the tests' builds and `make perf` run this.

    python -m normsite.sitebuild [--out DIR]        (default: site/, zh at DIR/, en at DIR/en/)

The Chinese build runs the prepare pass (a fresh process, :mod:`normsite.prepare`) and writes its
manifest. The English build starts at the same time: it loads MkDocs, its plugins and the site layer
meanwhile, then waits for that manifest (NORMREF_PREPARE_AFTER, see :func:`normsite.prepare.obtain`)
instead of running a pass of its own, and renders its pages while the Chinese build renders its own.
So a warm build takes about the longer of the two MkDocs runs on two cores, not their sum.

The English build writes into a folder beside the output, moved to DIR/en once both are done: the
Chinese build empties DIR when it starts writing. Then the English pages' wheel is checked in the
Chinese site (:func:`normsite.wheel.check_published`), as a build into DIR/en checks it itself.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from . import SiteError, wheel

ROOT = Path(__file__).resolve().parent.parent
CONFIGS = {"zh": "mkdocs.yml", "en": "mkdocs.en.yml"}

__all__ = ["build", "main"]


def _start(config: str, dest: Path, env: dict, log) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "mkdocs", "build", "--strict", "-f", config, "-d", str(dest)],
                            cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=log, text=True)


def build(out: str | Path = ROOT / "site", env: dict | None = None) -> str:
    """Build both languages into ``out`` (strict), side by side; their logs, Chinese first. A failed
    build raises SiteError naming its config, with the end of its log (the other build is stopped)."""
    out = Path(out).resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ if env is None else env, NO_MKDOCS_2_WARNING="1")
    # The English build waits for a manifest written after this moment (not one a past build left).
    env["NORMREF_PREPARE_AFTER"] = str(time.time_ns())
    en_dir = Path(tempfile.mkdtemp(prefix=f".{out.name}-en-", dir=out.parent))
    logs = {lang: tempfile.TemporaryFile("w+", encoding="utf-8") for lang in CONFIGS}
    procs = {}
    try:
        procs["zh"] = _start(CONFIGS["zh"], out, env, logs["zh"])  # it runs the pass (obtain's run=True)
        procs["en"] = _start(CONFIGS["en"], en_dir, env, logs["en"])
        failed = None
        while failed is None and any(p.poll() is None for p in procs.values()):
            failed = next((lang for lang, p in procs.items() if p.poll() not in (None, 0)), None)
            time.sleep(0.05)
        failed = failed or next((lang for lang, p in procs.items() if p.returncode != 0), None)
        text = {}
        for lang, f in logs.items():
            f.seek(0)
            text[lang] = f.read()
        if failed is not None:
            raise SiteError(f"mkdocs build -f {CONFIGS[failed]} failed:\n{text[failed][-4000:]}")
        shutil.rmtree(out / "en", ignore_errors=True)
        os.replace(en_dir, out / "en")
        wheel.check_published(out, wheel.wheel_name())
        return text["zh"] + text["en"]
    finally:
        for p in procs.values():
            if p.poll() is None:
                p.kill()
                p.wait()
        for f in logs.values():
            f.close()
        shutil.rmtree(en_dir, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m normsite.sitebuild", description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", "-d", type=Path, default=ROOT / "site", help="the site folder (default: site/)")
    args = ap.parse_args(argv)
    try:
        sys.stderr.write(build(args.out))
    except SiteError as e:
        print(e, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
