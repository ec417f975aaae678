"""Field types shared by the records: ``Annotated`` aliases carrying their checker.

Each alias is a type for readers and type checkers, and carries the checker
(from :mod:`memex._validate`) that :func:`memex.models._schema.record` compiles
into the record's validation. Score aliases also carry an :class:`Update`
checker without the [0, 1] bound: a ``memory.update`` (or intent/task update)
keeps an out-of-range score, as the TypeScript library does, so its logs
replay the same.
"""

from __future__ import annotations

from typing import Annotated, Any

from memex import _validate as v
from memex.models._schema import Update

__all__ = [
    "Str",
    "OptStr",
    "OptStrs",
    "Score",
    "OptScore",
    "Num",
    "OptNum",
    "Bool",
    "OptBool",
    "JsonObject",
    "OptJsonObject",
    "OptMeta",
    "PlainDict",
    "OptPlainDict",
    "JsonMapping",
    "Partial",
    "OptJsonMapping",
    "OptIntMs",
    "OptNonNegInt",
    "AnyValue",
    "memory_meta",
]


@v.c_wire(Any, recheck=True)
@v.fast("type({x}) is dict", post=True)
def memory_meta(value: Any, path: str) -> dict[str, Any]:
    """A memory item's or edge's ``meta``: a JSON object whose ``agent_id`` and
    ``session_id``, when present, are strings (they are filter keys)."""
    d = v.json_object(value, path)
    for key in ("agent_id", "session_id"):
        if key in d and not isinstance(d[key], str):
            raise v.fail(f"{path}.{key}", "a string", d[key])
    return d


_opt_num = v.opt(v.num)

Str = Annotated[str, v.req_str]
OptStr = Annotated[str | None, v.opt(v.req_str)]
OptStrs = Annotated[list[str] | None, v.opt(v.str_list)]
Score = Annotated[float, v.num01, Update(v.num)]
OptScore = Annotated[float | None, v.opt(v.num01), Update(_opt_num)]
Num = Annotated[float, v.num]
OptNum = Annotated[float | None, _opt_num]
Bool = Annotated[bool, v.boolean]
OptBool = Annotated[bool | None, v.opt(v.boolean)]
JsonObject = Annotated[dict[str, Any], v.json_object]
OptJsonObject = Annotated[dict[str, Any] | None, v.opt(v.json_object)]
OptMeta = Annotated[dict[str, Any] | None, v.opt(memory_meta)]
PlainDict = Annotated[dict[str, Any], v.plain_dict]
JsonMapping = Annotated[dict[str, Any], v.json_mapping]
#: An update's ``partial`` (field name → new value; each value's depth counted from itself).
Partial = Annotated[dict[str, Any], v.partial_mapping]
OptJsonMapping = Annotated[dict[str, Any] | None, v.opt(v.json_mapping)]
OptPlainDict = Annotated[dict[str, Any] | None, v.opt(v.plain_dict)]
OptIntMs = Annotated[int | None, v.opt(v.int_ms)]
OptNonNegInt = Annotated[int | None, v.opt(v.nonneg_int)]
AnyValue = Annotated[Any, v.any_value]
