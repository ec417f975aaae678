"""Write the tables of docs/concepts.md from memex's own constants and records.

Each table sits between two markers in docs/concepts.md::

    <!-- BEGIN GENERATED edge-kinds -->
    ...
    <!-- END GENERATED edge-kinds -->

and is rebuilt from the code: the kinds from ``memex.models.kinds`` (``KNOWN_*``,
the values of the ``Known*`` literal types), the fields and keys from the
records' own schemas (``Cls.__memex_fields__``: attribute, wire key, checker), their
types from the annotations, the commands from ``memex.models.commands``. Only
the one-line meanings are written here, and every table checks that it has a
meaning for exactly the names the code has: a kind, field or key added to memex
without one (or one removed) makes this script fail.

    python docs/gen/concept_tables.py          # rewrite docs/concepts.md
    python docs/gen/concept_tables.py --check  # exit 1 if it is stale

tests/test_docs.py runs the check.
"""

from __future__ import annotations

import inspect
import re
import sys
import types
import typing
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import attrs

import memex
from memex.models import commands as cmd_module
from memex.models import events as event_module
from memex.models import kinds
from memex.transplant import ExportOptions, ImportOptions

PAGE = Path(__file__).resolve().parent.parent / "concepts.md"

# ---------------------------------------------------------------------------
# Meanings (the only hand-written part)
# ---------------------------------------------------------------------------

MEMORY_KINDS = {
    "observation": "something seen or told: a user's statement, a tool's reading",
    "assertion": "a claim stated as true by its author",
    "assumption": "taken as true for now, without evidence",
    "hypothesis": "a guess to be confirmed or refuted by later evidence",
    "derivation": "concluded from other items (its `parents`)",
    "simulation": "the outcome of a simulated or imagined run, not of the world",
    "policy": 'a rule the agent follows ("always ask before moving events")',
    "trait": "a lasting property of someone or something",
}
SOURCE_KINDS = {
    "user_explicit": "the user said so",
    "observed": "seen by a tool or sensor",
    "derived_deterministic": "computed by a rule; what memex's own helpers write "
    "(`mark_contradiction`, `resolve_contradiction`, `mark_alias`)",
    "agent_inferred": "an agent's inference",
    "simulated": "produced by a simulation",
    "imported": "brought in from another system",
}
EDGE_KINDS = {
    "DERIVED_FROM": "a derivation recorded as a link, next to an item's `parents` list; "
    "no built-in behaviour (provenance walks read `parents`)",
    "CONTRADICTS": "the two items cannot both hold; an active one is listed by "
    "`get_contradictions` and handled by retrieval's `contradictions=` policy",
    "SUPPORTS": "`from` is evidence for `to`; `memex why` lists it, "
    '`expand={"edges": ["SUPPORTS"]}` follows it',
    "ABOUT": "`from` is about `to` (a topic or an entity); no built-in behaviour",
    "SUPERSEDES": "`from` replaces `to`; the target of an active one is dropped by "
    "retrieval's contradiction policies (`resolve_contradiction` writes one)",
    "ALIAS": "the two items name the same thing; written both ways by `mark_alias`, "
    "followed by `get_alias_group` and slices' `include_aliases`",
}
NAMESPACES = {
    "memory": "memory commands and events (the memory graph)",
    "task": "task commands (the task graph)",
    "agent": "an agent's own records",
    "tool": "tool calls and results",
    "net": "network traffic",
    "app": "the host application",
    "chat": "conversation turns",
    "system": "system records",
    "debug": "diagnostics",
}

