"""``python -m normref cache``: where normref keeps what it computed and converted, how much disk that takes,
and ``--clear`` to empty it.

The folder is :func:`normref.cache.cache_dir`: ``$NORMREF_CACHE``; else
``.cache/normref`` when run from a clone's root; else the reader's cache folder
(``~/.cache/normref`` on Linux). Everything in it is recomputed when missing.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from . import cache

__all__ = ["add_arguments", "run", "folder_sizes"]


def add_arguments(p) -> None:
    what = p.add_mutually_exclusive_group()
    what.add_argument("--info", action="store_true", help="print the folder and what each part of it takes (the default)")
    what.add_argument("--clear", action="store_true", help="delete the folder and everything in it")


def folder_sizes(folder: Path) -> dict[str, int]:
    """{top-level entry: bytes} under ``folder`` (empty when it does not exist)."""
    out = {}
    for entry in sorted(folder.iterdir()) if folder.is_dir() else []:
        files = [entry] if entry.is_file() else [f for f in entry.rglob("*") if f.is_file() and not f.is_symlink()]
        out[entry.name] = sum(f.stat().st_size for f in files)
    return out


def _mb(n: int) -> str:
    return f"{n / 1e6:,.1f} MB"


def run(args) -> int:
    folder = cache.cache_dir().resolve()
    sizes = folder_sizes(folder)
    if args.clear:
        if folder.is_dir():
            shutil.rmtree(folder)
        print(f"cleared {folder} ({_mb(sum(sizes.values()))} freed)")
        return 0
    print(f"{folder}: {_mb(sum(sizes.values()))}" + ("" if folder.is_dir() else " (not made yet)"))
    for name, n in sorted(sizes.items(), key=lambda kv: -kv[1]):
        print(f"  {name:<16}{_mb(n):>14}")
    return 0
