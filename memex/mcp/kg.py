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
relation            active edge of kind ``"RELATION"`` between two entity items,
                    ``meta = {"relationType": ...}``
delete_*            ``memory.retract`` / ``edge.retract`` commands (the log
                    keeps what was deleted, and who deleted it)
==================  ==========================================================

Order is log order (an entity's observations in the order they were added),
as the reference server keeps file order. Unlike the reference server,
every call is one atomic batch appended to the shared log with optimistic
concurrency, so two processes never overwrite each other's changes.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from memex.errors import ValidationError
from memex.factories import create_edge, create_memory_item
from memex.graph import GraphState
from memex.mcp.tools import MemoryTools, check_text
from memex.models import Edge, MemoryItem
from memex.query import get_edges

__all__ = ["KgTools", "KG_TOOLS", "KG_READ_TOOLS", "ENTITY_KIND", "RELATION_KIND", "SEARCH_QUERY_MAX"]

#: The item kind of an entity.
ENTITY_KIND = "entity"
#: The edge kind of a relation (its type is ``meta["relationType"]``).
RELATION_KIND = "RELATION"
#: The longest ``search_nodes`` query, in characters (as the reference server).
SEARCH_QUERY_MAX = 2048
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
    """Check a list of objects with string fields ``keys`` (``"observations"``/``"contents"`` are string lists)."""
    if not isinstance(value, list):
        raise ValidationError(f"{field}: expected a list, got {type(value).__name__}", field)
    out = []
    for i, obj in enumerate(value):
        path = f"{field}[{i}]"
        if not isinstance(obj, Mapping):
            raise ValidationError(f"{path}: expected an object, got {type(obj).__name__}", path)
        for k in keys:
            if k in ("observations", "contents"):
                _strings(f"{path}.{k}", obj.get(k), limit)
            else:
                check_text(f"{path}.{k}", obj.get(k), limit)
        out.append({k: obj[k] for k in keys})
    return out


def _strings(field: str, value: Any, limit: int) -> list[str]:
    if not isinstance(value, list):
        raise ValidationError(f"{field}: expected a list of strings, got {type(value).__name__}", field)
    for i, s in enumerate(value):
        check_text(f"{field}[{i}]", s, limit, empty=True)
    return list(value)


class KgTools:
    """The nine knowledge-graph tools over a :class:`~memex.mcp.tools.MemoryTools` (its store,
    author, scope prefix and read-only flag).

    Every method takes the reference server's arguments and returns its
    structured result (``dict``). A call that fails raises a memex error
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
            if item.kind == ENTITY_KIND and isinstance(c.get("name"), str) and isinstance(c.get("entityType"), str):
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
            if obs is not None and obs.kind == "observation" and obs.scope == self.scope and isinstance(
                obs.content.get("text"), str
            ):
                out.append(obs)
        return out

    def _relations(self, mem: GraphState, names: Mapping[str, str]) -> list[tuple[Edge, dict[str, str]]]:
        """Active RELATION edges between entities (``names``: entity id -> name), in insertion order."""
        out = []
        for e in get_edges(mem, {"kind": RELATION_KIND}):
            rt = (e.meta or {}).get("relationType")
            if e.from_ in names and e.to in names and isinstance(rt, str):
                out.append((e, {"from": names[e.from_], "to": names[e.to], "relationType": rt}))
        return out

    def _entity_wire(self, mem: GraphState, item: MemoryItem) -> dict[str, Any]:
        return {
            "name": item.content["name"],
            "entityType": item.content["entityType"],
            "observations": [o.content["text"] for o in self._observations(mem, item)],
        }

    def _graph(self, mem: GraphState, keep: Iterable[MemoryItem] | None = None) -> dict[str, Any]:
        by_name = self._by_name(mem)
        names = {item.id: name for name, item in by_name.items()}
        chosen = list(by_name.values()) if keep is None else list(keep)
        ids = {item.id for item in chosen}
        rels = [r for e, r in self._relations(mem, names) if keep is None or e.from_ in ids or e.to in ids]
        return {"entities": [self._entity_wire(mem, it) for it in chosen], "relations": rels}

    def read_graph(self) -> dict[str, Any]:
        """The whole graph: ``{"entities": [{"name", "entityType", "observations"}], "relations": [...]}``."""
        return self._graph(self.tools._fresh())

    def search_nodes(self, query: str) -> dict[str, Any]:
        """Entities whose name, type or an observation contains ``query`` (case-insensitive),
        and the relations touching them."""
        check_text("query", query, SEARCH_QUERY_MAX, empty=True)
        mem = self.tools._fresh()
        q = query.lower()
        hits = [
            item
            for item in self._by_name(mem).values()
            if q in item.content["name"].lower()
            or q in item.content["entityType"].lower()
            or any(q in o.content["text"].lower() for o in self._observations(mem, item))
        ]
        return self._graph(mem, hits)

    def open_nodes(self, names: list[str]) -> dict[str, Any]:
        """The named entities (in graph order; unknown names are ignored) and the relations touching them."""
        wanted = set(_strings("names", names, self.tools.max_text))
        mem = self.tools._fresh()
        return self._graph(mem, [it for name, it in self._by_name(mem).items() if name in wanted])

    # -- writing ----------------------------------------------------------------------
    def _new_item(self, kind: str, content: dict[str, Any], parents: list[str] | None = None) -> MemoryItem:
        return create_memory_item(
            scope=self.scope, kind=kind, content=content, author=self.tools.author,
            source_kind="agent_inferred", authority=0.7, parents=parents,
        )

    def create_entities(self, entities: list[dict[str, Any]], *, key: str | None = None) -> dict[str, Any]:
        """Add the entities whose names are new (later duplicates in the call are skipped too);
        returns ``{"entities": [the ones added]}``."""
        given = _objects("entities", entities, ("name", "entityType", "observations"), self.tools.max_text)
        added: list[dict[str, Any]] = []

        def plan(states: Any) -> list[tuple[str, Any]]:
            seen = set(self._by_name(states.mem))
            cmds: list[tuple[str, Any]] = []
            added.clear()
            for ent in given:
                if ent["name"] in seen:
                    continue
                seen.add(ent["name"])
                item = self._new_item(ENTITY_KIND, {"name": ent["name"], "entityType": ent["entityType"]})
                cmds.append(("memory", {"type": "memory.create", "item": item}))
                for text in ent["observations"]:
                    obs = self._new_item("observation", {"text": text}, [item.id])
                    cmds.append(("memory", {"type": "memory.create", "item": obs}))
                added.append(ent)
            return cmds

        done = self.tools._write(plan, key)
        if done.replayed:
            added = [
                {"name": e["item"]["content"]["name"], "entityType": e["item"]["content"]["entityType"],
                 "observations": [o["item"]["content"]["text"] for o in done.events
                                  if (o["item"].get("parents") or [None])[0] == e["item"]["id"]]}
                for e in done.events if e["item"]["kind"] == ENTITY_KIND
            ]
        return {"entities": added}

    def create_relations(self, relations: list[dict[str, Any]], *, key: str | None = None) -> dict[str, Any]:
        """Add the relations not present yet; every endpoint must name an entity (else
        nothing is added). Returns ``{"relations": [the ones added]}``."""
        given = _objects("relations", relations, ("from", "to", "relationType"), self.tools.max_text)
        added: list[dict[str, Any]] = []

        def plan(states: Any) -> list[tuple[str, Any]]:
            by_name = self._by_name(states.mem)
            for i, r in enumerate(given):
                for end in ("from", "to"):
                    if r[end] not in by_name:
                        raise ValidationError(f"Entity with name {r[end]} not found", f"relations[{i}].{end}")
            names = {item.id: name for name, item in by_name.items()}
            have = {tuple(r.values()) for _, r in self._relations(states.mem, names)}
            cmds: list[tuple[str, Any]] = []
            added.clear()
            for r in given:
                t = (r["from"], r["to"], r["relationType"])
                if t in have:
                    continue
                have.add(t)
                edge = create_edge(
                    from_=by_name[r["from"]].id, to=by_name[r["to"]].id, kind=RELATION_KIND,
                    author=self.tools.author, source_kind="agent_inferred", authority=0.7,
                    meta={"relationType": r["relationType"]},
                )
                cmds.append(("memory", {"type": "edge.create", "edge": edge}))
                added.append(r)
            return cmds

        done = self.tools._write(plan, key)
        if done.replayed:
            mem = self.tools.store.mem
            names = {it.id: it.content["name"] for it in self._entities(mem)}
            added = [
                {"from": names.get(e["edge"]["from"], ""), "to": names.get(e["edge"]["to"], ""),
                 "relationType": e["edge"]["meta"]["relationType"]}
                for e in done.events
            ]
        return {"relations": added}

    def add_observations(self, observations: list[dict[str, Any]], *, key: str | None = None) -> dict[str, Any]:
        """Add each entity's new observation texts; returns ``{"results": [{"entityName",
        "addedObservations"}]}``. An unknown entity fails the whole call."""
        given = _objects("observations", observations, ("entityName", "contents"), self.tools.max_text)
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
                        f"Entity with name {o['entityName']} not found", f"observations[{i}].entityName"
                    )
                have = [x.content["text"] for x in self._observations(states.mem, entity)]
                have += pending.setdefault(entity.id, [])
                new = [text for text in o["contents"] if text not in have]
                for text in new:
                    cmds.append(("memory", {"type": "memory.create",
                                            "item": self._new_item("observation", {"text": text}, [entity.id])}))
                pending[entity.id].extend(new)
                results.append({"entityName": o["entityName"], "addedObservations": new})
            return cmds

        done = self.tools._write(plan, key)
        if done.replayed:  # the first call's additions, grouped by entity in order
            names = {it.id: it.content["name"] for it in self._entities(self.tools.store.mem)}
            grouped: dict[str, list[str]] = {}
            for e in done.events:
                parent = (e["item"].get("parents") or [""])[0]
                grouped.setdefault(names.get(parent, parent), []).append(e["item"]["content"]["text"])
            results = [{"entityName": n, "addedObservations": texts} for n, texts in grouped.items()]
        return {"results": results}

    def delete_entities(self, entityNames: list[str], *, key: str | None = None) -> dict[str, Any]:
        """Retract the named entities, their observations and (with them) their relations."""
        names = _strings("entityNames", entityNames, self.tools.max_text)
        outcome: dict[str, Any] = {}

        def plan(states: Any) -> list[tuple[str, Any]]:
            by_name = self._by_name(states.mem)
            cmds: list[tuple[str, Any]] = []
            done_ids: set[str] = set()
            for name in names:
                entity = by_name.get(name)
                if entity is None or entity.id in done_ids:
                    continue
                done_ids.add(entity.id)
                for obs in self._observations(states.mem, entity):
                    cmds.append(("memory", self._retract(obs.id)))
                cmds.append(("memory", self._retract(entity.id)))
            missing = [n for n in names if n not in by_name]
            outcome["message"] = (
                "Entities deleted successfully"
                if not missing
                else f"Deleted {len(names) - len(missing)} of {len(names)} entities. Not found: {', '.join(missing)}"
            )
            return cmds

        self.tools._write(plan, key)
        return {"success": True, "message": outcome.get("message", "Entities deleted successfully")}

    def delete_observations(self, deletions: list[dict[str, Any]], *, key: str | None = None) -> dict[str, Any]:
        """Retract every observation equal to a listed text, per entity."""
        given = _objects("deletions", deletions, ("entityName", "observations"), self.tools.max_text)
        outcome: dict[str, Any] = {}

        def plan(states: Any) -> list[tuple[str, Any]]:
            by_name = self._by_name(states.mem)
            cmds: list[tuple[str, Any]] = []
            gone: set[str] = set()
            missing: list[str] = []
            for d in given:
                entity = by_name.get(d["entityName"])
                if entity is None:
                    missing.append(d["entityName"])
                    continue
                for obs in self._observations(states.mem, entity):
                    if obs.content["text"] in d["observations"] and obs.id not in gone:
                        gone.add(obs.id)
                        cmds.append(("memory", self._retract(obs.id)))
            requested = sum(len(d["observations"]) for d in given)
            outcome["message"] = (
                "Observations deleted successfully"
                if len(gone) == requested
                else f"Deleted {len(gone)} of {requested} observations."
                + (f" Entities not found: {', '.join(missing)}" if missing else "")
            )
            return cmds

        self.tools._write(plan, key)
        return {"success": True, "message": outcome.get("message", "Observations deleted successfully")}

    def delete_relations(self, relations: list[dict[str, Any]], *, key: str | None = None) -> dict[str, Any]:
        """Retract every relation equal (from, to, relationType) to a listed one."""
        given = _objects("relations", relations, ("from", "to", "relationType"), self.tools.max_text)
        outcome: dict[str, Any] = {}

        def plan(states: Any) -> list[tuple[str, Any]]:
            names = {item.id: name for name, item in self._by_name(states.mem).items()}
            wanted = {(r["from"], r["to"], r["relationType"]) for r in given}
            cmds = [
                ("memory", {"type": "edge.retract", "edge_id": e.edge_id, "author": self.tools.author})
                for e, r in self._relations(states.mem, names)
                if (r["from"], r["to"], r["relationType"]) in wanted
            ]
            outcome["message"] = (
                "Relations deleted successfully"
                if len(cmds) == len(given)
                else f"Deleted {len(cmds)} of {len(given)} relations. The rest matched nothing."
            )
            return cmds

        self.tools._write(plan, key)
        return {"success": True, "message": outcome.get("message", "Relations deleted successfully")}

    def _retract(self, item_id: str) -> dict[str, Any]:
        return {"type": "memory.retract", "item_id": item_id, "author": self.tools.author}
