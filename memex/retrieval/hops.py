"""Multi-hop retrieval: the hits of a question bring in the rest of an answer.

An answer often spans several items: "where did Rosa go?" matches the item
that names Rosa, while the place is in the one before it, in the item it was
derived from, or in an alias of it. :func:`follow_hops` runs after the text
hits are known and adds, one level deep, what the graph links them to:
parents, the other end of ``SUPPORTS`` / ``ABOUT`` / ``ALIAS`` edges, the
rest of an alias group, and the items naming the same entities
(:class:`memex.retrieval.entities.EntityIndex`), each with a relevance damped
below the hit that brought it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from itertools import islice

from memex.models import MemoryItem
from memex.retrieval.entities import EntityIndex
from memex.state.graph import GraphState

__all__ = ["HOP_LINKS", "follow_hops"]

#: The edge kinds a hop follows, both ways (active edges only).
HOP_LINKS: tuple[str, ...] = ("SUPPORTS", "ABOUT", "ALIAS")


def follow_hops(
    state: GraphState,
    entities: EntityIndex | None,
    chosen: dict[str, MemoryItem],
    rel: dict[str, float],
    pre_ok: Callable[[MemoryItem], bool],
    via: dict[str, tuple[str, str]],
    *,
    damping: float = 0.5,
    seeds: int = 10,
    per_link: int = 8,
    max_holders: int = 50,
) -> None:
    """Add to ``chosen`` / ``rel`` / ``via`` (in place) the items the best hits link to.

    Args:
        state: the graph.
        entities: the entity index of ``state``'s items; ``None``: no entity links.
        chosen: ``id -> item`` of the hits, best first (insertion order).
        rel: ``id -> relevance`` of every id in ``chosen``.
        pre_ok: the ``pre`` filter; a brought item must pass it.
        via: ``id -> (seed id, link)`` for every item a seed brought or raised.
        damping: a brought item's relevance is ``damping * rel[seed]``.
        seeds: how many of the first hits bring items.
        per_link: at most this many items per entity of a seed; a seed with more
            ``ABOUT`` edges than this brings none over them.
        max_holders: an entity named by more items than this is skipped (too common
            to tell anything: the speaker of a whole conversation).

    Rule: the seeds are the first ``seeds`` ids of ``chosen`` as given (nothing added
    here is a seed: one level, no transitive hops). Each seed brings, in this order,
    with relevance ``damping * rel[seed]`` and the link name recorded in ``via``:

    1. its ``parents`` (the string ids): ``"parent"``;
    2. the other end of its active ``SUPPORTS``, ``ABOUT``, ``ALIAS`` edges, either
       direction (:meth:`GraphState.incident_edges`): the edge kind; a seed with
       more than ``per_link`` active ``ABOUT`` edges brings none over them (a
       subject many items are ``ABOUT``, e.g. a profile, is not evidence for
       each of them);
    3. the other members of its alias group, the ids reached from it along active
       ``ALIAS`` edges followed from their ``from`` end, through ids the state lacks
       (:meth:`GraphState.alias_walk`, the walk of :func:`memex.get_alias_group`):
       ``"alias group"``;
    4. for each entity the index gives the seed, unless more than ``max_holders``
       items name it, the ``per_link`` items naming it (the seed excluded) that the
       state holds, are not superseded and pass ``pre_ok``, closest in
       ``created_at`` to the seed (an item without a time is farthest; equal
       distances in the index's holder order; a seed without a time takes them in
       holder order): ``"entity:<name>"``.

    An item brought several times keeps the largest relevance, and on a tie the
    first bringing (earlier seed, then the order above); a seed never brings itself.
    Then each brought item that the state holds, that is not the ``to`` end of an
    active ``SUPERSEDES`` edge (:meth:`GraphState.superseded_among`) and passes
    ``pre_ok`` is added with that relevance, or, when it is in ``chosen`` already
    (a hit, seed or not), raised to it only if that is larger; ``via`` records the
    seed and link of every item added or raised. Brought items join ``chosen`` in
    the order they were first brought. Nothing is validated (the caller did).

    Complexity: O(s * (p + d + a + E * h log h)) for s seeds, each with p parents,
    d active edges, an alias group reached over a ids and their edges, and E
    entities each held by h <= ``max_holders`` items (plus, once per distinct item
    checked, O(its edges) for the superseded test): with the caps, O(s * (edges
    + E * max_holders log max_holders)); ``per_link`` bounds what is brought, not
    what is read, since the closest usable holders are found by sorting them.
    """
    items = state.items
    usable_memo: dict[str, MemoryItem | None] = {}

    def usable(item_id: str) -> MemoryItem | None:
        """The item when the state holds it, it is not superseded and passes ``pre_ok``."""
        if item_id in usable_memo:
            return usable_memo[item_id]
        it = items.get(item_id)
        if it is not None and (state.superseded_among((item_id,)) or not pre_ok(it)):
            it = None
        usable_memo[item_id] = it
        return it

    brought: dict[str, float] = {}
    how: dict[str, tuple[str, str]] = {}
    for seed in list(islice(chosen, seeds)):
        r = damping * rel[seed]
        for other, link in _links(state, entities, chosen[seed], usable, per_link, max_holders):
            if other != seed and r > brought.get(other, -1.0):
                brought[other] = r
                how[other] = (seed, link)
    for other, r in brought.items():
        if other in chosen:
            if r <= rel[other] or usable(other) is None:
                continue
            rel[other] = r
        else:
            it = usable(other)
            if it is None:
                continue
            chosen[other] = it
            rel[other] = r
        via[other] = how[other]


def _links(
    state: GraphState,
    entities: EntityIndex | None,
    seed: MemoryItem,
    usable: Callable[[str], MemoryItem | None],
    per_link: int,
    max_holders: int,
) -> Iterator[tuple[str, str]]:
    """``(other id, link)`` for everything ``seed`` brings, in the order of follow_hops's rule."""
    sid = seed.id
    for p in seed.parents or ():
        if isinstance(p, str):
            yield p, "parent"
    by_kind: dict[str, list[str]] = {k: [] for k in HOP_LINKS}
    for e in state.incident_edges((sid,)):
        ends = by_kind.get(e.kind)
        if ends is not None:
            ends.append(e.to if e.from_ == sid else e.from_)
    for kind, ends in by_kind.items():
        if kind == "ABOUT" and len(ends) > per_link:
            continue  # a subject many items are ABOUT (a profile): not evidence for each
        for other in ends:
            yield other, kind
    for other in state.alias_walk(sid)[1:]:  # the rest of its alias group
        yield other, "alias group"
    if entities is None:
        return
    t0 = seed.created_at
    get = state.items.get
    for name in entities.entities_of(sid):
        if entities.count(name) > max_holders:
            continue
        holders = [h for h in entities.holders(name) if h != sid]
        if t0 is not None:
            holders.sort(key=lambda h: _distance(get(h), t0))
        taken = 0
        for h in holders:
            if taken == per_link:
                break
            if usable(h) is not None:
                taken += 1
                yield h, "entity:" + name


def _distance(it: MemoryItem | None, t0: int) -> float:
    if it is None or it.created_at is None:
        return math.inf
    return float(abs(it.created_at - t0))
