"""JSON text of plain Python values, byte for byte as JavaScript's ``JSON.stringify``.

The work is done by msgspec's C encoder. msgspec already matches
``JSON.stringify`` for strings (UTF-8 raw; only ``"``, ``\\`` and U+0000-U+001F
escaped, with the short forms ``\\b \\f \\n \\r \\t`` and lowercase ``\\u00xx``;
U+007F and U+2028/U+2029 raw), for ints, bools, ``None``, NaN/Infinity
(``null``) and for pretty printing (``msgspec.json.format(buf, indent=2)`` is
``JSON.stringify(v, null, 2)``). It differs only for some floats:

* integral floats print with ``.0`` (``1.0``, ``-0.0``), or in exponent form
  from ``1e16`` on (``1e16``, ``1.2345678901234568e20``), where JavaScript
  prints ``1``, ``0`` and all digits up to ``1e21``;
* exponents never carry ``+`` (``1e21`` vs JavaScript's ``1e+21``);
* ``[1e-6, 1e-5)`` prints in exponent form (``1e-6``), where JavaScript prints
  ``0.000001``.

:func:`dumpb` therefore encodes once and scans the output for the only text
those floats can produce (``.0`` or an exponent right before ``,``, ``]``,
``}`` or the end). Only when the scan hits (possibly a false alarm from text
inside a string) it rewrites the offending floats in a copy of the value (ints
or ``msgspec.Raw`` texts from :func:`js_number`) and encodes again.
"""

from __future__ import annotations

import math
import re
from typing import Any

import msgspec

__all__ = ["dumps", "dumpb", "js_number"]

_TWO53 = 9007199254740992.0  # below this every integral float prints as int(x) in JS


def js_number(x: float) -> str:
    """Return ``x`` as JavaScript's ``JSON.stringify`` prints a number.

    Shortest round-trip digits (the digits of Python's ``repr``, which are the
    ones JavaScript picks), laid out by ECMAScript's Number::toString: decimal
    notation when ``1e-6 <= |x| < 1e21`` (``0.000001``, ``100000000000000000000``,
    ``1`` for ``1.0``), otherwise exponent notation with an explicit sign and no
    zero padding (``1e-7``, ``1.5e-7``, ``1e+21``, ``1.2345e+22``).

    Args:
        x: a ``float`` (an ``int`` is accepted and converted with ``float(x)``
            first; ints too large for a float raise ``OverflowError``).

    Returns:
        The JSON number text (``str``). ``-0.0`` gives ``"0"``; NaN and
        +-Infinity give ``"null"``, as in JSON output.

    Raises:
        OverflowError: ``x`` is an ``int`` too large for a float.
    """
    x = float(x)
    if not math.isfinite(x):
        return "null"
    if x.is_integer() and -_TWO53 <= x <= _TWO53:
        return str(int(x))  # also maps -0.0 to "0"
    r = repr(x)
    sign = ""
    if r[0] == "-":
        sign = "-"
        r = r[1:]
    mant, _, exp = r.partition("e")
    int_part, _, frac_part = mant.partition(".")
    digits = int_part + frac_part
    # value = 0.<digits> * 10**n
    n = len(int_part) + (int(exp) if exp else 0)
    stripped = digits.lstrip("0")
    n -= len(digits) - len(stripped)
    digits = stripped.rstrip("0")
    k = len(digits)
    if k <= n <= 21:
        return sign + digits + "0" * (n - k)
    if 0 < n <= 21:
        return sign + digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return sign + "0." + "0" * -n + digits
    e = n - 1
    exp_text = f"e+{e}" if e > 0 else f"e{e}"
    if k == 1:
        return sign + digits + exp_text
    return sign + digits[0] + "." + digits[1:] + exp_text


