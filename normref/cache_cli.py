"""``python -m normref cache``: where normref keeps what it computed and converted, how much disk that takes,
and ``--clear`` to delete what normref put there.

The folder is :func:`normref.cache.location`: ``$NORMREF_CACHE``; else
``.cache/normref`` when run from a clone's root; else the reader's cache folder
(``~/.cache/normref`` on Linux). Everything in it is recomputed when missing.
Neither ``--info`` nor ``--clear`` creates it. ``--clear`` deletes only the entries
that normref's marker (:data:`normref.cache.MARKER`) says normref made, and refuses a
folder without that marker: ``NORMREF_CACHE=~/.cache`` never costs another program's files.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from . import cache
from .usage import UsageError

__all__ = ["add_arguments", "run", "folder_sizes"]


# What --clear deletes and when it refuses, for `cache --help` (a caller who reads only the help must know it
# never touches files normref did not make).
EPILOG = ("The folder is $NORMREF_CACHE; else .cache/normref in a clone's root; else your cache folder "
          "(~/.cache/normref on Linux). Neither --info nor --clear creates it. When normref makes the folder it "
          f"writes a marker, {cache.MARKER}, listing each entry normref creates there; --clear deletes those "
          "entries and nothing else, and refuses (status 2) a folder without the marker, so NORMREF_CACHE=~/.cache "
          "never costs another program's files. A cache made before the marker existed: normref's own default "
          "folders (the two above, named for normref) are adopted whole, their entries taken as normref's; a "
          "folder NORMREF_CACHE names is never adopted once it holds anything, since normref cannot tell its old "
          "entries from yours: delete such a folder yourself.")


def add_arguments(p) -> None:
    p.epilog = EPILOG
    what = p.add_mutually_exclusive_group()
    what.add_argument("--info", action="store_true", help="print the folder and what each part of it takes (the default)")
    what.add_argument("--clear", action="store_true",
                      help="delete what normref made in the folder (the entries its marker file lists), nothing else")


def folder_sizes(folder: Path) -> dict[str, int]:
    """{top-level entry: bytes} under ``folder`` (empty when it does not exist), normref's marker left out."""
    out = {}
    for entry in sorted(folder.iterdir()) if folder.is_dir() else []:
        if entry.name == cache.MARKER:
            continue
        files = [entry] if entry.is_file() else [f for f in entry.rglob("*") if f.is_file() and not f.is_symlink()]
        out[entry.name] = sum(f.stat().st_size for f in files)
    return out


def _mb(n: int) -> str:
    return f"{n / 1e6:,.1f} MB"


def _remove(entry: Path) -> None:
    if entry.is_dir() and not entry.is_symlink():
        shutil.rmtree(entry)
    else:
        entry.unlink()


def clear(folder: Path) -> tuple[int, list[str]]:
    """Delete the entries of ``folder`` that normref's marker lists, then the marker and the folder when
    nothing else is left: (bytes freed, the names of what was left). UsageError for a folder without
    normref's marker."""
    if not cache.made_by_normref(folder):
        raise UsageError(f"{folder} has no {cache.MARKER} from normref: normref did not make this folder, so "
                         "--clear deletes nothing in it (NORMREF_CACHE names the folder to use; a cache an older "
                         "normref made there before the marker existed is yours to delete by hand)")
    sizes = folder_sizes(folder)
    mine = cache.recorded_entries(folder)
    freed = 0
    for name in sorted(mine):
        entry = folder / name
        if entry.exists() or entry.is_symlink():
            _remove(entry)
            freed += sizes.get(name, 0)
    left = sorted(e.name for e in folder.iterdir() if e.name != cache.MARKER)
    if not left:
        (folder / cache.MARKER).unlink()
        folder.rmdir()
    return freed, left


def run(args) -> int:
    folder = cache.location().resolve()
    if args.clear:
        if not folder.is_dir():
            print(f"{folder}: nothing to clear (not made yet)")
            return 0
        if not os.environ.get("NORMREF_CACHE"):
            cache._own(cache.location())  # normref's own default folder, made before the marker: adopted, as on a write
        freed, left = clear(folder)
        print(f"cleared {folder} ({_mb(freed)} freed)" + (
            f"; left {len(left)} entr{'y' if len(left) == 1 else 'ies'} normref did not make: {', '.join(left)}"
            if left else ""))
        return 0
    sizes = folder_sizes(folder)
    print(f"{folder}: {_mb(sum(sizes.values()))}" + ("" if folder.is_dir() else " (not made yet)"))
    for name, n in sorted(sizes.items(), key=lambda kv: -kv[1]):
        print(f"  {name:<16}{_mb(n):>14}")
    return 0
