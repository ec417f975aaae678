"""Record backing: attrs (memex's records) against a ``msgspec.Struct`` of the same schema.

Issue 9 asks for one schema per record and for the choice between attrs field
metadata and ``msgspec.Struct`` (``rename`` and tagged unions) to be measured on
the three operations that matter: **create** (a validated ``MemoryItem`` from
keywords), **apply** (the copy a ``memory.update`` makes: a frozen record with
two fields replaced, unvalidated, as the reducer does after type-checking the
partial) and **encode** (one item to its wire JSON bytes with JavaScript number
formatting).

``msgspec-struct`` is a faithful prototype: a frozen, keyword-only Struct with
the same fields and wire order, ``omit_defaults`` for the absent optional
fields, and a ``__post_init__`` running the same fast-path checks memex runs
(types, score bounds, JSON content and meta). Validation work is therefore
equal; what differs is construction, copying and encoding.

Run::

    .venv/bin/python -m pytest benchmarks/test_bench_records.py \\
        --benchmark-columns=min,median,mean,rounds --benchmark-sort=name
"""

from __future__ import annotations

import math
from typing import Any

import msgspec
import pytest

from memex import MemoryItem
from memex import _validate as v
from memex.codec.jsonfmt import dumpb
from memex.models import replace_unchecked


def _is01(x: Any) -> bool:
    t = type(x)
    return (t is float or t is int) and 0 <= x <= 1


class StructItem(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """The prototype: MemoryItem's schema as a Struct with equal validation."""

    id: str
    scope: str
    kind: str
    content: dict[str, Any]
    author: str
    source_kind: str
    parents: list[str] | None = None
    authority: float
    conviction: float | None = None
    importance: float | None = None
    created_at: int | None = None
    intent_id: str | None = None
    task_id: str | None = None
    meta: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        p = self.parents
        if not (
            type(self.id) is str
            and type(self.scope) is str
            and type(self.kind) is str
            and type(self.content) is dict
            and type(self.author) is str
            and type(self.source_kind) is str
            and (p is None or (type(p) is list and all(type(x) is str for x in p)))
            and _is01(self.authority)
            and (self.conviction is None or _is01(self.conviction))
            and (self.importance is None or _is01(self.importance))
            and (self.created_at is None or type(self.created_at) is int)
            and (self.meta is None or type(self.meta) is dict)
        ):
            raise v.fail("item", "a well-typed item", self)
        v.json_object(self.content, "content")
        if self.meta is not None:
            v.json_object(self.meta, "meta")


_ENC = msgspec.json.Encoder()
_SUSPECT = (b".0,", b".0}", b"e-")

KW: dict[str, Any] = {
    "id": "018f0000-0000-7000-8000-000000000001",
    "scope": "project:p3/notes",
    "kind": "observation",
    "content": {"text": "deploy failed on staging because of a missing env var"},
    "author": "agent:a1",
    "source_kind": "observed",
    "parents": ["018f0000-0000-7000-8000-000000000000"],
    "authority": 0.8,
    "conviction": 0.6,
    "importance": 0.4,
    "created_at": 1_700_000_000_000,
    "meta": {"agent_id": "a1", "session_id": "s9"},
}
CHANGES = {"authority": 0.5, "importance": 0.9}

BACKINGS = ["attrs", "msgspec-struct"]


@pytest.mark.benchmark(group="records: create a validated MemoryItem")
@pytest.mark.parametrize("backing", BACKINGS)
def test_create(benchmark: Any, backing: str) -> None:
    cls: Any = MemoryItem if backing == "attrs" else StructItem
    out = benchmark(lambda: cls(**KW))
    assert out.authority == 0.8


@pytest.mark.benchmark(group="records: apply (copy with two fields replaced)")
@pytest.mark.parametrize("backing", BACKINGS)
def test_apply(benchmark: Any, backing: str) -> None:
    if backing == "attrs":
        item = MemoryItem(**KW)
        out = benchmark(replace_unchecked, item, CHANGES)
    else:
        sitem = StructItem(**KW)
        out = benchmark(msgspec.structs.replace, sitem, **CHANGES)
    assert out.importance == 0.9


@pytest.mark.benchmark(group="records: encode one item to wire JSON")
@pytest.mark.parametrize("backing", BACKINGS)
def test_encode(benchmark: Any, backing: str) -> None:
    if backing == "attrs":
        item = MemoryItem(**KW)
        out = benchmark(lambda: dumpb(item.to_dict()))
    else:
        sitem = StructItem(**KW)

        def encode() -> bytes:
            # msgspec prints 1.0 as "1.0" where JavaScript prints "1": the same
            # post-scan memex's encoder does is needed for wire-exact bytes
            buf = _ENC.encode(sitem)
            if any(s in buf for s in _SUSPECT):
                buf = dumpb(msgspec.to_builtins(sitem))
            return buf

        out = benchmark(encode)
    assert out == dumpb(MemoryItem(**KW).to_dict())
    assert not math.isnan(len(out))