ENTITY_FIELDS: dict[str, dict[str, str]] = {
    "MemoryItem": {
        "id": "UUIDv7 (minted by `create_memory_item`); its time is the item's time when "
        "`created_at` is absent",
        "scope": "where the item belongs, a path such as `user:ada/preferences` "
        "(`scope` and `scope_prefix` filters are indexed)",
        "kind": "what sort of belief it is: a memory kind below, or any string",
        "content": 'the belief itself, a JSON object (`{"text": ...}` by convention)',
        "author": "who wrote it (`user:ada`, `agent:aria`, `tool:calendar`)",
        "source_kind": "how the author came by it: a source kind below, or any string",
        "parents": "ids of the items it was derived from (its support)",
        "authority": "how far the source is trusted, in [0, 1]",
        "conviction": "how sure the author is, in [0, 1]",
        "importance": "how much it matters now, in [0, 1]",
        "created_at": "unix ms; decay ages the item from it",
        "intent_id": "the intent it serves",
        "task_id": "the task that produced it",
        "meta": "free JSON object (`agent_id`, `session_id` must be strings)",
    },
    "Edge": {
        "edge_id": "UUIDv7",
        "from_": "the source item's id (Python `from_`)",
        "to": "the target item's id",
        "kind": "an edge kind below, or any string",
        "weight": "strength in [0, 1]",
        "author": "who asserted the link",
        "source_kind": "how the author came by it",
        "authority": "how far the link is trusted, in [0, 1]",
        "active": "`false`: kept in the graph but ignored by most reads (`edge.update`)",
        "meta": "free JSON object",
    },
    "Intent": {
        "id": "UUIDv7",
        "parent_id": "the intent it is a sub-goal of",
        "label": "the goal, short (`plan-half-marathon`)",
        "description": "the goal, long",
        "priority": "in [0, 1]",
        "owner": "who pursues it",
        "status": "`active`, `paused`, `completed` or `cancelled` (changed only by transition commands)",
        "context": "free JSON object",
        "root_memory_ids": "the memory items the goal starts from",
        "meta": "free JSON object",
    },
    "Task": {
        "id": "UUIDv7",
        "intent_id": "the intent it serves",
        "parent_id": "the task it is a step of",
        "action": "what to do (`draft_training_plan`)",
        "label": "a readable name",
        "status": "`pending`, `running`, `completed`, `failed` or `cancelled` "
        "(changed only by transition commands)",
        "priority": "in [0, 1]",
        "context": "free JSON object",
        "result": "what `task.complete` reported",
        "error": "what `task.fail` reported",
        "input_memory_ids": "the memory items it reads",
        "output_memory_ids": "the memory items it wrote",
        "agent_id": "the agent running it (set by `task.start`)",
        "attempt": "how many times it was started",
        "meta": "free JSON object",
    },
}

FILTER_KEYS: dict[str, dict[str, str]] = {
    "MemoryFilter": {
        "ids": "the item's id is in the list (indexed)",
        "scope": "the scope equals it (indexed)",
        "scope_prefix": "the scope starts with it (indexed)",
        "author": "the author equals it",
        "kind": "the kind equals it",
        "source_kind": "the source kind equals it",
        "range": 'per-score bounds, `{"authority": {"min": 0.5}}` (`ScoreRanges`); '
        "an item lacking a ranged score fails",
        "intent_id": "the item's `intent_id` equals it",
        "intent_ids": "the item's `intent_id` is in the list",
        "task_id": "the item's `task_id` equals it",
        "task_ids": "the item's `task_id` is in the list",
        "has_parent": "the id is among the item's `parents`",
        "is_root": "`true`: the item has no parents; `false`: it has some",
        "parents": "conditions on the `parents` list (`ParentsFilter`)",
        "decay": "the item's decay multiplier under a config is at least `min` (`DecayFilter`)",
        "created": "the item's time is in a window of unix ms (`CreatedFilter`)",
        "not_": "a sub-filter that must not match",
        "meta": 'dot path → value, each equal (`{"agent_id": "aria"}`); an object or '
        "list value never matches",
        "meta_has": "dot paths that must resolve in `meta`",
        "or_": "sub-filters of which at least one must match (`[]` is ignored)",
    },
    "ScoreRanges": {
        "authority": "a `Range` for authority",
        "conviction": "a `Range` for conviction",
        "importance": "a `Range` for importance",
    },
    "Range": {"min": "inclusive lower bound", "max": "inclusive upper bound"},
    "ParentsFilter": {
        "includes": "this id is among the parents",
        "includes_any": "at least one of these is (`[]` never matches)",
        "includes_all": "all of these are (`[]` always matches)",
        "count": "a `Range` on the number of parents",
    },
    "DecayFilter": {
        "config": "a decay config (`DecayConfig`)",
        "min": "the least multiplier kept, in [0, 1]",
    },
    "CreatedFilter": {
        "before": "item time < this (unix ms)",
        "after": "item time >= this (unix ms)",
    },
    "EdgeFilter": {
        "from_": "the edge's source id",
        "to": "the edge's target id",
        "kind": "the edge kind",
        "min_weight": "the weight is set and at least this",
        "active_only": "only active edges (the default when absent)",
    },
    "IntentFilter": {
        "owner": "the owner equals it",
        "status": "the status equals it",
        "statuses": "the status is in the list",
        "min_priority": "priority >= it",
        "has_memory_id": "the id is among `root_memory_ids`",
        "parent_id": "the parent intent equals it",
        "is_root": "`true`: no parent intent; `false`: has one",
    },
    "TaskFilter": {
        "intent_id": "the intent equals it",
        "action": "the action equals it",
        "status": "the status equals it",
        "statuses": "the status is in the list",
        "agent_id": "the agent equals it",
        "min_priority": "priority >= it",
        "has_input_memory_id": "the id is among `input_memory_ids`",
        "has_output_memory_id": "the id is among `output_memory_ids`",
        "parent_id": "the parent task equals it",
        "is_root": "`true`: no parent task; `false`: has one",
    },
}

