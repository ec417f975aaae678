"""The filter algebra: a :class:`~memex.MemoryFilter` compiled into ``item -> bool``.

:func:`compile_filter` validates a filter once and returns a predicate;
:func:`matches_filter` tests one item. The time criteria (``decay``,
``created``) use the formulas of :mod:`memex.retrieval.scoring`. :mod:`memex.retrieval.query`
re-exports the public names and picks the candidates a filter is tested on.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from memex import _time
from memex import _validate as v
from memex.models import MemoryFilter, MemoryItem
from memex.models.queries import check_filter_depth
from memex.retrieval.scoring import decay_function, item_timestamp

__all__ = ["Predicate", "compile_filter", "matches_filter"]

Predicate = Callable[[MemoryItem], bool]

_MISSING = object()


def _resolve_path(meta: Any, path: str) -> Any:
    cur = meta
    for seg in path.split("."):
        if isinstance(cur, dict):
            if seg not in cur:
                return _MISSING
            cur = cur[seg]
        elif isinstance(cur, list):
            if not seg.isascii() or not seg.isdigit() or (len(seg) > 1 and seg[0] == "0"):
                return _MISSING
            i = int(seg)
            if i >= len(cur):
                return _MISSING
            cur = cur[i]
        else:
            return _MISSING
    return cur


def _meta_equal(stored: Any, wanted: Any) -> bool:
    """JavaScript ``===`` on JSON values: containers are never equal, bool is not a number."""
    if isinstance(wanted, dict | list | tuple) or isinstance(stored, dict | list | tuple):
        return False
    if isinstance(wanted, bool) or isinstance(stored, bool):
        return isinstance(wanted, bool) and isinstance(stored, bool) and wanted == stored
    if isinstance(wanted, int | float) and isinstance(stored, int | float):
        return bool(stored == wanted)
    if wanted is None or stored is None:
        return wanted is None and stored is None
    return type(stored) is type(wanted) and bool(stored == wanted)


def as_filter(
    f: MemoryFilter | Mapping[str, Any] | None, *, strict: bool = False
) -> MemoryFilter | None:
    """``f`` as a :class:`~memex.MemoryFilter` (a wire mapping validated into one), or ``None``.

    An unknown key of a mapping (at any depth: ``{"range": {"authority":
    {"mn": 1}}}``) is ignored with a :class:`~memex.MemexWarning`, once per
    key in a process, as the MemEX functions do; with ``strict`` it is a
    :class:`~memex.ValidationError` naming its path (the everyday methods of
    the store).

    Raises:
        ValidationError: ``f`` is neither a filter, a valid filter mapping nor
            ``None`` (paths under ``filter``); with ``strict``, an unknown key
            (``filter.scop: unknown key of a MemoryFilter (did you mean scope?)``).
    """
    result: MemoryFilter | None = (
        None if f is None else v.record_arg(f, MemoryFilter, "filter", strict=strict)
    )
    return result


# The exact-match criteria, in test order: filter key -> the predicate made
# from the filter's value (equal to it, or a non-empty field in the list).
# Plain closures: a scan calls one per item, so no generic accessor in between.
_EXACT: tuple[tuple[str, Callable[[Any], Predicate]], ...] = (
    ("author", lambda w: lambda it: it.author == w),
    ("kind", lambda w: lambda it: it.kind == w),
    ("source_kind", lambda w: lambda it: it.source_kind == w),
    ("intent_id", lambda w: lambda it: it.intent_id == w),
    ("intent_ids", lambda w: lambda it: bool(it.intent_id) and it.intent_id in w),
    ("task_id", lambda w: lambda it: it.task_id == w),
    ("task_ids", lambda w: lambda it: bool(it.task_id) and it.task_id in w),
)


def compile_filter(
    f: MemoryFilter | Mapping[str, Any] | None, *, now: int | None = None
) -> Predicate:
    """Compile a filter into a predicate ``item -> bool``.

    Criteria are tested in the order :class:`~memex.MemoryFilter` lists them
    (ids, scope, scope_prefix, author, kind, source_kind, intent_id,
    intent_ids, task_id, task_ids, range, has_parent, is_root, parents,
    decay, created, not, meta, meta_has, or) and the first failure stops
    the test, so a later criterion's error (a missing timestamp) only surfaces
    for items that reach it. ``now`` is fixed at compile time (default: the
    clock, read once). Compiling once and testing many items avoids
    re-validating the filter per item.
    """
    return _compile(as_filter(f), _time.now_ms() if now is None else v.now_ms(now), 1)


def _compile(flt: MemoryFilter | None, now: int, depth: int) -> Predicate:
    if flt is None:
        return lambda item: True
    if depth == 1:
        check_filter_depth(flt)  # an instance built in Python was never checked
    checks: list[Predicate] = []
    add = checks.append

    if flt.ids is not None:
        ids = frozenset(flt.ids)
        add(lambda it: it.id in ids)
    if flt.scope is not None:
        scope = flt.scope
        add(lambda it: it.scope == scope)
    if flt.scope_prefix is not None:
        prefix = flt.scope_prefix
        add(lambda it: isinstance(it.scope, str) and it.scope.startswith(prefix))
    for key, make in _EXACT:
        wanted = getattr(flt, key)
        if wanted is not None:
            add(make(frozenset(wanted) if isinstance(wanted, list) else wanted))
    if flt.range is not None:
        for name in ("authority", "conviction", "importance"):
            r = getattr(flt.range, name)
            if r is None:
                continue

            def in_range(
                it: MemoryItem, name: str = name, lo: Any = r.min, hi: Any = r.max
            ) -> bool:
                val = getattr(it, name)
                if val is None:
                    return False
                if lo is not None and not val >= lo:
                    return False
                return not (hi is not None and not val <= hi)

            add(in_range)
    if flt.has_parent is not None:
        hp = flt.has_parent
        add(lambda it: hp in (it.parents or ()))
    if flt.is_root is not None:
        want_root = flt.is_root
        add(lambda it: (not it.parents) == want_root)
    if flt.parents is not None:
        pf = flt.parents
        if pf.includes is not None:
            inc = pf.includes
            add(lambda it: inc in (it.parents or ()))
        if pf.includes_any is not None:
            anyof = pf.includes_any
            add(lambda it: any(p in (it.parents or ()) for p in anyof))
        if pf.includes_all is not None:
            allof = pf.includes_all
            add(lambda it: all(p in (it.parents or ()) for p in allof))
        if pf.count is not None:
            clo, chi = pf.count.min, pf.count.max
            add(
                lambda it: (
                    (clo is None or len(it.parents or ()) >= clo)
                    and (chi is None or len(it.parents or ()) <= chi)
                )
            )
    if flt.decay is not None:
        decay_of, dmin = decay_function(flt.decay.config, now), flt.decay.min
        add(lambda it: decay_of(it) >= dmin)
    if flt.created is not None:
        before, after = flt.created.before, flt.created.after
        if before is not None:
            add(lambda it: item_timestamp(it) < before)
        if after is not None:
            add(lambda it: item_timestamp(it) >= after)
    if flt.not_ is not None:
        inner = _compile(flt.not_, now, depth + 1)
        add(lambda it: not inner(it))
    if flt.meta is not None:
        wanted = list(flt.meta.items())
        add(lambda it: all(_meta_equal(_resolve_path(it.meta, p), w) for p, w in wanted))
    if flt.meta_has is not None:
        paths = list(flt.meta_has)
        add(lambda it: all(_resolve_path(it.meta, p) is not _MISSING for p in paths))
    if flt.or_:
        alts = [_compile(sub, now, depth + 1) for sub in flt.or_]
        add(lambda it: any(a(it) for a in alts))

    if not checks:
        return lambda item: True
    if len(checks) == 1:
        return checks[0]

    def predicate(it: MemoryItem) -> bool:
        for c in checks:
            if not c(it):
                return False
        return True

    return predicate


def matches_filter(
    item: MemoryItem, f: MemoryFilter | Mapping[str, Any], *, now: int | None = None
) -> bool:
    """Return whether ``item`` satisfies filter ``f`` (every present key must hold; ``{}`` matches all).

    Raises:
        InvalidTimestampError: a reached ``decay``/``created`` criterion needs
            a time the item lacks.
        ValidationError: a malformed filter mapping, an ``item`` that is not
            a :class:`MemoryItem` or a bad ``now``.
    """
    v.instance(item, MemoryItem, "item")
    return compile_filter(f, now=now)(item)
