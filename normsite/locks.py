"""The build's per-entry locks: a result two processes of a build want is computed once.

normref's cache computes a missing entry under ``normref.cache.GUARD(kind, key)``,
which by default takes no lock: a reader's processes may then compute one entry
twice, but never tear it (every write is a temporary file renamed into place).
A build runs several processes at once (the workers of its pool, the zh and en
builds, pytest-xdist workers), and computing the same experiment twice there
wastes a core. So importing :mod:`normsite` installs :func:`locked` as the guard
(:func:`install`): an advisory file lock per entry, under the cache's ``locks/``.
The second process waits for the lock and finds the result on disk.

In a worker of the build's pool (:mod:`normsite.pool`, :data:`WAIT_FOR_OTHERS`
False) a held lock raises :class:`Busy` at once instead of waiting: the pool
puts the task at the back of its queue and runs another meanwhile.

The locks are fcntl's, POSIX only, like the build; a lock dies with its
process, so a killed build leaves none behind.
"""

from __future__ import annotations

import contextlib
import fcntl
import os

from normref import cache

__all__ = ["locked", "Busy", "WAIT_FOR_OTHERS", "STATS", "install"]

# "waited": entries this process found another process computing, and waited for instead of redoing.
STATS = {"waited": 0}

# Set False by a worker of normsite.pool: a result another process is computing raises Busy at once
# instead of waiting, so the pool runs another task meanwhile.
WAIT_FOR_OTHERS = True


class Busy(Exception):
    """Another process is computing this result right now (raised only where waiting is not wanted,
    see :data:`WAIT_FOR_OTHERS`): a scheduler can run something else first and come back to it."""

    def __init__(self, kind: str, key: str):
        super().__init__(f"{kind}/{key[:12]}… is being computed by another process")
        self.kind, self.key = kind, key


@contextlib.contextmanager
def locked(kind: str, key: str):
    """Hold the lock of one cache entry while computing it (an advisory file lock).

    Two processes that want the same missing result then compute it once: the second waits for
    the lock and finds the result on disk (``normref.cache.step`` looks again under the guard).
    With :data:`WAIT_FOR_OTHERS` False a held lock raises :class:`Busy` instead."""
    path = cache.folder("locks") / f"{kind}-{key}.lock"
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if not WAIT_FOR_OTHERS:
                raise Busy(kind, key) from None
            STATS["waited"] += 1
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the lock


def install() -> None:
    """Make :func:`locked` the guard of normref's cache in this process (``import normsite`` does)."""
    cache.GUARD = locked
