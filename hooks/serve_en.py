"""`mkdocs serve` for both languages at once.

`mkdocs serve` serves a single config (the Chinese one, at /). After each of
its rebuilds this hook builds the English config into <served dir>/en/, and it
watches docs/en, snippets/ and normref/ so that an edit to any of them triggers
a rebuild. Only the Chinese config lists this hook; plain `mkdocs build` is
unaffected.

Editing a Chinese page should not cost an English build: the English site is
built into a folder of its own and copied into <served dir>/en/ (which each
Chinese rebuild wipes); we fingerprint the files the English site is built
from (paths, sizes, mtimes) and rebuild it only when the fingerprint changes.
"""

from __future__ import annotations

import logging
import shutil
import tempfile
import time
from pathlib import Path

log = logging.getLogger("mkdocs.hooks.serve_en")

ROOT = Path(__file__).resolve().parent.parent
_serving = {"on": False, "fingerprint": None}
# What the English build reads; docs/zh is not among them.
EN_INPUTS = ("docs/en", "snippets", "normref", "hooks", "overrides", "mkdocs.yml", "mkdocs.en.yml")


def _fingerprint() -> tuple:
    out = []
    for name in EN_INPUTS:
        p = ROOT / name
        for f in sorted(p.rglob("*")) if p.is_dir() else [p]:
            if f.is_file() and "__pycache__" not in f.parts:
                st = f.stat()
                out.append((str(f.relative_to(ROOT)), st.st_size, st.st_mtime_ns))
    return tuple(out)


def on_startup(command, dirty):
    _serving["on"] = command == "serve"


def on_serve(server, config, builder):
    for extra in ("docs/en", "snippets", "normref", "mkdocs.en.yml"):
        server.watch(str(ROOT / extra))
    return server


def on_post_build(config):
    if not _serving["on"]:
        return
    from mkdocs.commands.build import build
    from mkdocs.config import load_config

    t0 = time.perf_counter()
    fp = _fingerprint()
    if "en_dir" not in _serving:
        _serving["en_dir"] = Path(tempfile.mkdtemp(prefix="normref-serve-en-"))
    en_dir = _serving["en_dir"]
    rebuilt = fp != _serving["fingerprint"]
    if rebuilt:
        en = load_config(str(ROOT / "mkdocs.en.yml"), site_dir=str(en_dir))
        en.plugins.on_startup(command="build", dirty=False)
        try:
            build(en)
        finally:
            en.plugins.on_shutdown()
        _serving["fingerprint"] = fp
    shutil.copytree(en_dir, Path(config.site_dir) / "en", dirs_exist_ok=True)
    log.info("serve_en: English %s into /en/ in %.1f s", "rebuilt" if rebuilt else "unchanged, copied",
             time.perf_counter() - t0)


def on_shutdown():
    d = _serving.pop("en_dir", None)
    if d is not None:
        shutil.rmtree(d, ignore_errors=True)
