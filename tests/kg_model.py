"""An in-memory model of the MCP reference "knowledge graph memory" server.

The reference server is ``@modelcontextprotocol/server-memory``. This module models its
documented behaviour in plain Python (standard library only, nothing from memex), so that a
test can run one scripted session against the model and against our own server's ``--profile kg``
and compare the ``read_graph`` results.

The graph holds entities ``{"name", "entityType", "observations": [str, ...]}`` and relations
``{"from", "to", "relationType"}``; every list keeps insertion order. The rules modelled:

- ``create_entities`` skips (silently) an entity whose name is already in the graph or appeared
  earlier in the same call; an added entity keeps its observations exactly as given.
- ``create_relations`` fails as a whole ("Entity with name X not found") when an endpoint names
  no entity; otherwise it skips relations equal to an existing one or to an earlier one in the call.
- ``add_observations`` appends, per entry, the contents not in the entity's observations as they
  were before that entry (so a content repeated inside one ``contents`` list is appended twice);
  an unknown entity fails the call, and the call is atomic: nothing from it is kept.
- the three deletes remove what matches and report counts in their message; search and open
  return the matching entities plus every relation with at least one endpoint among them.

``SCRIPTED_SESSION`` is a deterministic list of ``(tool, arguments)`` calls exercising every tool
and edge case; the calls that fail stay in it (a runner expects them to fail on both sides).
"""

from __future__ import annotations

import copy
from typing import Any

__all__ = ["KgModel", "KgModelError", "SCRIPTED_SESSION"]


class KgModelError(Exception):
    """A tool call the reference server rejects; the message is the server's error text."""


def _not_found(name: str) -> KgModelError:
    return KgModelError(f"Entity with name {name} not found")


def _relation_key(relation: dict[str, Any]) -> tuple[str, str, str]:
    return (relation["from"], relation["to"], relation["relationType"])


def _entity_copy(entity: dict[str, Any]) -> dict[str, Any]:
    return {
        "name": entity["name"],
        "entityType": entity["entityType"],
        "observations": list(entity["observations"]),
    }


def _relation_copy(relation: dict[str, Any]) -> dict[str, Any]:
    return {"from": relation["from"], "to": relation["to"], "relationType": relation["relationType"]}


