"""An in-memory model of the MCP reference "knowledge graph memory" server.

The reference server is ``@modelcontextprotocol/server-memory``, as published on npm (release
2026.8.31, which ``npx @modelcontextprotocol/server-memory`` runs). This module models its
behaviour in plain Python (standard library only, nothing from memex), so that a test can run one
scripted session against the model and against our own server's ``--profile kg`` and compare
every result.

The graph holds entities ``{"name", "entityType", "observations": [str, ...]}`` and relations
``{"from", "to", "relationType"}``; every list keeps insertion order. The rules modelled:

- ``create_entities`` skips (silently) an entity whose name is already stored; entities of one
  name within the same call are all added. An added entity keeps its observations as given.
- ``create_relations`` does not check its endpoints (a relation may name no entity) and skips only
  relations equal to a stored one, so equal relations within one call are all added.
- ``add_observations`` appends, per entry, the contents not in the (first) entity's observations
  as they were before that entry (so a content repeated inside one ``contents`` list is appended
  twice); an unknown entity fails the call ("Entity with name X not found"), and the call is
  atomic: nothing from it is kept.
- the three deletes remove what matches (every entity of a name, every relation touching a deleted
  name, every equal observation) and always answer ``"... deleted successfully"``; search and open
  return the matching entities plus every relation with at least one endpoint among them.

``SCRIPTED_SESSION`` is a deterministic list of ``(tool, arguments)`` calls exercising every tool
and edge case; the calls that fail stay in it (a runner expects them to fail on both sides).
``tests/kg_reference_check.py`` replays it against the real server and the model, call by call.
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
    return {
        "from": relation["from"],
        "to": relation["to"],
        "relationType": relation["relationType"],
    }


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
        stored = self._names()  # only the stored graph: equal names within one call are all added
        added: list[dict[str, Any]] = []
        for given in entities:
            if given["name"] in stored:
                continue
            entity = _entity_copy(given)
            self.entities.append(entity)
            added.append(_entity_copy(entity))
        return {"entities": added}

    def create_relations(self, relations: list[dict[str, Any]]) -> dict[str, Any]:
        # endpoints are not checked (a relation may name no entity); only relations equal to a
        # stored one are skipped, so equal relations within one call are all added
        stored = {_relation_key(r) for r in self.relations}
        added: list[dict[str, Any]] = []
        for given in relations:
            if _relation_key(given) in stored:
                continue
            relation = _relation_copy(given)
            self.relations.append(relation)
            added.append(_relation_copy(relation))
        return {"relations": added}

    def add_observations(self, observations: list[dict[str, Any]]) -> dict[str, Any]:
        # Work on a copy of the entities and keep it only if every entry succeeds.
        draft = copy.deepcopy(self.entities)
        by_name: dict[str, dict[str, Any]] = {}
        for entity in draft:
            by_name.setdefault(
                entity["name"], entity
            )  # the first entity of a name, as a search would find
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
        doomed = set(entityNames)
        self.entities = [e for e in self.entities if e["name"] not in doomed]
        self.relations = [
            r for r in self.relations if r["from"] not in doomed and r["to"] not in doomed
        ]
        return {"success": True, "message": "Entities deleted successfully"}

    def delete_observations(self, deletions: list[dict[str, Any]]) -> dict[str, Any]:
        for entry in deletions:
            entity = self._find(entry["entityName"])  # a missing entity is skipped silently
            if entity is not None:
                entity["observations"] = [
                    o for o in entity["observations"] if o not in entry["observations"]
                ]
        return {"success": True, "message": "Observations deleted successfully"}

    def delete_relations(self, relations: list[dict[str, Any]]) -> dict[str, Any]:
        doomed = {_relation_key(r) for r in relations}
        self.relations = [r for r in self.relations if _relation_key(r) not in doomed]
        return {"success": True, "message": "Relations deleted successfully"}

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
    # 1. A repeated name inside one call is added too (two Alices); repeated observations are
    #    kept as given.
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
    # 4. A repeated relation inside one call is added twice.
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
    # 6. An unknown target is not checked: both relations are added.
    (
        "create_relations",
        {"relations": [_rel(PROJECT, ACME, "owned_by"), _rel("Alice", "Nobody", "knows")]},
    ),
    # 7. An unknown source is not checked either.
    ("create_relations", {"relations": [_rel("Ghost", "Bob", "haunts")]}),
    # 8. An existing content is not added again; a content repeated in the list is added twice;
    #    of the two Alices, only the first gets them.
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
    # 15. Unknown names are ignored; both Alices come back.
    ("open_nodes", {"names": ["Alice", "Unknown", "東京"]}),
    # 16. Only unknown names.
    ("open_nodes", {"names": ["Nobody", "Ghost"]}),
    # 17. Both copies of "plays chess" go (from the first Alice only); one listed content matches
    #     nothing; Ghost is missing: still "deleted successfully".
    (
        "delete_observations",
        {
            "deletions": [
                {"entityName": "Alice", "observations": ["plays chess", "never said"]},
                {"entityName": "Ghost", "observations": ["boo"]},
            ]
        },
    ),
    # 18. One listed content removes two equal copies.
    (
        "delete_observations",
        {"deletions": [{"entityName": "Alice", "observations": ["likes tea"]}]},
    ),
    # 19. Everything listed is removed.
    (
        "delete_observations",
        {"deletions": [{"entityName": "Bob", "observations": ["new in town"]}]},
    ),
    # 20. Both match (the relation to the missing Nobody was added by call 6).
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
    # 24. Both Alices go; she is the source and the target of relations (one of them stored
    #     twice); all of them go with her.
    ("delete_entities", {"entityNames": ["Alice"]}),
    # 25.
    ("read_graph", {}),
    # 26. A relation to the entity just deleted is added (it dangles until call 28).
    ("create_relations", {"relations": [_rel("Zoë", "Alice", "misses")]}),
    # 27. Some names are unknown; Ghost is no entity, but its relation (call 7) goes.
    ("delete_entities", {"entityNames": ["Ghost", "Bob", "Nobody"]}),
    # 28. A deleted name can be created again, fresh; the relation of call 26 now reaches it.
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
    # 31. Only a missing entity: nothing changes, still "deleted successfully".
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
    # 37. Two entities of one new name in one call are both added; a stored name is skipped.
    (
        "create_entities",
        {
            "entities": [
                {"name": "Twin", "entityType": "person", "observations": ["first twin"]},
                {"name": "Twin", "entityType": "robot", "observations": ["second twin"]},
                {"name": "Zoë", "entityType": "robot", "observations": ["not added"]},
            ]
        },
    ),
    # 38. Only the first Twin gets the content; it already holds "first twin".
    (
        "add_observations",
        {"observations": [{"entityName": "Twin", "contents": ["shared", "first twin"]}]},
    ),
    # 39. Only the first Twin loses contents; the second keeps "second twin".
    (
        "delete_observations",
        {"deletions": [{"entityName": "Twin", "observations": ["shared", "second twin"]}]},
    ),
    # 40. Both Twins.
    ("open_nodes", {"names": ["Twin"]}),
    # 41. The same relation twice in one call: both added; one equal to a stored relation is
    #     skipped; relations naming the missing Ghost and Nobody are added.
    (
        "create_relations",
        {
            "relations": [
                _rel("Zoë", "Twin", "knows"),
                _rel("Zoë", "Twin", "knows"),
                _rel("Zoë", "東京", "lives_in"),
                _rel("Zoë", "Ghost", "fears"),
                _rel("Ghost", "Nobody", "haunts"),
            ]
        },
    ),
    # 42. Both Twins, and both copies of the relation into them.
    ("search_nodes", {"query": "TWIN"}),
    # 43. Ghost is no entity: only Zoë and her relations (one of them to Ghost) come back.
    ("open_nodes", {"names": ["Ghost", "Zoë"]}),
    # 44. Deleting the missing Ghost removes every relation naming it.
    ("delete_entities", {"entityNames": ["Ghost"]}),
    # 45. One listed relation removes both stored copies.
    ("delete_relations", {"relations": [_rel("Zoë", "Twin", "knows")]}),
    # 46. Relations from and to the Twins.
    (
        "create_relations",
        {"relations": [_rel("Twin", "東京", "visits"), _rel("Alice", "Twin", "knows")]},
    ),
    # 47. Both Twins go, with their relations.
    ("delete_entities", {"entityNames": ["Twin"]}),
    # 48.
    ("read_graph", {}),
]
