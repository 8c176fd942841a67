"""`make serve` for both languages: when does the English site need a rebuild?

`mkdocs serve` serves one config (the Chinese one, at /). After each of its
rebuilds the serve hook builds the English config into a folder of its own and
copies it into <served dir>/en/ (which each Chinese rebuild wipes). Editing a
Chinese page should not cost an English build, so the English site is rebuilt
only when the files it is built from change (paths, sizes, mtimes).
"""

from __future__ import annotations

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
