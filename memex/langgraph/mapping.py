"""How a LangGraph namespace, key and value become a memex scope, meta and content.

The one-to-one mapping :class:`~memex.langgraph.BeliefStore` stores by, and the
checks it makes before anything is written:

* a namespace ``("users", "ada", "memories")`` is the scope
  ``"users/ada/memories"``: the labels joined with ``/``, each label first
  percent-encoding ``%`` (as ``%25``) and ``/`` (as ``%2F``), so no two
  namespaces share a scope (:func:`namespace_to_scope`,
  :func:`scope_to_namespace`);
* the key is kept in the item's ``meta`` under :data:`META_KEY`;
* the value is the item's ``content``.

LangGraph's own label rules are kept (a label is a non-empty string without
``.`` or NUL; a written namespace is not empty and its root is not
``"langgraph"``), plus memex's (valid Unicode). A namespace that breaks them
raises :class:`InvalidNamespaceError`, which is both LangGraph's
``InvalidNamespaceError`` and :class:`memex.ValidationError`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any, Final

from langgraph.store.base import InvalidNamespaceError as _LangGraphNamespaceError

from memex import _validate as v
from memex.errors import ValidationError

__all__ = [
    "META_KEY",
    "META_CREATED",
    "META_INDEX",
    "InvalidNamespaceError",
    "namespace_to_scope",
    "scope_to_namespace",
    "check_namespace",
    "check_key",
    "matches_filter",
    "check_filter",
    "matches_condition",
]

#: The ``meta`` key that holds an item's LangGraph key (a string).
META_KEY: Final = "langgraph_key"
#: The ``meta`` key that holds the first version's ``created_at`` (unix ms) on a later version.
META_CREATED: Final = "langgraph_created_at"
#: The ``meta`` key that holds a ``put``'s ``index`` argument (``False`` or a list of paths).
META_INDEX: Final = "langgraph_index"


class InvalidNamespaceError(_LangGraphNamespaceError, ValidationError):
    """A namespace LangGraph or memex refuses: both ``langgraph.store.base.InvalidNamespaceError``
    and :class:`memex.ValidationError` (so either ``except`` catches it).

    Args:
        message: what is wrong, starting with the path.
        path: the field: ``"namespace"``, ``"namespace[i]"`` (the i-th label,
            0-based) or ``"namespace_prefix[i]"`` and the like.
    Attributes:
        path: as given.
    """

    def __init__(self, message: str, path: str = "namespace") -> None:
        ValidationError.__init__(self, message, path)


def _encode(label: str) -> str:
    return label.replace("%", "%25").replace("/", "%2F")


_ESCAPE = re.compile("%2F|%25")


def _decode(part: str) -> str:
    return _ESCAPE.sub(lambda m: "/" if m.group() == "%2F" else "%", part)


def namespace_to_scope(namespace: Sequence[str]) -> str:
    """The memex scope of a LangGraph namespace: labels joined with ``/``, each label's
    ``%`` written ``%25`` and ``/`` written ``%2F`` first.

    Args:
        namespace: a tuple of labels (not checked here: see :func:`check_namespace`).
    Returns:
        The scope string (``""`` for the empty namespace).

    Example:
        >>> namespace_to_scope(("users", "ada/bo", "100%"))
        'users/ada%2Fbo/100%25'
        >>> scope_to_namespace('users/ada%2Fbo/100%25')
        ('users', 'ada/bo', '100%')
    """
    return "/".join(_encode(label) for label in namespace)


def scope_to_namespace(scope: str) -> tuple[str, ...]:
    """The LangGraph namespace of a memex scope, the inverse of :func:`namespace_to_scope`.

    Args:
        scope: a scope string (``""`` gives the empty namespace).
    Returns:
        The tuple of labels (``%2F`` read back as ``/``, ``%25`` as ``%``).
    """
    if not scope:
        return ()
    return tuple(_decode(part) for part in scope.split("/"))


def check_namespace(
    namespace: Any, path: str = "namespace", *, writing: bool = False, wildcards: bool = False
) -> tuple[str, ...]:
    """``namespace`` as a tuple if LangGraph and memex both accept it.

    Args:
        namespace: a tuple (or list) of labels.
        path: the name the error gives (``"namespace"``, ``"namespace_prefix"``, ``"prefix"``).
        writing: the namespace of a ``put``: it must not be empty and its root
            must not be ``"langgraph"`` (LangGraph's rule for ``put``).
        wildcards: accepted for symmetry with list conditions (``"*"`` is a valid label anyway).
    Returns:
        The labels as a tuple.
    Raises:
        InvalidNamespaceError: not a tuple or list; a label that is not a
            string, is empty, holds ``.`` or NUL, or holds a lone surrogate
            (naming ``path[i]``); with ``writing``, an empty namespace or the
            root ``"langgraph"``.
    """
    del wildcards
    if not isinstance(namespace, tuple | list):
        raise InvalidNamespaceError(
            f"{path}: expected a tuple of strings, got {type(namespace).__name__}", path
        )
    labels = tuple(namespace)
    for i, label in enumerate(labels):
        where = f"{path}[{i}]"
        if not isinstance(label, str):
            raise InvalidNamespaceError(
                f"{where}: namespace labels must be strings, got {type(label).__name__}", where
            )
        if not label:
            raise InvalidNamespaceError(f"{where}: namespace labels cannot be empty", where)
        if "." in label:
            raise InvalidNamespaceError(
                f"{where}: namespace labels cannot contain periods ('.'): {label!r}", where
            )
        if "\x00" in label:
            raise InvalidNamespaceError(
                f"{where}: namespace labels cannot contain NUL bytes", where
            )
        if not v.valid_text(label):
            raise InvalidNamespaceError(
                f"{where}: expected valid Unicode text (it holds a lone surrogate)", where
            )
    if writing:
        if not labels:
            raise InvalidNamespaceError(f"{path}: cannot be empty", path)
        if labels[0] == "langgraph":
            raise InvalidNamespaceError(
                f'{path}: the root label cannot be "langgraph" (reserved by LangGraph): {labels}',
                path,
            )
    return labels


def check_key(key: Any) -> str:
    """``key`` if memex can keep it: a string of valid Unicode (``""`` included, as in LangGraph).

    Raises:
        ValidationError: naming ``key``: not a string, or a lone surrogate.
    """
    if not isinstance(key, str):
        raise v.fail("key", "a string", key)
    if not v.valid_text(key):
        raise ValidationError("key: expected valid Unicode text (it holds a lone surrogate)", "key")
    return key


# -- filters -----------------------------------------------------------------------------
_OPERATORS = ("$eq", "$ne", "$gt", "$gte", "$lt", "$lte")


def _number(x: Any) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool) and not math.isnan(x)


def _order(value: Any, op: str, bound: Any) -> bool:
    """``value op bound`` for two numbers or two strings; ``False`` for anything else."""
    if _number(value) and _number(bound):
        pass
    elif not (isinstance(value, str) and isinstance(bound, str)):
        return False
    if op == "$gt":
        return bool(value > bound)
    if op == "$gte":
        return bool(value >= bound)
    if op == "$lt":
        return bool(value < bound)
    return bool(value <= bound)


def _apply(value: Any, op: str, operand: Any, path: str) -> bool:
    if op == "$eq":
        return _equal(value, operand)
    if op == "$ne":
        return not _equal(value, operand)
    if op in _OPERATORS:
        return _order(value, op, operand)
    raise ValidationError(
        f"{path}: unsupported operator {op!r} (expected one of {', '.join(_OPERATORS)})",
        path,
    )


def _child(path: str, key: Any) -> str:
    """The error path of a filter's key under ``path``: ``filter.status``, ``filter.l[0]``."""
    return f"{path}.{v.path_key(key)}" if isinstance(key, str) else f"{path}[{key!r}]"


def _equal(a: Any, b: Any) -> bool:
    """JSON equality: ``True`` is not ``1``; ``1 == 1.0``."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    return bool(a == b)


def _matches(value: Any, condition: Any, path: str) -> bool:
    if isinstance(condition, Mapping):
        if any(isinstance(k, str) and k.startswith("$") for k in condition):
            return all(_apply(value, op, operand, path) for op, operand in condition.items())
        if not isinstance(value, Mapping):
            return False
        return all(_matches(value.get(k), c, _child(path, k)) for k, c in condition.items())
    if isinstance(condition, list | tuple):
        return (
            isinstance(value, list | tuple)
            and len(value) == len(condition)
            and all(
                _matches(x, c, f"{path}[{i}]")
                for i, (x, c) in enumerate(zip(value, condition, strict=True))
            )
        )
    return _equal(value, condition)


def _check(condition: Any, path: str) -> None:
    if isinstance(condition, Mapping):
        if any(isinstance(k, str) and k.startswith("$") for k in condition):
            for op in condition:
                if op not in _OPERATORS:
                    _apply(None, op, None, path)  # raises, naming the path
            return
        for k, c in condition.items():
            _check(c, _child(path, k))
    elif isinstance(condition, list | tuple):
        for i, c in enumerate(condition):
            _check(c, f"{path}[{i}]")


def check_filter(filter: Mapping[str, Any] | None) -> None:
    """Refuse a search ``filter`` with an operator other than ``$eq $ne $gt $gte $lt
    $lte`` anywhere in it, before any item is read. O(size of the filter).

    Args:
        filter: the filter (a mapping) or ``None``.
    Raises:
        ValidationError: an unknown operator, naming the key path it stands under
            (``filter.status``; ``filter.profile.age`` for a nested field,
            ``filter.tags[1]`` for a list element).

    Example:
        >>> check_filter({"status": {"$in": ["a", "b"]}})
        Traceback (most recent call last):
        ...
        memex.errors.ValidationError: filter.status: unsupported operator '$in' (expected one of $eq, $ne, $gt, $gte, $lt, $lte)
    """
    for k, c in (filter or {}).items():
        _check(c, _child("filter", k))


def matches_filter(value: Mapping[str, Any], filter: Mapping[str, Any] | None) -> bool:
    """Whether an item's value passes a LangGraph search ``filter``.

    Each top-level key of ``filter`` names a field of the value; its condition
    is a plain value (equal: JSON equality, a mapping matching the keys it
    names, a list element by element) or a mapping of operators ``$eq $ne
    $gt $gte $lt $lte`` (all must hold). ``$gt``-style operators compare two
    numbers or two strings and are false for anything else (a missing field,
    a string against a number); ``$ne`` is true for a missing field.

    Args:
        value: the item's value.
        filter: the filter, or ``None`` (every value passes).
    Returns:
        ``True`` when every condition holds.
    Raises:
        ValidationError: an operator other than the six, naming the key path it
            stands under (``filter.status``, ``filter.profile.age``).

    Example:
        >>> matches_filter({"n": 5, "tag": "a"}, {"n": {"$gte": 3, "$lt": 9}, "tag": "a"})
        True
        >>> matches_filter({"n": 5}, {"missing": {"$gt": 1}})
        False
    """
    if not filter:
        return True
    check_filter(filter)
    return all(_matches(value.get(k), c, _child("filter", k)) for k, c in filter.items())


def matches_condition(match_type: str, pattern: Sequence[str], namespace: tuple[str, ...]) -> bool:
    """Whether ``namespace`` starts (``"prefix"``) or ends (``"suffix"``) with ``pattern``,
    a ``"*"`` label of the pattern matching any one label.

    Raises:
        ValidationError: a match type other than ``"prefix"`` and ``"suffix"``.
    """
    if len(namespace) < len(pattern):
        return False
    if match_type == "prefix":
        pairs = zip(namespace, pattern, strict=False)
    elif match_type == "suffix":
        pairs = zip(reversed(namespace), reversed(tuple(pattern)), strict=False)
    else:
        raise ValidationError(
            f'match_type: expected "prefix" or "suffix", got {match_type!r}', "match_type"
        )
    return all(p == "*" or label == p for label, p in pairs)
