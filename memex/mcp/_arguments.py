"""Names a tool does not declare: the check shared by the MCP server and the ``kg`` profile.

A tool's arguments (and the keys of the objects the ``kg`` tools take) are a
closed set: a name outside it is refused with a :class:`~memex.ValidationError`
naming it and, when one is close, the declared name it probably meant, so a
misspelled ``autority`` or ``scope_prefx`` never falls back to a default.
No SDK needed.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from memex._validate import closest, cut
from memex.errors import ValidationError

__all__ = ["refuse_unknown"]

_SHOWN = 64  # characters of an unknown name a message shows


def refuse_unknown(
    given: Iterable[object], declared: Sequence[str], *, field: str = "", noun: str = "argument"
) -> None:
    """Raise if a name in ``given`` is not one of ``declared``.

    Args:
        given: the names received (the keys of the arguments object), in
            the client's order.
        declared: the names the tool (or object) declares.
        field: the path of the object the names belong to (``""`` for a
            tool's arguments, ``"entities[0]"`` for an object in a list).
        noun: what a name is called in the message (``"argument"``,
            ``"field"``).
    Returns:
        ``None`` when every name is declared.
    Raises:
        ValidationError: naming the first unknown name, with its path
            (``"autority: unknown argument (did you mean authority?)"``, or
            ``"... (expected one of: text, scope, ...)"`` when no declared
            name is close), and how many more there are; ``path`` is the
            unknown name's path.

    Complexity: O(len(given) + len(declared)), and one
    :func:`memex._validate.closest` search for the first unknown name.
    """
    known = set(declared)
    unknown = [name for name in given if name not in known]
    if not unknown:
        return
    first = str(unknown[0])
    shown = cut(first, _SHOWN)
    path = f"{field}.{shown}" if field else shown
    close = closest(first, declared)
    if close:
        hint = f" (did you mean {close}?)"
    elif declared:
        hint = f" (expected one of: {', '.join(declared)})"
    else:
        hint = f" (it takes no {noun}s)"
    more = f" (and {len(unknown) - 1} more)" if len(unknown) > 1 else ""
    raise ValidationError(f"{path}: unknown {noun}{hint}{more}", path)
