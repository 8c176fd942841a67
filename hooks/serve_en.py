"""`mkdocs serve` for both languages at once.

`mkdocs serve` serves a single config (the Chinese one, at /). After each of
its rebuilds this hook builds the English config into <served dir>/en/, and it
watches docs/en, snippets/ and normref/ so that an edit to any of them triggers
a rebuild. Only the Chinese config lists this hook; plain `mkdocs build` is
unaffected.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path

log = logging.getLogger("mkdocs.hooks.serve_en")

ROOT = Path(__file__).resolve().parent.parent
_serving = {"on": False}


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
    en = load_config(str(ROOT / "mkdocs.en.yml"), site_dir=str(Path(config.site_dir) / "en"))
    en.plugins.on_startup(command="build", dirty=False)
    try:
        build(en)
    finally:
        en.plugins.on_shutdown()
    log.info("serve_en: English rebuilt into /en/ in %.1f s", time.perf_counter() - t0)
