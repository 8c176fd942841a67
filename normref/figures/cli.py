"""``python -m normref figures``: render every figure into a folder, without MkDocs, on every core."""

from __future__ import annotations

import time
from pathlib import Path

from . import LANGS, THEMES, names, render_many
from .. import cache
from ..usage import UsageError, positive_int


def add_arguments(p) -> None:
    p.add_argument("--out", required=True, type=Path, help="folder to write <lang>/<name>-<theme>.svg into")
    p.add_argument("--lang", choices=LANGS, action="append", help="language (repeatable; default: all)")
    p.add_argument("--theme", choices=THEMES, action="append", help="theme (repeatable; default: all)")
    p.add_argument("--only", action="append", metavar="NAME", help="render only this figure (repeatable)")
    p.add_argument("--jobs", "-j", type=positive_int, metavar="N",
                   help="processes drawing at once (default: NORMREF_WORKERS, else one per core; 1: serial)")


def run(args) -> int:
    todo = args.only or names()
    for n in todo:  # fail before any work if a name is wrong
        if n not in names():
            raise UsageError(f"--only: unknown figure {n!r}; expected one of {', '.join(names())}")
    t0 = time.perf_counter()
    jobs = [(name, lang, theme) for lang in args.lang or LANGS for name in todo for theme in args.theme or THEMES]
    drawn = 0
    for (name, lang, theme), (svg, hit) in zip(jobs, render_many(jobs, n_workers=args.jobs)):
        path = args.out / lang / f"{name}-{theme}.svg"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(svg)
        drawn += not hit
    s = cache.STATS
    print(f"wrote {len(jobs)} figures to {args.out} in {time.perf_counter() - t0:.1f} s: {drawn} drawn, "
          f"{len(jobs) - drawn} from the cache (experiments and figures looked up: {s['hit']} hit, {s['miss']} miss)")
    return 0
