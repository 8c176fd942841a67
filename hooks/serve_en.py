"""`make serve` for both languages: after each rebuild of the Chinese site, build the English one into /en/.

Listed only in mkdocs.yml (MkDocs loads a hook file once per process, so the per-build
adapter cannot keep this state); idle outside `mkdocs serve`. normsite.serve says when
the English inputs changed."""

import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from normsite import serve  # noqa: E402

_state: dict = {"on": False, "fingerprint": None}


def on_startup(command, dirty):
    _state["on"] = command == "serve"


def on_serve(server, config, builder):
    for path in serve.WATCH:
        server.watch(str(serve.ROOT / path))


def on_post_build(config):
    if not _state["on"]:
        return
    from mkdocs.commands.build import build
    from mkdocs.config import load_config

    en_dir = _state.setdefault("en_dir", Path(tempfile.mkdtemp(prefix="normref-serve-en-")))
    if (fp := serve.fingerprint()) != _state["fingerprint"]:
        en = load_config(str(serve.ROOT / "mkdocs.en.yml"), site_dir=str(en_dir))
        en.plugins.on_startup(command="build", dirty=False)
        try:
            build(en)
        finally:
            en.plugins.on_shutdown()
        _state["fingerprint"] = fp
    shutil.copytree(en_dir, Path(config.site_dir) / "en", dirs_exist_ok=True)


def on_shutdown():
    if "en_dir" in _state:
        shutil.rmtree(_state.pop("en_dir"), ignore_errors=True)