def _fix_float(x: float) -> int | float | msgspec.Raw:
    """Return what msgspec must encode in place of ``x`` to print it as JS does."""
    if x.is_integer():
        if -_TWO53 <= x <= _TWO53:
            return int(x)
        return msgspec.Raw(js_number(x).encode())
    if -1e-5 < x < 1e-5:
        return msgspec.Raw(js_number(x).encode())
    return x  # NaN, +-inf (msgspec prints null) and floats msgspec prints right


def _enc_hook(obj: Any) -> Any:
    # msgspec rejects subclasses of str/int/float; print them as their base value.
    if isinstance(obj, float):
        return msgspec.Raw(js_number(obj).encode())
    if isinstance(obj, str):
        return str(obj)
    if isinstance(obj, int):
        return int(obj)
    raise TypeError(f"Cannot serialise objects of type {type(obj).__name__} as JSON")


def _has_surrogate(s: str) -> bool:
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _escape_surrogates(s: str) -> bytes:
    """JSON text of ``s`` with lone surrogates as ``\\udxxx`` (as well-formed JSON.stringify)."""
    parts = []
    for ch in s:
        if "\ud800" <= ch <= "\udfff":
            parts.append(f"\\u{ord(ch):04x}".encode())
        else:
            parts.append(_encode(ch)[1:-1])
    return b'"' + b"".join(parts) + b'"'


# Leaf types the walk skips without a call (exact types; bool is not an int here).
_ATOMS = frozenset([str, int, bool, type(None)])
_ATOMS_NO_STR = frozenset([int, bool, type(None)])


def _member(x: Any, surrogates: bool) -> Any:
    """A non-atom member of a container, normalised (``x`` itself when nothing changes).

    Floats are handled inline, as most are printed by msgspec exactly as
    JavaScript prints them: only integral floats and those below 1e-5 in
    magnitude need a replacement.
    """
    if type(x) is float:
        if x.is_integer():
            return int(x) if -_TWO53 <= x <= _TWO53 else _fix_float(x)
        if -1e-5 < x < 1e-5:
            return _fix_float(x)
        return x
    return _norm(x, surrogates)


def _norm(v: Any, surrogates: bool) -> Any:
    """Return ``v`` with the floats msgspec would misprint replaced.

    With ``surrogates``, strings holding lone surrogates are replaced too (by
    ``msgspec.Raw`` escapes; a dict with such a key becomes one ``Raw``).
    Containers are copied only when something inside them changed; everything
    else is returned as is.
    """
    tv = type(v)
    if tv is float:
        return _fix_float(v)
    if tv is str:
        if surrogates and _has_surrogate(v):
            return msgspec.Raw(_escape_surrogates(v))
        return v
    is_dict = tv is dict or (tv is not list and tv is not tuple and isinstance(v, dict))
    if not is_dict and not (tv is list or tv is tuple or isinstance(v, (list, tuple))):
        if isinstance(v, float):
            return msgspec.Raw(js_number(v).encode())
        if surrogates and isinstance(v, str) and _has_surrogate(v):
            return msgspec.Raw(_escape_surrogates(v))
        return v
    # one walk over the members of a dict (by key) or a list (by index): only
    # the members that change are collected, and nothing is copied otherwise
    atoms = _ATOMS_NO_STR if surrogates else _ATOMS
    changed: dict[Any, Any] | None = None
    for key, x in v.items() if is_dict else enumerate(v):
        if type(x) in atoms:
            continue
        y = _member(x, surrogates)
        if y is not x:
            if changed is None:
                changed = {}
            changed[key] = y
    if not is_dict:
        if changed is None:
            return v
        out = list(v)
        for i, y in changed.items():
            out[i] = y
        return out
    d = {**v, **changed} if changed else v
    if surrogates and any(type(k) is str and _has_surrogate(k) for k in d):
        items = [
            (_escape_surrogates(k) if type(k) is str else _encode(str(k))) + b":" + _encode(x)
            for k, x in d.items()
        ]
        return msgspec.Raw(b"{" + b",".join(items) + b"}")
    return d


_ENCODER = msgspec.json.Encoder(enc_hook=_enc_hook)
_encode = _ENCODER.encode

