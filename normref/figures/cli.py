"""``python -m normref figures``: render every figure into a folder, without MkDocs."""

from __future__ import annotations

import time
from pathlib import Path

from . import LANGS, THEMES, names, render_cached
from .. import cache


def add_arguments(p) -> None:
    p.add_argument("--out", required=True, type=Path, help="folder to write <lang>/<name>-<theme>.svg into")
    p.add_argument("--lang", choices=LANGS, action="append", help="language (repeatable; default: all)")
    p.add_argument("--theme", choices=THEMES, action="append", help="theme (repeatable; default: all)")
    p.add_argument("--only", action="append", metavar="NAME", help="render only this figure (repeatable)")


def run(args) -> int:
    todo = args.only or names()
    for n in todo:  # fail before any work if a name is wrong
        if n not in names():
            raise SystemExit(f"error: unknown figure {n!r}; known: {', '.join(names())}")
    t0 = time.perf_counter()
    count = 0
    for lang in args.lang or LANGS:
        for name in todo:
            for theme in args.theme or THEMES:
                svg, hit = render_cached(name, lang, theme)
                path = args.out / lang / f"{name}-{theme}.svg"
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(svg)
                count += 1
    s = cache.STATS
    print(f"wrote {count} figures to {args.out} in {time.perf_counter() - t0:.1f} s "
          f"(cache: {s['hit']} hit, {s['miss']} miss)")
    return 0
