"""How many processes a command may run at once: ``NORMREF_WORKERS``, else the cores it may use."""

from __future__ import annotations

import os

__all__ = ["workers"]


def workers() -> int:
    """NORMREF_WORKERS if set (a positive integer, else ValueError naming it), else the cores this
    process may run on. ``python -m normref figures`` and the build's pool (normsite.pool) size by it."""
    env = os.environ.get("NORMREF_WORKERS", "").strip()
    if env:
        try:
            n = int(env)
        except ValueError:
            raise ValueError(f"NORMREF_WORKERS must be a positive integer, got {env!r}") from None
        if n < 1:
            raise ValueError(f"NORMREF_WORKERS must be a positive integer, got {env!r}")
        return n
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1
