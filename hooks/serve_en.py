"""`make serve` for both languages: after each rebuild of the Chinese site, the English one into /en/.

Listed only in mkdocs.yml; idle outside `mkdocs serve`. The logic is normsite.serve.EnglishSite: a fresh
`mkdocs build -f mkdocs.en.yml` process when the English inputs changed (a Chinese-only edit costs none)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from normsite import serve  # noqa: E402

if TYPE_CHECKING:
    from mkdocs.config.defaults import MkDocsConfig
    from mkdocs.livereload import LiveReloadServer

_state: dict[str, serve.EnglishSite] = {}


def on_startup(command: str, dirty: bool) -> None:
    if command == "serve":
        _state["en"] = serve.EnglishSite()


def on_serve(server: LiveReloadServer, config: MkDocsConfig, builder: Any) -> None:
    for path in serve.WATCH:
        server.watch(str(serve.ROOT / path))


def on_post_build(config: MkDocsConfig) -> None:
    if "en" in _state:
        _state["en"].after_build(config.site_dir)


def on_shutdown() -> None:
    if "en" in _state:
        _state.pop("en").close()
