"""The ``kg`` profile: the knowledge-graph memory tools of the MCP reference server, on memex.

The tool names, argument shapes and results are those of
``@modelcontextprotocol/server-memory`` (``create_entities``,
``create_relations``, ``add_observations``, ``delete_entities``,
``delete_observations``, ``delete_relations``, ``read_graph``,
``search_nodes``, ``open_nodes``), so a client configured for that server
works unchanged. The graph is kept as memex items and edges in one scope
(:attr:`KgTools.scope`, ``"kg"`` unless the server has a scope prefix):

==================  ==========================================================
knowledge graph     memex
==================  ==========================================================
entity              item of kind ``"entity"``, content ``{"name", "entityType"}``
observation         item of kind ``"observation"``, content ``{"text"}``, whose
                    ``parents`` is ``[the entity's id]``
relation            active edge of kind ``"RELATION"``, ``meta = {"from", "to",
                    "relationType", "scope"}`` (names, as the reference server keeps
                    relations by name); its ends are the entity items (an end
                    naming no entity points at ``"kg:" + name``)
delete_*            ``memory.retract`` / ``edge.retract`` commands (the log
                    keeps what was deleted, and who deleted it)
==================  ==========================================================

Order is log order (an entity's observations in the order they were added),
as the reference server keeps file order. The rules are those of the
published reference server (release 2026.8.31): a name already stored is
skipped, but equal names within one call are all added; relations are not
checked against the entities and equal relations within one call are all
added; an observation for an unknown entity fails the whole call; the
deletes answer ``"... deleted successfully"``. Unlike the reference server,
every call is one atomic batch appended to the shared log with optimistic
concurrency, so two processes never overwrite each other's changes.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from memex.errors import ValidationError
from memex.factories import create_edge, create_memory_item
from memex.mcp._arguments import refuse_unknown
from memex.mcp.tools import MemoryTools, check_text
from memex.models import Edge, MemoryItem
from memex.retrieval.query import get_edges
from memex.state.graph import GraphState
from memex.store.keyed import Planner

__all__ = ["KgTools", "KG_TOOLS", "KG_READ_TOOLS", "ENTITY_KIND", "RELATION_KIND"]

#: The item kind of an entity.
ENTITY_KIND = "entity"
#: The edge kind of a relation (its type is ``meta["relationType"]``).
RELATION_KIND = "RELATION"
#: The reading tools of the profile.
KG_READ_TOOLS = ("read_graph", "search_nodes", "open_nodes")
#: Every tool of the profile, writing ones first.
KG_TOOLS = (
    "create_entities",
    "create_relations",
    "add_observations",
    "delete_entities",
    "delete_observations",
    "delete_relations",
    *KG_READ_TOOLS,
)


def _objects(field: str, value: Any, keys: tuple[str, ...], limit: int) -> list[dict[str, Any]]:
    """Check a list of objects with string fields ``keys`` (``"observations"``/``"contents"`` are string lists)
    and no other keys (a misspelled key is an error, never dropped)."""
    if not isinstance(value, list):
        raise ValidationError(f"{field}: expected a list, got {type(value).__name__}", field)
    out = []
    for i, obj in enumerate(value):
        path = f"{field}[{i}]"
        if not isinstance(obj, Mapping):
            raise ValidationError(f"{path}: expected an object, got {type(obj).__name__}", path)
        refuse_unknown(obj, keys, field=path, noun="field")
        for k in keys:
            if k in ("observations", "contents"):
                _strings(f"{path}.{k}", obj.get(k), limit)
            else:
                check_text(f"{path}.{k}", obj.get(k), limit, empty=True)
        out.append({k: obj[k] for k in keys})
    return out


def _strings(field: str, value: Any, limit: int) -> list[str]:
    if not isinstance(value, list):
        raise ValidationError(
            f"{field}: expected a list of strings, got {type(value).__name__}", field
        )
    for i, s in enumerate(value):
        check_text(f"{field}[{i}]", s, limit, empty=True)
    return list(value)


class KgTools:
    """The nine knowledge-graph tools over a :class:`~memex.mcp.tools.MemoryTools` (its store,
    author, scope prefix and read-only flag).

    Every method takes the reference server's arguments and returns its
    structured result (``dict``). An object with a key its schema does not
    declare (``{"name", "entityType", "observations"}`` for an entity) is
    refused, naming the key. A call that fails raises a memex error
    (:class:`~memex.ValidationError` naming the field; the message of an
    unknown entity is the reference server's ``"Entity with name X not
    found"``) and changes nothing.
    """

    def __init__(self, tools: MemoryTools) -> None:
        self.tools = tools
        self.scope = tools.scope_prefix if tools.scope_prefix else "kg"

    # -- reading the graph ------------------------------------------------------------
    def _entities(self, mem: GraphState) -> Iterator[MemoryItem]:
        for item in mem.scope_items(self.scope):
            c = item.content
            if (
                item.kind == ENTITY_KIND
                and isinstance(c.get("name"), str)
                and isinstance(c.get("entityType"), str)
            ):
                yield item

    def _by_name(self, mem: GraphState) -> dict[str, MemoryItem]:
        found: dict[str, MemoryItem] = {}
        for item in self._entities(mem):
            found.setdefault(item.content["name"], item)
        return found

    def _observations(self, mem: GraphState, entity: MemoryItem) -> list[MemoryItem]:
        out = []
        for cid in mem.child_ids(entity.id):
            obs = mem.items.get(cid)
            if (
                obs is not None
                and obs.kind == "observation"
                and obs.scope == self.scope
                and isinstance(obs.content.get("text"), str)
            ):
                out.append(obs)
        return out

    def _relations(self, mem: GraphState) -> list[tuple[Edge, dict[str, str]]]:
        """The active RELATION edges of this profile's scope and their ``{from, to, relationType}``,
        in insertion order."""
        out = []
        for e in get_edges(mem, {"kind": RELATION_KIND}):
            m = e.meta or {}
            f, t, rt = m.get("from"), m.get("to"), m.get("relationType")
            if (
                m.get("scope") == self.scope
                and isinstance(f, str)
                and isinstance(t, str)
                and isinstance(rt, str)
            ):
                out.append((e, {"from": f, "to": t, "relationType": rt}))
        return out

    def _entity_wire(self, mem: GraphState, item: MemoryItem) -> dict[str, Any]:
        return {
            "name": item.content["name"],
            "entityType": item.content["entityType"],
            "observations": [o.content["text"] for o in self._observations(mem, item)],
        }

    def _graph(self, mem: GraphState, keep: Iterable[MemoryItem] | None = None) -> dict[str, Any]:
        chosen = list(self._entities(mem)) if keep is None else list(keep)
        names = {item.content["name"] for item in chosen}
        rels = [
            r
            for _, r in self._relations(mem)
            if keep is None or r["from"] in names or r["to"] in names
        ]
        return {"entities": [self._entity_wire(mem, it) for it in chosen], "relations": rels}

    def read_graph(self) -> dict[str, Any]:
        """The whole graph: ``{"entities": [{"name", "entityType", "observations"}], "relations": [...]}``."""
        return self._graph(self.tools.fresh_state())

    def search_nodes(self, query: str) -> dict[str, Any]:
        """Entities whose name, type or an observation contains ``query`` (case-insensitive),
        and the relations touching them."""
        check_text("query", query, self.tools.max_text, empty=True)
        mem = self.tools.fresh_state()
        q = query.lower()
        hits = [
            item
            for item in self._entities(mem)
            if q in item.content["name"].lower()
            or q in item.content["entityType"].lower()
            or any(q in o.content["text"].lower() for o in self._observations(mem, item))
        ]
        return self._graph(mem, hits)

    def open_nodes(self, names: list[str]) -> dict[str, Any]:
        """The named entities (in graph order; unknown names are ignored) and the relations touching them."""
        wanted = set(_strings("names", names, self.tools.max_text))
        mem = self.tools.fresh_state()
        return self._graph(mem, [it for it in self._entities(mem) if it.content["name"] in wanted])

    # -- writing ----------------------------------------------------------------------
    def _new_item(
        self,
        kind: str,
        content: dict[str, Any],
        parents: list[str] | None = None,
        meta: dict[str, Any] | None = None,
    ) -> MemoryItem:
        return create_memory_item(
            scope=self.scope,
            kind=kind,
            content=content,
            author=self.tools.author,
            source_kind="agent_inferred",
            authority=0.7,
            parents=parents,
            meta=meta,
        )

    def _observation(self, entity: MemoryItem, text: str) -> tuple[str, Any]:
        obs = self._new_item(
            "observation", {"text": text}, [entity.id], {"entityName": entity.content["name"]}
        )
        return ("memory", {"type": "memory.create", "item": obs})

    def create_entities(
        self, entities: list[dict[str, Any]], *, key: str | None = None
    ) -> dict[str, Any]:
        """Add the entities whose names are new (later duplicates in the call are skipped too);
        returns ``{"entities": [the ones added]}``."""
        given = _objects(
            "entities", entities, ("name", "entityType", "observations"), self.tools.max_text
        )
        added: list[dict[str, Any]] = []

        def plan(states: Any) -> list[tuple[str, Any]]:
            stored = set(self._by_name(states.mem))  # equal names within the call are all added
            cmds: list[tuple[str, Any]] = []
            for ent in given:
                if ent["name"] in stored:
                    continue
                item = self._new_item(
                    ENTITY_KIND, {"name": ent["name"], "entityType": ent["entityType"]}
                )
                cmds.append(("memory", {"type": "memory.create", "item": item}))
                cmds.extend(self._observation(item, text) for text in ent["observations"])
            return cmds

        done = self.tools.commit(plan, key)
        # the result is read from the committed events (also for a replayed call)
        added = []
        for e in done.events:
            it = e["item"]
            if it["kind"] == ENTITY_KIND:
                added.append(
                    {
                        "name": it["content"]["name"],
                        "entityType": it["content"]["entityType"],
                        "observations": [],
                    }
                )
            elif added:
                added[-1]["observations"].append(it["content"]["text"])
        return {"entities": added}

    def create_relations(
        self, relations: list[dict[str, Any]], *, key: str | None = None
    ) -> dict[str, Any]:
        """Add the relations not stored yet (their ends are not checked, as in the reference
        server); returns ``{"relations": [the ones added]}``."""
        given = _objects(
            "relations", relations, ("from", "to", "relationType"), self.tools.max_text
        )

        def plan(states: Any) -> list[tuple[str, Any]]:
            by_name = self._by_name(states.mem)
            stored = {
                (r["from"], r["to"], r["relationType"]) for _, r in self._relations(states.mem)
            }
            cmds: list[tuple[str, Any]] = []
            for r in given:
                if (r["from"], r["to"], r["relationType"]) in stored:
                    continue
                ends = [by_name[n].id if n in by_name else "kg:" + n for n in (r["from"], r["to"])]
                edge = create_edge(
                    from_=ends[0],
                    to=ends[1],
                    kind=RELATION_KIND,
                    author=self.tools.author,
                    source_kind="agent_inferred",
                    authority=0.7,
                    meta={**r, "scope": self.scope},
                )
                cmds.append(("memory", {"type": "edge.create", "edge": edge}))
            return cmds

        done = self.tools.commit(plan, key)
        meta = [e["edge"]["meta"] for e in done.events]
        return {
            "relations": [
                {"from": m["from"], "to": m["to"], "relationType": m["relationType"]} for m in meta
            ]
        }

    def add_observations(
        self, observations: list[dict[str, Any]], *, key: str | None = None
    ) -> dict[str, Any]:
        """Add each entity's new observation texts; returns ``{"results": [{"entityName",
        "addedObservations"}]}``. An unknown entity fails the whole call."""
        given = _objects(
            "observations", observations, ("entityName", "contents"), self.tools.max_text
        )
        results: list[dict[str, Any]] = []

        def plan(states: Any) -> list[tuple[str, Any]]:
            by_name = self._by_name(states.mem)
            cmds: list[tuple[str, Any]] = []
            results.clear()
            pending: dict[str, list[str]] = {}  # texts this call already added, per entity
            for i, o in enumerate(given):
                entity = by_name.get(o["entityName"])
                if entity is None:
                    raise ValidationError(
                        f"Entity with name {o['entityName']} not found",
                        f"observations[{i}].entityName",
                    )
                have = [x.content["text"] for x in self._observations(states.mem, entity)]
                have += pending.setdefault(entity.id, [])
                new = [text for text in o["contents"] if text not in have]
                cmds.extend(self._observation(entity, text) for text in new)
                pending[entity.id].extend(new)
                results.append({"entityName": o["entityName"], "addedObservations": new})
            return cmds

        done = self.tools.commit(plan, key)
        if done.replayed:  # the first call's additions, grouped by entity name in order
            grouped: dict[str, list[str]] = {}
            for e in done.events:
                name = (e["item"].get("meta") or {}).get("entityName", "")
                grouped.setdefault(name, []).append(e["item"]["content"]["text"])
            results = [
                {"entityName": n, "addedObservations": texts} for n, texts in grouped.items()
            ]
        return {"results": results}

    def delete_entities(self, entityNames: list[str], *, key: str | None = None) -> dict[str, Any]:
        """Retract every entity of the given names, its observations and every relation naming it."""
        names = set(_strings("entityNames", entityNames, self.tools.max_text))

        def plan(states: Any) -> list[tuple[str, Any]]:
            cmds: list[tuple[str, Any]] = [
                self._retract_edge(e.edge_id)
                for e, r in self._relations(states.mem)
                if r["from"] in names or r["to"] in names
            ]
            for entity in self._entities(states.mem):
                if entity.content["name"] in names:
                    cmds.extend(self._retract(o.id) for o in self._observations(states.mem, entity))
                    cmds.append(self._retract(entity.id))
            return cmds

        return self._deleted(plan, key, "Entities")

    def delete_observations(
        self, deletions: list[dict[str, Any]], *, key: str | None = None
    ) -> dict[str, Any]:
        """Retract every observation equal to a listed text, from the (first) entity of each name;
        an unknown entity is skipped."""
        given = _objects(
            "deletions", deletions, ("entityName", "observations"), self.tools.max_text
        )

        def plan(states: Any) -> list[tuple[str, Any]]:
            by_name = self._by_name(states.mem)
            gone: dict[str, None] = {}  # the observations' ids, each once, in the order found
            for d in given:
                entity = by_name.get(d["entityName"])
                if entity is not None:
                    gone.update(
                        (obs.id, None)
                        for obs in self._observations(states.mem, entity)
                        if obs.content["text"] in d["observations"]
                    )
            return [self._retract(obs_id) for obs_id in gone]

        return self._deleted(plan, key, "Observations")

    def delete_relations(
        self, relations: list[dict[str, Any]], *, key: str | None = None
    ) -> dict[str, Any]:
        """Retract every relation equal (from, to, relationType) to a listed one."""
        given = _objects(
            "relations", relations, ("from", "to", "relationType"), self.tools.max_text
        )
        wanted = {(r["from"], r["to"], r["relationType"]) for r in given}

        def plan(states: Any) -> list[tuple[str, Any]]:
            return [
                self._retract_edge(e.edge_id)
                for e, r in self._relations(states.mem)
                if (r["from"], r["to"], r["relationType"]) in wanted
            ]

        return self._deleted(plan, key, "Relations")

    def _deleted(self, plan: Planner, key: str | None, what: str) -> dict[str, Any]:
        """Commit a delete's ``plan`` (see :meth:`MemoryTools.commit`) and answer as the reference
        server does: ``{"success": True, "message": "<what> deleted successfully"}``."""
        self.tools.commit(plan, key)
        return {"success": True, "message": f"{what} deleted successfully"}

    def _retract_edge(self, edge_id: str) -> tuple[str, dict[str, Any]]:
        return ("memory", {"type": "edge.retract", "edge_id": edge_id, "author": self.tools.author})

    def import_memory(
        self, lines: Iterable[str], on_skip: Callable[[int, str], None] | None = None
    ) -> dict[str, int]:
        """Merge a knowledge graph saved by the reference server (its ``memory.jsonl``) into this one.

        Each line is a JSON object ``{"type": "entity", "name", "entityType",
        "observations"}`` or ``{"type": "relation", "from", "to",
        "relationType"}``; blank lines are ignored and other lines skipped
        (counted), as the reference server skips them. Entities whose name is
        not stored are created; for the others, the observations they lack
        are added; relations not stored are created. Importing the same file
        again changes nothing.

        Args:
            lines: the file's lines (an open text file works).
            on_skip: called as ``on_skip(line number, reason)`` (1-based) for each
                line skipped, before anything is stored.
        Returns:
            ``{"entities", "observations", "relations", "skipped"}``: what was
            added, and the lines skipped.
        Raises:
            ValidationError: a field longer than the server's text limit.
        """
        entities: list[dict[str, Any]] = []
        relations: list[dict[str, Any]] = []
        skipped = 0

        def skip(number: int, reason: str) -> None:
            nonlocal skipped
            skipped += 1
            if on_skip is not None:
                on_skip(number, reason)

        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except (ValueError, RecursionError):
                skip(number, "not JSON")
                continue
            if not isinstance(rec, dict):
                skip(number, f"a JSON {type(rec).__name__}, not an object")
            elif (
                rec.get("type") == "entity"
                and isinstance(rec.get("name"), str)
                and isinstance(rec.get("entityType"), str)
                and isinstance(rec.get("observations"), list)
                and all(isinstance(o, str) for o in rec["observations"])
            ):
                entities.append({k: rec[k] for k in ("name", "entityType", "observations")})
            elif rec.get("type") == "relation" and all(
                isinstance(rec.get(k), str) for k in ("from", "to", "relationType")
            ):
                relations.append({k: rec[k] for k in ("from", "to", "relationType")})
            elif rec.get("type") == "entity":
                skip(number, "an entity needs name, entityType (strings), observations (strings)")
            elif rec.get("type") == "relation":
                skip(number, "a relation needs from, to, relationType (strings)")
            else:
                skip(number, f"type {rec.get('type')!r} is neither 'entity' nor 'relation'")
        stored = set(self._by_name(self.tools.fresh_state()))
        created = self.create_entities([e for e in entities if e["name"] not in stored])["entities"]
        lacking = [
            {"entityName": e["name"], "contents": e["observations"]}
            for e in entities
            if e["name"] in stored
        ]
        added = self.add_observations(lacking)["results"] if lacking else []
        new_relations = self.create_relations(relations)["relations"]
        return {
            "entities": len(created),
            "observations": sum(len(e["observations"]) for e in created)
            + sum(len(r["addedObservations"]) for r in added),
            "relations": len(new_relations),
            "skipped": skipped,
        }

    def _retract(self, item_id: str) -> tuple[str, dict[str, Any]]:
        return (
            "memory",
            {"type": "memory.retract", "item_id": item_id, "author": self.tools.author},
        )
