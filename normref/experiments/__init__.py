"""Experiments whose results the site draws: one module per topic, results cached on disk."""

from __future__ import annotations

import contextlib


@contextlib.contextmanager
def one_thread():
    """Run torch on one thread, then restore the setting.

    The experiments' models are tiny: a matmul is far too small to split, and on
    a busy 2-core machine (the zh and en builds, the tests) a second thread spins
    and waits; we measured small matmuls 20-50x slower with 2 threads than with 1.
    Usable as a context manager or a decorator.
    """
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)
