"""Pausing Python's cyclic garbage collector around bulk folds."""

from __future__ import annotations

import gc
import threading
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

    The collector is one switch for the whole process, so blocks are counted:
    the first block to enter (in any thread) records whether the collector was
    on and turns it off; blocks that enter while others run, in this thread or
    another, only join the count; the last block to leave restores what the
    first one found. So a block ending in one thread never turns the collector
    back on under another thread's block, and a caller's ``gc.disable()``
    before the first block is kept. Entering and leaving take a lock: O(1).

    Args:
        promote: the block builds long-lived objects (a state: a fold, a
            cascade). When it is the first block to enter and the collector
            was on, the young generations are collected on the way in
            (``gc.collect(1)``: the caller's young objects, a few µs); when the
            last block leaves and the blocks left at least :data:`PROMOTE_MIN`
            objects and the process has frozen none, they are moved to the
            oldest generation (:func:`_promote`, O(1)) instead of being walked
            by the young collection that would follow (about 1.7 s of a 12.4 s
            replay of 10^6 creates). Collecting first means the caller's young
            garbage cycles are collected, never carried along uncounted. A
            promoting block that enters while another block runs promotes
            nothing: the young objects made before it entered were not
            collected.
    """
    global _active, _restore, _promote_at_end
    with _lock:
        if _active == 0:
            _restore = gc.isenabled()
            _promote_at_end = promote and _restore
            if _promote_at_end:
                gc.collect(1)
            gc.disable()
        _active += 1
    try:
        yield
    finally:
        with _lock:
            _active -= 1
            if _active == 0 and _restore:
                if _promote_at_end and gc.get_count()[0] >= PROMOTE_MIN and not _frozen():
                    _promote()
                gc.enable()


_lock = threading.Lock()
#: How many :func:`gc_paused` blocks are running (all threads), whether the collector
#: was on when the first of them entered, and whether to promote when the last leaves.
_active = 0
_restore = False
_promote_at_end = False

#: How many objects (net) a promoting block must have allocated for :func:`gc_paused`
#: to move them straight to the oldest generation.
PROMOTE_MIN = 2_000


#: Whether this process was seen holding frozen objects (see :func:`_frozen`).
_seen_frozen = False


def _frozen() -> bool:
    """Whether the process holds objects frozen by ``gc.freeze()`` (its own, or a caller's).

    ``gc.get_freeze_count()`` walks the whole permanent generation (O(frozen
    objects): about 0.13 s for the 10^7 objects of a 10^6-item state frozen by
    a server, on every promoting block), so a non-zero answer is remembered
    for the life of the process: once anything was frozen, blocks never
    promote again (a caller's ``gc.unfreeze()`` later costs only the
    promotion's saving, never a freeze undone). While nothing is frozen the
    list is empty and the check is O(1).
    """
    global _seen_frozen
    if not _seen_frozen and gc.get_freeze_count():
        _seen_frozen = True
    return _seen_frozen


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
    of its own (:func:`_frozen`), so a caller's ``gc.freeze()`` is never
    undone.
    """
    gc.freeze()
    gc.unfreeze()
