"""What the command line says about a mistake: one line naming the parameter and what it expected, status 2.

A command's ``run`` raises :class:`UsageError` for input it cannot use;
``python -m normref`` prints ``python -m normref CMD: error: MESSAGE`` and
exits with status 2, as argparse does for its own checks. The helpers here are
the checks more than one command needs.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

__all__ = ["UsageError", "positive_int", "positive_ints", "subset_of", "check_writable"]


class UsageError(ValueError):
    """Input the command cannot use; the message names the parameter and what was expected."""


def positive_int(text: str) -> int:
    """argparse type: an integer of at least 1."""
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return n


def positive_ints(text: str) -> tuple[int, ...]:
    """argparse type: comma-separated integers of at least 1 (``1024,4096``)."""
    try:
        out = tuple(int(v) for v in text.split(","))
    except ValueError:
        out = ()
    if not out or min(out) < 1:
        raise argparse.ArgumentTypeError(f"expected comma-separated positive integers such as 1024,4096, got {text!r}")
    return out


def subset_of(choices):
    """argparse type: a comma-separated subset of ``choices`` (``dyt1,derf``), as a tuple in the order given."""
    choices = tuple(choices)

    def parse(text: str) -> tuple[str, ...]:
        got = tuple(v.strip() for v in text.split(","))
        bad = [v for v in got if v not in choices]
        if bad or not got:
            raise argparse.ArgumentTypeError(f"expected a comma-separated subset of {', '.join(choices)}, "
                                             f"got {', '.join(map(repr, bad)) or repr(text)}")
        return got

    return parse


def check_writable(path: Path, option: str, folder: bool = False) -> None:
    """Fail now, before any work, if ``path`` (a file, or a folder when ``folder``) cannot be written.

    The check writes what the command will write: it makes the missing folders and
    creates (then removes) a probe file, so a read-only or impossible place
    (``/proc/x``) fails here and not after minutes of work. It then removes the
    folders it made, so a check that fails later (an unknown ``--only``) leaves
    nothing behind: the command makes them again when it writes."""
    path = Path(path)
    where = path if folder else path.parent
    made: list[Path] = []
    try:
        if path.exists() and (folder != path.is_dir()):
            raise UsageError(f"{option}: expected {'a folder' if folder else 'a file'}, "
                             f"but {path} is {'a folder' if path.is_dir() else 'a file'}")
        blocker = next((p for p in [where, *where.parents] if p.exists() and not p.is_dir()), None)
        if blocker is not None:
            raise UsageError(f"{option}: cannot write {'into ' if folder else ''}{path}: {blocker} is a file, "
                             f"not a folder; expected a writable {'folder' if folder else 'file path'}")
        made = [p for p in [where, *where.parents] if not p.exists()]
        where.mkdir(parents=True, exist_ok=True)
        if not folder and path.exists():
            with open(path, "ab"):  # appends nothing: the file is kept as it is until the command writes it
                pass
        else:
            probe = where / f".normref-write-test-{os.getpid()}" if folder else path
            with open(probe, "xb"):
                pass
            probe.unlink()
    except OSError as e:
        raise UsageError(f"{option}: cannot write {'into ' if folder else ''}{path} "
                         f"({e.strerror or e}); expected a writable {'folder' if folder else 'file path'}") from None
    finally:
        for d in made:  # deepest first
            try:
                d.rmdir()
            except OSError:
                break
