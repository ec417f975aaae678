"""Pausing Python's cyclic garbage collector around bulk folds."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["gc_paused", "PROMOTE_MIN"]


@contextmanager
def gc_paused(promote: bool = False) -> Iterator[None]:
    """Pause Python's cyclic garbage collector inside the block, then restore it.

    A fold allocates millions of small acyclic objects (records, tuples, trie
    nodes) that reference counting frees on its own; the cyclic collector
    would only re-walk the growing heap (at 10^5 commands, 6 full collections
    cost 1.3 s of a 3.6 s replay). Replays use this; use it around your own
    bulk loads too, and consider ``gc.freeze()`` afterwards (README,
    "Performance").

    Args:
        promote: the block builds long-lived objects (a state: a fold, a
            cascade). The young generations are collected on the way in
            (``gc.collect(1)``: the caller's young objects, a few µs), and when
            the block left at least :data:`PROMOTE_MIN` objects and the process
            has frozen none, they are moved to the oldest generation on the way
            out (:func:`_promote`, O(1)) instead of being walked by the young
            collection that would follow (about 1.7 s of a 12.4 s replay of
            10^6 creates). Collecting first means only what the block made is
            promoted: the caller's young garbage cycles are collected, never
            carried along uncounted.
    """
    was_enabled = gc.isenabled()
    if was_enabled and promote:
        gc.collect(1)
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            if promote and gc.get_count()[0] >= PROMOTE_MIN and gc.get_freeze_count() == 0:
                _promote()
            gc.enable()


#: How many objects (net) a promoting block must have allocated for :func:`gc_paused`
#: to move them straight to the oldest generation.
PROMOTE_MIN = 2_000


def _promote() -> None:
    """Move every tracked object to the oldest generation, in O(1).

    ``gc.freeze()`` splices the generations' lists into the permanent one and
    ``gc.unfreeze()`` splices that into the oldest generation: two list
    splices, no traversal. Without it, the first allocation after a fold of
    n commands starts a young collection that visits all the objects the fold
    made (about 5 per item), then a middle one visits them again. The objects
    moved are not counted toward CPython's trigger of a full collection; as
    :func:`gc_paused` collects the young generations before a promoting
    block, they are the block's own (acyclic state) plus whatever the
    block's callbacks allocated. Skipped when the process has frozen objects
    of its own (``gc.get_freeze_count()``), so a caller's ``gc.freeze()`` is
    never undone.
    """
    gc.freeze()
    gc.unfreeze()