# Text only floats that msgspec prints differently from JavaScript can produce:
# "<digit>.0" (integral float, -0.0) or an exponent ("e16", "e-6") right before a
# delimiter or the end. Two literal-prefix searches are much faster than one
# alternation over 10 MB.
_SUSPECT_DOT = re.compile(rb"\.0(?:[,\]}]|\Z)")
_SUSPECT_EXP = re.compile(rb"e-?[0-9]+(?:[,\]}]|\Z)")


_TOKEN = re.compile(rb'"(?:[^"\\]|\\.)*"|[{}\[\],:]|[^{}\[\],:"]+')
_CLOSE = {b"{": b"}", b"[": b"]"}


def _reindent(buf: bytes) -> bytes:
    """Pretty-print compact JSON ``buf`` like ``JSON.stringify(v, null, 2)`` (slow path)."""
    toks = _TOKEN.findall(buf)
    out: list[bytes] = []
    depth = 0
    i = 0
    n = len(toks)
    while i < n:
        t = toks[i]
        if t in _CLOSE:
            if i + 1 < n and toks[i + 1] == _CLOSE[t]:
                out.append(t + _CLOSE[t])
                i += 2
                continue
            depth += 1
            out.append(t + b"\n" + b"  " * depth)
        elif t == b"}" or t == b"]":
            depth -= 1
            out.append(b"\n" + b"  " * depth + t)
        elif t == b",":
            out.append(b",\n" + b"  " * depth)
        elif t == b":":
            out.append(b": ")
        else:
            out.append(t)
        i += 1
    return b"".join(out)


def dumpb(value: Any, *, pretty: bool = False) -> bytes:
    """Return the UTF-8 JSON text of ``value`` exactly as JavaScript's ``JSON.stringify``.

    Args:
        value: a plain JSON-like value: ``dict`` with ``str`` keys (order kept),
            ``list``, ``tuple`` (printed as an array), ``str``, ``int`` (any
            size, printed as its digits), ``float``, ``bool``, ``None``;
            subclasses of these are printed as their base type. Number keys
            are written as msgspec writes them (``{1: 2}`` -> ``{"1":2}``;
            float keys keep msgspec's float text). Other types
            msgspec supports natively (e.g. ``datetime``, ``uuid.UUID``,
            ``set``) are encoded as msgspec does, without the JavaScript float
            rules applied to their contents.
        pretty: ``False`` (default) for compact output (``,`` and ``:`` without
            spaces); ``True`` for ``JSON.stringify(value, null, 2)``: two-space
            indent, ``": "`` after keys, one element per line, ``[]``/``{}``
            when empty, no trailing newline.

    Returns:
        UTF-8 ``bytes``. Numbers as :func:`js_number` prints them (``1.0`` ->
        ``1``, ``-0.0`` -> ``0``, NaN/Infinity -> ``null``, ``1e21`` ->
        ``1e+21``); strings with non-ASCII raw and only ``"``, ``\\`` and
        U+0000-U+001F escaped; lone surrogates as ``\\udxxx`` escapes.

    Raises:
        TypeError: ``value`` contains an object of an unsupported type, or a
            dict key that is neither ``str`` nor a number.
    """
    try:
        buf = _encode(value)
    except UnicodeEncodeError:
        # Lone surrogates: rare; msgspec.json.format rejects their \u escapes.
        buf = _encode(_norm(value, True))
        return _reindent(buf) if pretty else buf
    if _SUSPECT_DOT.search(buf) is not None or _SUSPECT_EXP.search(buf) is not None:
        buf = _encode(_norm(value, False))
    if pretty:
        return msgspec.json.format(buf, indent=2)
    return buf


def dumps(value: Any, *, pretty: bool = False) -> str:
    """Return the JSON text of ``value`` exactly as JavaScript's ``JSON.stringify``.

    Same as :func:`dumpb` (see there for argument shapes, output rules and
    errors), decoded to ``str``.
    """
    return dumpb(value, pretty=pretty).decode("utf-8")
