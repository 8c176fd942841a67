"""`make serve` for both languages: after each rebuild of the Chinese site, build the English one into /en/.

Listed only in mkdocs.yml; idle outside `mkdocs serve`. The English site is built by a fresh
`mkdocs build -f mkdocs.en.yml` process (it reuses the prepare pass's manifest the Chinese
rebuild just wrote), so it runs the code as it is now; normsite.serve says when the English
inputs changed (a Chinese-only edit costs no English build)."""

import logging
import shutil
import subprocess
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
    en_dir = _state.setdefault("en_dir", Path(tempfile.mkdtemp(prefix="normref-serve-en-")))
    if (fp := serve.fingerprint()) != _state["fingerprint"]:
        proc = serve.build_english(en_dir)
        if proc.returncode != 0:  # keep serving Chinese; the English error is in the log
            logging.getLogger("mkdocs.hooks.serve_en").error("English build failed:\n%s", proc.stderr[-4000:])
            return
        _state["fingerprint"] = fp
    shutil.copytree(en_dir, Path(config.site_dir) / "en", dirs_exist_ok=True)


def on_shutdown():
    if "en_dir" in _state:
        shutil.rmtree(_state.pop("en_dir"), ignore_errors=True)