class KgModel:
    """The knowledge graph as two ordered lists, with one method per MCP tool."""

    def __init__(self) -> None:
        self.entities: list[dict[str, Any]] = []
        self.relations: list[dict[str, Any]] = []

    # ----------------------------------------------------------------- helpers

    def _find(self, name: str) -> dict[str, Any] | None:
        for entity in self.entities:
            if entity["name"] == name:
                return entity
        return None

    def _names(self) -> set[str]:
        return {entity["name"] for entity in self.entities}

    def _subgraph(self, entities: list[dict[str, Any]]) -> dict[str, Any]:
        names = {entity["name"] for entity in entities}
        return {
            "entities": [_entity_copy(e) for e in entities],
            "relations": [
                _relation_copy(r) for r in self.relations if r["from"] in names or r["to"] in names
            ],
        }

    # ------------------------------------------------------------------- tools

    def create_entities(self, entities: list[dict[str, Any]]) -> dict[str, Any]:
        seen = self._names()
        added: list[dict[str, Any]] = []
        for given in entities:
            if given["name"] in seen:
                continue
            seen.add(given["name"])
            entity = _entity_copy(given)
            self.entities.append(entity)
            added.append(_entity_copy(entity))
        return {"entities": added}

    def create_relations(self, relations: list[dict[str, Any]]) -> dict[str, Any]:
        names = self._names()
        for relation in relations:
            for endpoint in (relation["from"], relation["to"]):
                if endpoint not in names:
                    raise _not_found(endpoint)
        seen = {_relation_key(r) for r in self.relations}
        added: list[dict[str, Any]] = []
        for given in relations:
            key = _relation_key(given)
            if key in seen:
                continue
            seen.add(key)
            relation = _relation_copy(given)
            self.relations.append(relation)
            added.append(_relation_copy(relation))
        return {"relations": added}

    def add_observations(self, observations: list[dict[str, Any]]) -> dict[str, Any]:
        # Work on a copy of the entities and keep it only if every entry succeeds.
        draft = copy.deepcopy(self.entities)
        by_name = {entity["name"]: entity for entity in draft}
        results: list[dict[str, Any]] = []
        for entry in observations:
            entity = by_name.get(entry["entityName"])
            if entity is None:
                raise _not_found(entry["entityName"])
            before = entity["observations"]
            fresh = [content for content in entry["contents"] if content not in before]
            before.extend(fresh)
            results.append({"entityName": entry["entityName"], "addedObservations": list(fresh)})
        self.entities = draft
        return {"results": results}

    def delete_entities(self, entityNames: list[str]) -> dict[str, Any]:
        existing = self._names()
        not_found = [name for name in entityNames if name not in existing]
        doomed = set(entityNames)
        self.entities = [e for e in self.entities if e["name"] not in doomed]
        self.relations = [
            r for r in self.relations if r["from"] not in doomed and r["to"] not in doomed
        ]
        if not not_found:
            message = "Entities deleted successfully"
        else:
            total = len(entityNames)
            deleted = total - len(not_found)
            message = f"Deleted {deleted} of {total} entities. Not found: {', '.join(not_found)}"
        return {"success": True, "message": message}

    def delete_observations(self, deletions: list[dict[str, Any]]) -> dict[str, Any]:
        requested = 0
        deleted = 0
        missing: list[str] = []
        for entry in deletions:
            listed = entry["observations"]
            requested += len(listed)
            entity = self._find(entry["entityName"])
            if entity is None:
                missing.append(entry["entityName"])
                continue
            kept = [o for o in entity["observations"] if o not in listed]
            deleted += len(entity["observations"]) - len(kept)
            entity["observations"] = kept
        if deleted == requested:
            message = "Observations deleted successfully"
        else:
            message = f"Deleted {deleted} of {requested} observations."
            if missing:
                message += f" Entities not found: {', '.join(missing)}"
        return {"success": True, "message": message}

    def delete_relations(self, relations: list[dict[str, Any]]) -> dict[str, Any]:
        doomed = {_relation_key(r) for r in relations}
        kept = [r for r in self.relations if _relation_key(r) not in doomed]
        deleted = len(self.relations) - len(kept)
        self.relations = kept
        if deleted == len(relations):
            message = "Relations deleted successfully"
        else:
            message = (
                f"Deleted {deleted} of {len(relations)} relations. The rest matched nothing."
            )
        return {"success": True, "message": message}

    def read_graph(self) -> dict[str, Any]:
        return {
            "entities": [_entity_copy(e) for e in self.entities],
            "relations": [_relation_copy(r) for r in self.relations],
        }

    def search_nodes(self, query: str) -> dict[str, Any]:
        needle = query.lower()

        def matches(entity: dict[str, Any]) -> bool:
            texts = [entity["name"], entity["entityType"], *entity["observations"]]
            return any(needle in text.lower() for text in texts)

        return self._subgraph([e for e in self.entities if matches(e)])

    def open_nodes(self, names: list[str]) -> dict[str, Any]:
        wanted = set(names)
        return self._subgraph([e for e in self.entities if e["name"] in wanted])

    # ---------------------------------------------------------------- dispatch

    def call(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """Run one tool by its MCP name with its MCP arguments dict."""
        if tool == "create_entities":
            return self.create_entities(arguments["entities"])
        if tool == "create_relations":
            return self.create_relations(arguments["relations"])
        if tool == "add_observations":
            return self.add_observations(arguments["observations"])
        if tool == "delete_entities":
            return self.delete_entities(arguments["entityNames"])
        if tool == "delete_observations":
            return self.delete_observations(arguments["deletions"])
        if tool == "delete_relations":
            return self.delete_relations(arguments["relations"])
        if tool == "read_graph":
            return self.read_graph()
        if tool == "search_nodes":
            return self.search_nodes(arguments["query"])
        if tool == "open_nodes":
            return self.open_nodes(arguments["names"])
        raise ValueError(f"unknown tool: {tool}")


# --------------------------------------------------------------------- session

ONEIL = "Dr. O'Neil, Jr."
PROJECT = "Project: X/Y (beta)"
ACME = "ACME Corp."


def _rel(source: str, target: str, kind: str) -> dict[str, str]:
    return {"from": source, "to": target, "relationType": kind}


SCRIPTED_SESSION: list[tuple[str, dict[str, Any]]] = [
    # 1. A repeated name inside one call is skipped; repeated observations are kept as given.
    (
        "create_entities",
        {
            "entities": [
                {
                    "name": "Alice",
                    "entityType": "person",
                    "observations": ["likes tea", "likes tea", "works at ACME"],
                },
                {"name": "Bob", "entityType": "person", "observations": []},
                {"name": "Zoë", "entityType": "Person", "observations": ["Café owner"]},
                {"name": "東京", "entityType": "city", "observations": ["capital of Japan"]},
                {"name": ONEIL, "entityType": "person", "observations": ["a surgeon"]},
                {"name": "Alice", "entityType": "robot", "observations": ["a duplicate"]},
            ]
        },
    ),
    # 2. A name already in the graph is skipped.
    (
        "create_entities",
        {
            "entities": [
                {"name": "Bob", "entityType": "robot", "observations": ["should not appear"]},
                {"name": ACME, "entityType": "organization", "observations": ["Makes anvils"]},
                {"name": PROJECT, "entityType": "project", "observations": []},
            ]
        },
    ),
    # 3.
    ("read_graph", {}),
    # 4. A repeated relation inside one call is skipped.
    (
        "create_relations",
        {
            "relations": [
                _rel("Alice", "Bob", "knows"),
                _rel("Bob", "Alice", "knows"),
                _rel("Alice", ACME, "works_at"),
                _rel("Alice", "Bob", "knows"),
                _rel("Zoë", "東京", "lives_in"),
            ]
        },
    ),
    # 5. A relation already in the graph is skipped.
    (
        "create_relations",
        {"relations": [_rel("Alice", "Bob", "knows"), _rel("Bob", ACME, "works_at")]},
    ),
    # 6. Error: an unknown target; the valid relation before it is not kept.
    (
        "create_relations",
        {"relations": [_rel(PROJECT, ACME, "owned_by"), _rel("Alice", "Nobody", "knows")]},
    ),
    # 7. Error: an unknown source.
    ("create_relations", {"relations": [_rel("Ghost", "Bob", "haunts")]}),
    # 8. An existing content is not added again; a content repeated in the list is added twice.
    (
        "add_observations",
        {
            "observations": [
                {"entityName": "Alice", "contents": ["likes tea", "plays chess", "plays chess"]},
                {"entityName": "Bob", "contents": ["new in town"]},
            ]
        },
    ),
    # 9. Error: an unknown entity; Bob's content before it is not kept either.
    (
        "add_observations",
        {
            "observations": [
                {"entityName": "Bob", "contents": ["not kept"]},
                {"entityName": "Nobody", "contents": ["lost"]},
            ]
        },
    ),
    # 10. The same entity twice in one call: the second entry sees what the first added.
    (
        "add_observations",
        {
            "observations": [
                {"entityName": "Zoë", "contents": ["speaks French"]},
                {"entityName": "Zoë", "contents": ["speaks French", "bakes bread"]},
            ]
        },
    ),
    # 11.
    ("read_graph", {}),
    # 12. By type, in another case ("person" and "Person").
    ("search_nodes", {"query": "PERSON"}),
    # 13. By observation, in another case, with a non-ASCII letter.
    ("search_nodes", {"query": "CAFÉ"}),
    # 14. By observation; the relation into the match comes along.
    ("search_nodes", {"query": "japan"}),
    # 15. Unknown names are ignored.
    ("open_nodes", {"names": ["Alice", "Unknown", "東京"]}),
    # 16. Only unknown names.
    ("open_nodes", {"names": ["Nobody", "Ghost"]}),
    # 17. Both copies of "plays chess" go; one listed content matches nothing; Ghost is missing.
    (
        "delete_observations",
        {
            "deletions": [
                {"entityName": "Alice", "observations": ["plays chess", "never said"]},
                {"entityName": "Ghost", "observations": ["boo"]},
            ]
        },
    ),
    # 18. One listed content removes two equal copies ("Deleted 2 of 1").
    ("delete_observations", {"deletions": [{"entityName": "Alice", "observations": ["likes tea"]}]}),
    # 19. Everything listed is removed.
    (
        "delete_observations",
        {"deletions": [{"entityName": "Bob", "observations": ["new in town"]}]},
    ),
    # 20. One relation matches, one matches nothing.
    (
        "delete_relations",
        {"relations": [_rel("Bob", ACME, "works_at"), _rel("Alice", "Nobody", "knows")]},
    ),
    # 21. Every relation matches.
    ("delete_relations", {"relations": [_rel("Zoë", "東京", "lives_in")]}),
    # 22. Re-add a deleted relation, and give Alice more relations in both directions.
    (
        "create_relations",
        {
            "relations": [
                _rel("Zoë", "東京", "lives_in"),
                _rel(ONEIL, "Alice", "treats"),
                _rel("Alice", ONEIL, "mentors"),
                _rel("Zoë", "Alice", "knows"),
            ]
        },
    ),
    # 23.
    ("search_nodes", {"query": "o'neil"}),
    # 24. Alice is the source and the target of relations; all of them go with her.
    ("delete_entities", {"entityNames": ["Alice"]}),
    # 25.
    ("read_graph", {}),
    # 26. Error: a relation to the entity just deleted.
    ("create_relations", {"relations": [_rel("Zoë", "Alice", "misses")]}),
    # 27. Some names are unknown.
    ("delete_entities", {"entityNames": ["Ghost", "Bob", "Nobody"]}),
    # 28. A deleted name can be created again, fresh.
    (
        "create_entities",
        {"entities": [{"name": "Alice", "entityType": "person", "observations": []}]},
    ),
    # 29.
    (
        "add_observations",
        {
            "observations": [
                {"entityName": PROJECT, "contents": ["status: 50% done", "owner → Zoë"]},
                {"entityName": "東京", "contents": ["population ~14M", "capital of Japan"]},
            ]
        },
    ),
    # 30.
    (
        "create_relations",
        {"relations": [_rel(PROJECT, "Zoë", "owned_by"), _rel("Alice", "東京", "visits")]},
    ),
    # 31. Only a missing entity ("Deleted 0 of 1 ... Entities not found").
    ("delete_observations", {"deletions": [{"entityName": "Ghost", "observations": ["x"]}]}),
    # 32. Matches Zoë by name and the project by an observation, in another case.
    ("search_nodes", {"query": "ZOË"}),
    # 33. A relation that matches nothing at all.
    ("delete_relations", {"relations": [_rel("Bob", "Alice", "knows")]}),
    # 34.
    ("open_nodes", {"names": ["東京", "Zoë", PROJECT, "Bob"]}),
    # 35.
    ("search_nodes", {"query": "ANVIL"}),
    # 36.
    ("read_graph", {}),
]
