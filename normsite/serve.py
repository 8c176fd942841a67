"""`make serve` for both languages: when does the English site need a rebuild?

`mkdocs serve` serves one config (the Chinese one, at /). After each of its
rebuilds the serve hook builds the English config into a folder of its own, in a
fresh process (:func:`build_english`: the code as it is now, never the code the
server started with), and links (or copies) it into <served dir>/en/ (which each Chinese
rebuild wipes). Editing a Chinese page should not cost an English build, so the
English site is rebuilt only when the files it is built from change (paths,
sizes, mtimes).
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# What the English build reads; docs/zh is not among them.
EN_INPUTS = ("docs/en", "snippets", "normref", "normsite", "hooks", "overrides", "mkdocs.yml", "mkdocs.en.yml")
# What `mkdocs serve` must watch beyond the Chinese config's own docs folder.
WATCH = ("docs/en", "snippets", "normref", "normsite", "mkdocs.en.yml")


def fingerprint(root: Path = ROOT) -> tuple:
    out = []
    for name in EN_INPUTS:
        p = root / name
        for f in sorted(p.rglob("*")) if p.is_dir() else [p]:
            if f.is_file() and "__pycache__" not in f.parts:
                st = f.stat()
                out.append((str(f.relative_to(root)), st.st_size, st.st_mtime_ns))
    return tuple(out)


def build_english(site_dir: Path, root: Path = ROOT) -> subprocess.CompletedProcess:
    """`mkdocs build -f mkdocs.en.yml -d SITE_DIR` in a fresh process (its log in stderr)."""
    return subprocess.run([sys.executable, str(root / "hooks" / "mkdocs_cli.py"), "build", "-f", str(root / "mkdocs.en.yml"), "-d", str(site_dir)],
                          cwd=root, env=dict(os.environ, NO_MKDOCS_2_WARNING="1"), capture_output=True, text=True)


class EnglishSite:
    """The English site under a running `mkdocs serve` of the Chinese config (hooks/serve_en.py).

    :meth:`after_build` is called after each Chinese (re)build: it rebuilds English into a folder of
    its own when its inputs changed (:func:`fingerprint`), then copies it into the served folder's en/,
    which the Chinese rebuild wiped. A failed English build is logged; Chinese goes on being served."""

    def __init__(self):
        self.folder: Path | None = None
        self.built_from: tuple | None = None

    def after_build(self, site_dir: str | Path) -> None:
        if self.folder is None:
            self.folder = Path(tempfile.mkdtemp(prefix="normref-serve-en-"))
        if (fp := fingerprint()) != self.built_from:
            proc = build_english(self.folder)
            if proc.returncode != 0:  # keep serving Chinese; the English error is in the log
                logging.getLogger("mkdocs.hooks.serve_en").error("English build failed:\n%s", proc.stderr[-4000:])
                return
            self.built_from = fp
        shutil.copytree(self.folder, Path(site_dir) / "en", dirs_exist_ok=True, copy_function=_link_or_copy)

    def close(self) -> None:
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)
            self.folder = None


def _link_or_copy(src: str, dst: str) -> None:
    """A hard link (13 MB of English site linked in milliseconds, copied in a tenth of a second per rebuild);
    a copy when the two folders are on different file systems. An English rebuild writes new files (MkDocs
    empties its folder first), so a served link never changes under a reader."""
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)


@contextlib.contextmanager
def static_site(folder: Path) -> Iterator[str]:
    """Serve a built site's folder on 127.0.0.1 (a free port, quietly) and yield its base URL.

    The tools that open the built site in Chromium (make pdf, make perf, the search-rank
    measurement) share it; `make serve` itself is MkDocs' server."""
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(folder)))
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{srv.server_address[1]}/"
    finally:
        srv.shutdown()
        srv.server_close()