OPTION_KEYS: dict[str, dict[str, str]] = {
    "QueryOptions": {
        "sort": "a `SortOption` or a list of them (lexicographic)",
        "limit": "at most this many results",
        "offset": "skip this many first",
    },
    "SortOption": {
        "field": "`authority`, `conviction`, `importance` or `recency`",
        "order": "`asc` or `desc`",
    },
    "ScoreWeights": {
        "relevance": "weight of the match with the question (needs `query=`)",
        "authority": "weight of authority",
        "conviction": "weight of conviction",
        "importance": "weight of importance",
        "decay": "a `DecayConfig`: the sum is multiplied by the item's decay multiplier",
    },
    "DecayConfig": {
        "rate": "in [0, 1], per interval",
        "interval": "`hour`, `day` or `week`",
        "type": "`exponential` `(1-rate)^n`, `linear` `max(0, 1-rate·n)` or "
        "`step` `(1-rate)^floor(n)`, n = age / interval",
    },
    "ScoredQueryOptions": {
        "pre": "a `MemoryFilter` applied before scoring (`ids`/`scope`/`scope_prefix` "
        "narrow the candidates by index)",
        "post": "a `MemoryFilter` applied after scoring",
        "min_score": "drop entries scoring below it",
        "limit": "at most this many (a heap selects the top entries)",
        "offset": "skip this many first",
        "candidates": "with a query: how many best text matches are scored (default 200)",
        "expand": "with a query: bring the hits' parents and linked items (`ExpandOptions`)",
        "hops": "with a query: bring the rest of an answer spanning several items (bool, default on)",
        "time": "with a query: prefer items in the time the question names (bool, default on)",
    },
    "ExpandOptions": {
        "parents": "levels of parents each hit brings along (default 0)",
        "edges": "edge kinds whose active edges bring the item at the other end",
        "damping": "relevance factor per level, in [0, 1] (default 0.5)",
    },
    "DiversityOptions": {
        "author_penalty": "subtracted per earlier entry by the same author",
        "parent_penalty": "subtracted per earlier occurrence of each parent id",
        "source_penalty": "subtracted per earlier entry of the same source kind",
    },
    "ExportOptions": {
        "memory_ids": "the memory items to start from",
        "intent_ids": "the intents to start from",
        "task_ids": "the tasks to start from",
        "include_parents": "walk `parents` up",
        "include_children": "walk children down",
        "include_aliases": "follow active `ALIAS` edges both ways",
        "include_related_tasks": "add the tasks of the chosen intents and items",
        "include_related_intents": "add the intents of the chosen items",
    },
    "ImportOptions": {
        "skip_existing_ids": "leave an entity whose id exists alone (else update it in place)",
        "shallow_compare_existing": "compare such entities; report differing ones as conflicts",
        "re_id_on_difference": "import a differing entity as a copy under a new id",
    },
}

SMART_RETRIEVE = {
    "state": "the memory graph",
    "budget": "what the context can spare, in `cost_fn` units",
    "cost_fn": "the cost of one item (tokens, characters)",
    "weights": "`ScoreWeights`",
    "filter": "a `MemoryFilter` on the candidates",
    "contradictions": '`"surface"` (keep both sides, fill `contradicted_by`) or '
    '`"filter"` (keep the stronger side); `None`: no policy',
    "diversity": "`DiversityOptions`",
    "now": "the clock decay is computed at, unix ms (default: now)",
    "query": "a question: candidates become its best text matches",
    "index": "the `TextIndex` to search (default: built for the state on first use)",
    "candidates": "with a query: how many best matches are scored",
    "expand": "with a query: `ExpandOptions`",
    "hops": "with a query: multi-hop (bool)",
    "time": "with a query: time in the question (bool)",
}

