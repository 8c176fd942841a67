"""Both languages' builds: `make build`, the tests' builds and `make perf` run this.

    python -m normsite.sitebuild [--out DIR]        (default: site/, zh at DIR/, en at DIR/en/)

First the prepare pass, once, for both languages (:func:`normsite.prepare.obtain`: a fresh process, or the
manifest a pass wrote for the same inputs when nothing it reads changed). Then both MkDocs builds side by side,
each of which finds that manifest by its inputs: nothing passes between them, so a warm build takes about
the longer of the two MkDocs runs on two cores, not their sum.

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

from . import LANGS, SiteError, colab, prepare, release, wheel

ROOT = Path(__file__).resolve().parent.parent
CONFIGS = {"zh": "mkdocs.yml", "en": "mkdocs.en.yml"}

__all__ = ["build", "main"]


def _start(config: str, dest: Path, env: dict, log) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, str(ROOT / "hooks" / "mkdocs_cli.py"), "build", "--strict", "-f", config, "-d", str(dest)],
                            cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=log, text=True)


def _prepare(env: dict) -> dict[str, dict]:
    """Run the prepare pass for both builds (in ``env``: its cache, address, NORMREF_NO_GENERATED), with the
    inputs each build will find (normsite.build's: the docs folders, the site's roots); the environment each
    build then gets: the manifest's name, and for the Chinese build, that the pass ran for it."""
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    try:
        roots = release.site_urls("zh", colab.default_site_url(ROOT))[1]["roots"]
        dirs = {lang: ROOT / "docs" / lang for lang in LANGS}
        generated = not prepare.no_generated()
        manifest = prepare.obtain(dirs, generated, roots=roots)
    finally:
        os.environ.clear()
        os.environ.update(saved)
    name = manifest["name"]
    return {"zh": {prepare.PASS: name, **({prepare.PASS_RAN: name} if manifest["ran"] else {})}, "en": {prepare.PASS: name}}


def build(out: str | Path = ROOT / "site", env: dict | None = None) -> str:
    """Run the prepare pass, then build both languages into ``out`` (strict), side by side; their logs,
    Chinese first. A failed pass raises SiteError with its output; a failed build raises SiteError naming
    its config, with the end of its log (the other build is stopped)."""
    out = Path(out).resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ if env is None else env, NO_MKDOCS_2_WARNING="1")
    log = _prepare(env)
    en_dir = Path(tempfile.mkdtemp(prefix=f".{out.name}-en-", dir=out.parent))
    logs = {lang: tempfile.TemporaryFile("w+", encoding="utf-8") for lang in CONFIGS}
    procs = {}
    try:
        procs["zh"] = _start(CONFIGS["zh"], out, env | log["zh"], logs["zh"])
        procs["en"] = _start(CONFIGS["en"], en_dir, env | log["en"], logs["en"])
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
