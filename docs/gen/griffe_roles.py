"""A griffe extension that makes memex's reST-flavoured docstrings read well in MkDocs.

memex's docstrings are Google style with Sphinx roles (``:func:`get_items```,
``:class:`~memex.GraphState```) and doctest blocks. mkdocstrings renders them as
Markdown, where a role would show as literal ``:func:`` text and a ``>>>`` line
as a nested block quote. This extension rewrites each docstring once the
package is loaded (the source files are never changed):

* a role becomes an optional cross-reference: a link to the object's entry in
  the API reference when that page documents it, plain code otherwise (so
  strict mode never fails on a role that names a private helper);
* a run of doctest lines (``>>>`` / ``...`` and the output below them) becomes
  a ``pycon`` code block;
* a paragraph ending in ``::`` (a reST literal block) ends in ``:``;
* a section title (``Args:``, ``Returns:``, ``Raises:``, ...) written right
  under the previous section gets the blank line griffe's Google parser needs
  to see it as a section.

Loaded by mkdocs.yml (``extensions: - docs/gen/griffe_roles.py``).
"""

from __future__ import annotations

import html
import re
from typing import Any

import griffe

_ROLE = re.compile(r":(?:func|class|mod|meth|data|attr|exc|obj|const):`(~?)([^`<>]+?)(?:\(\))?`")
_FENCE = re.compile(r"^\s*(```|~~~)")


def _resolve(obj: griffe.Object, target: str) -> str:
    """The dotted path ``target`` names as seen from ``obj`` (best effort)."""
    if target.startswith("memex"):
        return target
    head = target.split(".", 1)[0]
    scope: Any = obj
    while scope is not None:
        members = getattr(scope, "members", {})
        if head in members:
            member = members[head]
            try:
                base = member.target_path if isinstance(member, griffe.Alias) else member.path
            except Exception:  # an alias that cannot be resolved
                base = member.path
            rest = target[len(head) :]
            return base + rest
        scope = scope.parent
    return target if "." in target else f"memex.{target}"


def _role(obj: griffe.Object, match: re.Match[str]) -> str:
    tilde, target = match.group(1), match.group(2).strip()
    title = target.rsplit(".", 1)[-1] if tilde else target
    if match.group(0).startswith((":func:", ":meth:")):
        title += "()"
    ident = _resolve(obj, target)
    return (
        f'<autoref identifier="{html.escape(ident)}" optional>'
        f"<code>{html.escape(title)}</code></autoref>"
    )


def _doctests(text: str) -> str:
    """Wrap each run of doctest lines (and the output lines under them) in a pycon fence."""
    out: list[str] = []
    lines = text.split("\n")
    i = 0
    in_fence = False
    while i < len(lines):
        line = lines[i]
        if _FENCE.match(line):
            in_fence = not in_fence
        if not in_fence and line.lstrip().startswith(">>>"):
            indent = line[: len(line) - len(line.lstrip())]
            block = []
            while i < len(lines) and lines[i].strip():
                block.append(lines[i][len(indent) :] if lines[i].startswith(indent) else lines[i])
                i += 1
            out.append(f"{indent}```pycon")
            out.extend(indent + b for b in block)
            out.append(f"{indent}```")
            continue
        out.append(line)
        i += 1
    return "\n".join(out)


def _literal_blocks(text: str) -> str:
    """``Usage::`` -> ``Usage:``; a lone ``::`` line disappears."""
    text = re.sub(r"(?m)^[ \t]*::[ \t]*$", "", text)
    return re.sub(r"(?m)(\S)::[ \t]*$", r"\1:", text)


_SECTION = re.compile(
    r"^[ \t]*(Args|Arguments|Parameters|Returns|Yields|Raises|Attributes|Examples?|"
    r"Notes?|Warns|Warnings?|See Also|Other Parameters):[ \t]*$"
)


def _section_breaks(text: str) -> str:
    """A blank line before each section title that directly follows a non-blank line."""
    out: list[str] = []
    for line in text.split("\n"):
        if _SECTION.match(line) and out and out[-1].strip():
            out.append("")
        out.append(line)
    return "\n".join(out)


def rewrite(obj: griffe.Object, text: str) -> str:
    """The Markdown form of one docstring of ``obj``."""
    text = _section_breaks(_literal_blocks(_doctests(text)))
    return _ROLE.sub(lambda m: _role(obj, m), text)


class SphinxRoles(griffe.Extension):
    """Rewrite every docstring of the package once it is loaded (see the module docstring)."""

    def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:
        seen: set[int] = set()
        stack: list[Any] = [pkg]
        while stack:
            obj = stack.pop()
            if id(obj) in seen or isinstance(obj, griffe.Alias):
                continue
            seen.add(id(obj))
            if obj.docstring is not None:
                obj.docstring.value = rewrite(obj, obj.docstring.value)
            stack.extend(obj.members.values())