# ---------------------------------------------------------------------------
# Rendering
# ---------------------------------------------------------------------------

_SCALARS = {str: "string", float: "number", int: "integer", bool: "boolean"}


def type_text(tp: Any) -> str:
    """A short reader's name for an annotation (``list[str] | None`` -> ``list of strings``)."""
    args = typing.get_args(tp)
    if typing.get_origin(tp) in (typing.Union, types.UnionType):
        parts = [type_text(a) for a in args if a is not type(None)]
        return " or ".join(parts)
    if tp in _SCALARS:
        return _SCALARS[tp]
    if typing.get_origin(tp) is dict:
        return "object"
    if typing.get_origin(tp) is list:
        inner = type_text(args[0])
        return "list of " + (inner + "s" if inner in _SCALARS.values() else inner)
    if isinstance(tp, type):
        return f"`{tp.__name__}`"
    return str(tp)


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _check(what: str, described: Mapping[str, str], actual: list[str]) -> None:
    missing = [n for n in actual if n not in described]
    extra = [n for n in described if n not in actual]
    if missing or extra:
        raise SystemExit(
            f"docs/gen/concept_tables.py: {what}: no meaning written for {missing}, "
            f"meanings for names the code does not have: {extra}"
        )


def value_table(values: tuple[str, ...], meanings: Mapping[str, str], what: str) -> str:
    _check(what, meanings, list(values))
    rows = [f"| `{v}` | {_cell(meanings[v])} |" for v in values]
    return "\n".join([f"| {what} | meaning |", "|---|---|", *rows])


def record_table(cls: Any, meanings: Mapping[str, str], *, required: bool = False) -> str:
    """One row per field of ``cls`` (wire key, type, required/default, meaning)."""
    _check(cls.__name__, meanings, [name for name, _, _ in cls.__memex_fields__])
    hints = typing.get_type_hints(cls)
    fields = attrs.fields_dict(cls)
    head = "| key | type | " + ("required | " if required else "") + "meaning |"
    rows = [head, "|---|---|" + ("---|" if required else "") + "---|"]
    for name, wire, _ in cls.__memex_fields__:
        key = f"`{wire}`" + (f" (`{name}`)" if wire != name else "")
        default = fields[name].default
        need = ("yes | " if default is attrs.NOTHING else " | ") if required else ""
        meaning = meanings[name]
        if default not in (None, attrs.NOTHING):
            shown = str(default).lower() if isinstance(default, bool) else default
            meaning += f" (default `{shown}`)"
        rows.append(f"| {key} | {type_text(hints[name])} | {need}{_cell(meaning)} |")
    return "\n".join(rows)


def records_block(meanings: Mapping[str, Mapping[str, str]], classes: Mapping[str, Any]) -> str:
    parts = []
    for name, table in meanings.items():
        cls = classes[name]
        parts.append(f"**`{name}`**\n\n{record_table(cls, table)}")
    return "\n\n".join(parts)


def smart_retrieve_table() -> str:
    sig = inspect.signature(memex.smart_retrieve)
    names = list(sig.parameters)
    _check("smart_retrieve", SMART_RETRIEVE, names)
    rows = ["| argument | default | meaning |", "|---|---|---|"]
    for name, p in sig.parameters.items():
        default = "required" if p.default is inspect.Parameter.empty else f"`{p.default!r}`"
        rows.append(f"| `{name}` | {default} | {_cell(SMART_RETRIEVE[name])} |")
    return "\n".join(rows)


def command_table() -> str:
    rows = ["| type | class | fields |", "|---|---|---|"]
    for name in cmd_module.__all__:
        cls = getattr(cmd_module, name)
        if not (isinstance(cls, type) and attrs.has(cls) and "type" in attrs.fields_dict(cls)):
            continue
        tag = attrs.fields_dict(cls)["type"].default
        fields = ", ".join(f"`{w}`" for n, w, _ in cls.__memex_fields__ if n != "type")
        rows.append(f"| `{tag}` | `{name}` | {fields} |")
    return "\n".join(rows)


