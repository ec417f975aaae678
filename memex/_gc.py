"""Pausing Python's cyclic garbage collector around bulk folds."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["gc_paused"]


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector inside the block, then restore it.

    A fold allocates millions of small acyclic objects (records, tuples, trie
    nodes) that reference counting frees on its own; the cyclic collector
    would only re-walk the growing heap (at 10^5 commands, 6 full collections
    cost 1.3 s of a 3.6 s replay). Replays use this; use it around your own
    bulk loads too, and consider ``gc.freeze()`` afterwards (README,
    "Performance").
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
