"""How a value from the memory is shown: its control characters marked, isolated, cut.

No value of the memory may make itself, or the page around it, read as something
else: its bidirectional and invisible characters are shown as ``[U+XXXX]``
(:func:`visible`, :func:`shown_value`), each value is isolated from the text around it
(``<bdi>``), long values are cut (:func:`cut`), times read as UTC (:func:`when`), and an
item's address survives any id (:func:`item_address`).
"""

from __future__ import annotations

import math
import re
import unicodedata
from typing import Any
from urllib.parse import quote, urlencode

import markupsafe

from memex._time import ms_to_iso
from memex.codec import jsonfmt
from memex.errors import MemexError
from memex.models import MemoryItem
from memex.retrieval.search import default_text

__all__ = [
    "REASON",
    "CONTROL_CHARACTERS",
    "ID_CONTROL_CHARACTERS",
    "control_name",
    "visible",
    "shown_value",
    "item_address",
    "when",
    "cut",
]


#: The most characters of a reason (or a label) a list shows.
REASON = 300

#: The characters the inspector shows as ``[U+XXXX]`` instead of letting them act, so
#: that no value from the memory can make itself or the page around it read as something
#: else: the bidirectional controls (U+202A..U+202E embeddings and overrides, U+2066..U+2069
#: isolates, U+200E/U+200F/U+061C marks), the line and paragraph separators, the C0 and
#: C1 control characters (tab, line feed and carriage return excepted), and the
#: characters that show as nothing (zero-width space, word joiner, soft hyphen, byte
#: order mark, invisible operators, Hangul fillers, the tag characters U+E0000..U+E007F,
#: ...), with which two different ids or authors would look the same. Joiners
#: (U+200C, U+200D) and variation selectors are left alone: scripts and emoji need them.
CONTROL_CHARACTERS = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u00ad\u034f\u061c\u115f\u1160\u17b4"
    "\u17b5\u180e\u200b\u200e\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f\u3164"
    "\ufeff\uffa0\ufff9-\ufffb\U000e0000-\U000e007f]"
)


#: :data:`CONTROL_CHARACTERS` and the tab, line feed and carriage return: what an id or
#: a one-line value (an author, a scope, a kind, a title) shows marked, where a text
#: (content, a reason) keeps its line breaks.
ID_CONTROL_CHARACTERS = re.compile("[\t\n\r" + CONTROL_CHARACTERS.pattern[1:])

_NAMES = {"\t": "CHARACTER TABULATION", "\n": "LINE FEED", "\r": "CARRIAGE RETURN"}


def control_name(char: str) -> str:
    """The marker and the Unicode name of one of :data:`CONTROL_CHARACTERS`.

    Args:
        char: one character.
    Returns:
        ``"[U+202E] RIGHT-TO-LEFT OVERRIDE"`` (``"control character"`` for a
        character without a name, such as U+001B).
    """
    name = _NAMES.get(char) or unicodedata.name(char, "control character")
    return f"[U+{ord(char):04X}] {name}"


def visible(text: str, breaks: bool = False) -> str:
    """``text`` with each of :data:`CONTROL_CHARACTERS` replaced by ``[U+XXXX]`` (its code
    point), as plain text: for the places no markup can go (an attribute, a page's title,
    a label of the provenance drawing).

    Args:
        text: any string.
        breaks: mark the tab, line feed and carriage return too
            (:data:`ID_CONTROL_CHARACTERS`: for an id or a one-line value).
    Returns:
        The string shown (unchanged when it holds none of them).
    """
    found = ID_CONTROL_CHARACTERS if breaks else CONTROL_CHARACTERS
    return found.sub(lambda m: f"[U+{ord(m.group()):04X}]", text)


#: What makes an id unfit for a path segment: it is empty, a browser resolves it (``.``,
#: ``..``), the route does not match it (a line feed, and the other control characters
#: to be safe), or a proxy may split or decode it again (``/``, ``\\``, ``%``).
_ROUGH_ID = re.compile(r"[\x00-\x1f\x7f-\x9f/\\%]|^\.{0,2}$|^\s|\s$")


def item_address(item_id: str) -> str:
    """The address of an id's page: ``/item/<id, percent-encoded>``, or
    ``/item?id=<id, percent-encoded>`` for an id a path segment cannot carry as it is
    (empty, ``.``, ``..``, holding ``/``, ``\\``, ``%`` or a control character), or that a
    browser may alter in a path (white space at either end, a bidirectional control or
    an invisible character of :data:`CONTROL_CHARACTERS`). Both answer the same page.

    Args:
        item_id: any string.
    Returns:
        The address, without ``as_of``.
    """
    if _ROUGH_ID.search(item_id) or CONTROL_CHARACTERS.search(item_id):
        return "/item?" + urlencode({"id": item_id}, quote_via=quote)
    return "/item/" + quote(item_id, safe="")


def when(ms: Any) -> str:
    """Unix ms as ``2024-03-04 08:31:01 UTC``; ``"-"`` for ``None`` or a value that is no time."""
    if isinstance(ms, bool) or not isinstance(ms, int | float) or not math.isfinite(ms):
        return "-"
    try:
        return ms_to_iso(int(ms)).replace("T", " ").replace(".000Z", "Z").replace("Z", " UTC")
    except (ValueError, OverflowError, OSError, MemexError):
        return "-"


def cut(text: str, limit: int = 160) -> str:
    """``text``, cut to ``limit`` characters with a final ``…`` when it is longer."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def shown_value(value: Any, breaks: bool = False) -> markupsafe.Markup:
    """A value from the memory as a page shows it (the templates' ``v`` filter): escaped,
    each of :data:`~memex.web.CONTROL_CHARACTERS` shown as a marked ``[U+XXXX]``
    (its name on hover) instead of acting, and the whole isolated in ``<bdi>``, so that
    neither its own direction nor a control character in it can reorder the text
    around it (an id, an author, a number next to it).

    Args:
        value: any value (``None`` shows as nothing; others as ``str(value)``).
        breaks: mark the tab, line feed and carriage return too (an id or a one-line
            value: the ``vid`` filter; a text keeps its line breaks).
    Returns:
        The markup: ``<bdi>...</bdi>``.
    """
    text = "" if value is None else str(value)
    parts: list[str] = []
    last = 0
    found = ID_CONTROL_CHARACTERS if breaks else CONTROL_CHARACTERS
    for m in found.finditer(text):
        parts.append(markupsafe.escape(text[last : m.start()]))
        marker, _, name = control_name(m.group()).partition(" ")
        title = markupsafe.escape(f"{name}: shown, not applied")
        parts.append(f'<span class="ctl" title="{title}">{marker}</span>')
        last = m.end()
    parts.append(markupsafe.escape(text[last:]))
    return markupsafe.Markup(f"<bdi>{''.join(parts)}</bdi>")


def _cut(text: str | None, limit: int) -> str | None:
    return None if text is None else cut(text, limit)


def _text(item: MemoryItem, limit: int = 160) -> str:
    """An item's text as lists show it (its indexed text, else its content as JSON), cut."""
    return cut(default_text(item) or jsonfmt.dumps(item.content), limit)


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None