def event_table() -> str:
    groups = [
        ("memory", kinds.MEMORY_EVENT_TYPES, "MemoryLifecycleEvent"),
        ("intent", event_module.INTENT_EVENT_TYPES, "IntentLifecycleEvent"),
        ("task", event_module.TASK_EVENT_TYPES, "TaskLifecycleEvent"),
    ]
    rows = ["| graph | event types | record |", "|---|---|---|"]
    for graph, types_, cls in groups:
        rows.append(f"| {graph} | {', '.join(f'`{t}`' for t in types_)} | `{cls}` |")
    return "\n".join(rows)


def closed_sets() -> str:
    sets = [
        ("intent status", kinds.INTENT_STATUSES),
        ("task status", kinds.TASK_STATUSES),
        ("sort field", typing.get_args(kinds.SortField)),
        ("decay interval", typing.get_args(kinds.DecayInterval)),
        ("decay type", typing.get_args(kinds.DecayType)),
    ]
    rows = ["| name | values (a closed set: anything else is a `ValidationError`) |", "|---|---|"]
    rows += [f"| {n} | {', '.join(f'`{v}`' for v in vals)} |" for n, vals in sets]
    return "\n".join(rows)


_CLASSES = {
    **{n: getattr(memex, n) for n in ("MemoryItem", "Edge", "Intent", "Task")},
    **{n: getattr(memex, n) for n in FILTER_KEYS},
    **{n: getattr(memex, n) for n in OPTION_KEYS if hasattr(memex, n)},
    "ExportOptions": ExportOptions,
    "ImportOptions": ImportOptions,
}

BLOCKS: dict[str, Callable[[], str]] = {
    "memory-kinds": lambda: value_table(kinds.KNOWN_MEMORY_KINDS, MEMORY_KINDS, "kind"),
    "source-kinds": lambda: value_table(kinds.KNOWN_SOURCE_KINDS, SOURCE_KINDS, "source kind"),
    "edge-kinds": lambda: value_table(kinds.KNOWN_EDGE_KINDS, EDGE_KINDS, "edge kind"),
    "namespaces": lambda: value_table(kinds.KNOWN_NAMESPACES, NAMESPACES, "namespace"),
    "item-fields": lambda: record_table(
        memex.MemoryItem, ENTITY_FIELDS["MemoryItem"], required=True
    ),
    "edge-fields": lambda: record_table(memex.Edge, ENTITY_FIELDS["Edge"], required=True),
    "intent-fields": lambda: record_table(memex.Intent, ENTITY_FIELDS["Intent"], required=True),
    "task-fields": lambda: record_table(memex.Task, ENTITY_FIELDS["Task"], required=True),
    "commands": command_table,
    "events": event_table,
    "closed-sets": closed_sets,
    "filter-keys": lambda: records_block(FILTER_KEYS, _CLASSES),
    "option-keys": lambda: records_block(OPTION_KEYS, _CLASSES),
    "smart-retrieve": smart_retrieve_table,
}

_BLOCK = re.compile(
    r"(<!-- BEGIN GENERATED (?P<name>[a-z-]+) -->\n)(?:.*?\n)?(<!-- END GENERATED (?P=name) -->)",
    re.S,
)


def render(text: str) -> str:
    """``text`` with every generated block rebuilt; unknown or missing blocks are errors."""
    found: list[str] = []

    def fill(m: re.Match[str]) -> str:
        name = m.group("name")
        if name not in BLOCKS:
            raise SystemExit(f"docs/concepts.md: unknown generated block {name!r}")
        found.append(name)
        return m.group(1) + BLOCKS[name]() + "\n" + m.group(3)

    out = _BLOCK.sub(fill, text)
    missing = sorted(set(BLOCKS) - set(found))
    if missing:
        raise SystemExit(f"docs/concepts.md: no place for the generated blocks {missing}")
    return out


def main(argv: list[str]) -> int:
    current = PAGE.read_text("utf-8")
    fresh = render(current)
    if "--check" in argv:
        if fresh != current:
            print(
                "docs/concepts.md is stale: run python docs/gen/concept_tables.py", file=sys.stderr
            )
            return 1
        return 0
    if fresh != current:
        PAGE.write_text(fresh, "utf-8")
        print("rewrote docs/concepts.md")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
