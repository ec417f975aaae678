"""The MCP binding: :class:`~memex.mcp.tools.MemoryTools` and :class:`~memex.mcp.kg.KgTools`
served over the Model Context Protocol with the official SDK (``mcp`` 2.x, the ``mcp`` extra).

Each tool's input schema comes from its typed signature (strict JSON types:
a string where a number is expected is refused, not converted) and is closed
(``additionalProperties: false``, for the ``kg`` tools' objects too): an
argument name the tool does not declare is refused by the server, whatever
the client checked, naming it and the closest declared name
(``ValidationError: autority: unknown argument (did you mean authority?)``),
so a misspelled optional argument never falls back to its default. Each result
carries the structured JSON (``structuredContent``) and a short text
rendering. A call that fails returns a tool error (``isError: true``) whose
text is ``"<MemexErrorType>: <message>"``, the field named in the message;
no traceback reaches the client.

Idempotent retries: every writing tool accepts an idempotency key, as the
argument ``idempotency_key`` (``memex`` profile) or in the request's
``_meta`` as ``"memex/idempotency_key"`` (both profiles). Calls with the same
key and the same tool, from one author, are applied once on the shared log,
whichever server process receives them: the retry returns the first call's
result (see :meth:`memex.MemexStore.transact`).
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable, Mapping
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ToolError
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import ConfigDict, Field, StrictBool, StrictInt, StrictStr
from pydantic import ValidationError as PydanticValidationError

from memex import __version__
from memex.codec.jsonfmt import dumps
from memex.errors import MemexError, ValidationError
from memex.mcp._arguments import refuse_unknown
from memex.mcp.kg import KG_READ_TOOLS, KgTools
from memex.mcp.tools import READ_TOOLS, MemoryTools

__all__ = ["build_server", "PROFILES", "META_KEY"]

#: The tool sets a server can expose.
PROFILES = ("memex", "kg")
#: The ``_meta`` key of a request that carries its idempotency key.
META_KEY = "memex/idempotency_key"

_log = logging.getLogger("memex.mcp")

Score = Annotated[float, Field(strict=True, ge=0, le=1)]
Key = Annotated[
    StrictStr | None,
    Field(
        description="Optional. Send the same key when retrying this call: the change is applied once, "
        "and the retry returns the first call's result."
    ),
]


def _client_key(ctx: Context[Any, Any], argument: str | None) -> str | None:
    if argument is not None:
        return argument
    try:
        meta: Any = ctx.request_context.meta
    except ValueError:  # called in-process, outside an MCP request
        return None
    if meta is None:
        return None
    value = (
        meta.get(META_KEY)
        if isinstance(meta, Mapping)
        else getattr(meta, "model_extra", {}).get(META_KEY)
    )
    if value is not None and not isinstance(value, str):
        raise ValidationError(
            f"_meta.{META_KEY}: expected a string, got {type(value).__name__}", f"_meta.{META_KEY}"
        )
    return value


class _ArgumentErrors:
    """Server middleware: a ``tools/call`` whose arguments fail the tool's schema gets a tool error
    in memex's form, ``"Error executing tool T: ValidationError: <field>: <problem>"``, instead of
    the schema library's multi-line report (the same arguments are validated again by the SDK).
    An argument the tool does not declare is reported first, with the closest declared name."""

    def __init__(self, server: MCPServer[Any]) -> None:
        self._server = server

    async def __call__(self, ctx: Any, call_next: Any) -> Any:
        params = ctx.params if ctx.method == "tools/call" else None
        if isinstance(params, Mapping) and isinstance(params.get("name"), str):
            tool = self._server._tool_manager.get_tool(params["name"])
            arguments = params.get("arguments") or {}
            if tool is not None and isinstance(arguments, Mapping):
                problem = _argument_problem(tool, arguments)
                if problem is not None:
                    text = f"Error executing tool {tool.name}: ValidationError: {problem}"
                    return CallToolResult(
                        content=[TextContent(type="text", text=text)], is_error=True
                    )
        return await call_next(ctx)


def _argument_problem(tool: Any, arguments: Mapping[str, Any]) -> str | None:
    """``"<field>: <problem>"`` for the first thing wrong with a call's ``arguments``
    (an undeclared name first, then the tool's schema), or ``None``."""
    try:
        refuse_unknown(arguments, list(tool.parameters.get("properties", {})))
    except ValidationError as e:
        return str(e)
    try:
        tool.fn_metadata.validate_arguments(dict(arguments))
    except PydanticValidationError as e:
        first = e.errors()[0]
        field = ""
        for part in first["loc"]:
            if isinstance(part, int):
                field += f"[{part}]"
            elif not str(part).startswith(("function-", "tagged-")):
                field += f".{part}" if field else str(part)
        field = field or "arguments"
        more = f" (and {e.error_count() - 1} more)" if e.error_count() > 1 else ""
        return f"{field}: {first['msg']}{more}"
    except Exception:
        pass  # the SDK reports it as it does
    return None


def _result(payload: dict[str, Any], text: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=payload)


def _call(name: str, body: Callable[[], tuple[dict[str, Any], str]]) -> CallToolResult:
    """Run a tool body; memex errors become tool errors, anything else a generic one (logged)."""
    try:
        payload, text = body()
    except MemexError as e:
        raise ToolError(f"{type(e).__name__}: {e}") from None
    except Exception:
        _log.exception("tool %s failed", name)
        raise ToolError("InternalError: the server failed to run this tool; see its log") from None
    return _result(payload, text)


def _json(payload: Any) -> str:
    return dumps(payload, pretty=True)


def _keyed(tool: str, author: str, key: str | None, arguments: Mapping[str, Any]) -> str | None:
    """The store-level idempotency key: a digest of the client's key, the tool, the author and the
    arguments, so a retry (same key, same arguments) is applied once, and a key reused for other
    arguments is a new change rather than a silently dropped one."""
    if key is None:
        return None
    if not key or len(key) > 200:
        raise ValidationError(
            f"idempotency_key: expected 1 to 200 characters, got {len(key)}", "idempotency_key"
        )
    request = json.dumps(
        [author, tool, key, arguments], sort_keys=True, ensure_ascii=True, default=str
    )
    return "mcp:" + hashlib.sha256(request.encode("ascii")).hexdigest()


_READ = ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)
_ADD = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False
)
_CHANGE = ToolAnnotations(
    read_only_hint=False, destructive_hint=True, idempotent_hint=False, open_world_hint=False
)


def _memex_tools(server: MCPServer[Any], t: MemoryTools) -> None:
    def add(
        fn: Callable[..., Any], name: str, description: str, annotations: ToolAnnotations
    ) -> None:
        if t.read_only and name not in READ_TOOLS:
            return
        server.add_tool(
            fn,
            name=name,
            title=name.title(),
            description=description,
            annotations=annotations,
            structured_output=False,
        )

    def remember(
        ctx: Context[Any, Any],
        text: Annotated[StrictStr, Field(description="What to remember (stored as content.text).")],
        scope: Annotated[
            StrictStr,
            Field(description="The scope the item belongs to, e.g. 'user:ada' or 'project:x'."),
        ],
        kind: StrictStr = "observation",
        source_kind: StrictStr = "agent_inferred",
        authority: Score = 0.7,
        importance: Score | None = None,
        conviction: Score | None = None,
        parents: Annotated[
            list[StrictStr] | None, Field(description="Ids of the items this one rests on.")
        ] = None,
        meta: dict[str, Any] | None = None,
        idempotency_key: Key = None,
    ) -> CallToolResult:
        def body() -> tuple[dict[str, Any], str]:
            key = _keyed(
                "remember",
                t.author,
                _client_key(ctx, idempotency_key),
                {
                    "text": text,
                    "scope": scope,
                    "kind": kind,
                    "source_kind": source_kind,
                    "authority": authority,
                    "importance": importance,
                    "conviction": conviction,
                    "parents": parents,
                    "meta": meta,
                },
            )
            out = t.remember(
                text,
                scope,
                kind,
                source_kind,
                authority,
                importance,
                conviction,
                parents,
                meta,
                key=key,
            )
            return out, f"remembered {out['id']}"

        return _call("remember", body)

    def recall(
        ctx: Context[Any, Any],
        query: Annotated[StrictStr, Field(description="The question, in words.")],
        scope: StrictStr | None = None,
        scope_prefix: StrictStr | None = None,
        limit: Annotated[StrictInt, Field(ge=1, le=1000)] = 10,
        budget_tokens: Annotated[
            StrictInt | None, Field(ge=1, description="Token budget (text length / 4 per item).")
        ] = None,
        contradictions: Literal["surface", "filter", "ignore"] = "surface",
    ) -> CallToolResult:
        def body() -> tuple[dict[str, Any], str]:
            out = t.recall(query, scope, scope_prefix, limit, budget_tokens, contradictions)
            lines = [f"{len(out['items'])} item(s)"]
            for n, e in enumerate(out["items"], 1):
                flags = "".join(
                    [
                        " [superseded]" if e["superseded"] else "",
                        f" [contradicted by {', '.join(e['contradicted_by'])}]"
                        if e["contradicted_by"]
                        else "",
                    ]
                )
                lines.append(f"{n}. {e['id']} score={e['score']:.3g}{flags}: {e['text'][:200]}")
            return out, "\n".join(lines)

        return _call("recall", body)

    def update(
        ctx: Context[Any, Any],
        id: StrictStr,
        authority: Score | None = None,
        conviction: Score | None = None,
        importance: Score | None = None,
        meta: Annotated[
            dict[str, Any] | None, Field(description="Replaces the item's meta.")
        ] = None,
        idempotency_key: Key = None,
    ) -> CallToolResult:
        def body() -> tuple[dict[str, Any], str]:
            key = _keyed(
                "update",
                t.author,
                _client_key(ctx, idempotency_key),
                {
                    "id": id,
                    "authority": authority,
                    "conviction": conviction,
                    "importance": importance,
                    "meta": meta,
                },
            )
            out = t.update(id, authority, conviction, importance, meta, key=key)
            return out, f"updated {out['id']}"

        return _call("update", body)

    def link(
        ctx: Context[Any, Any],
        from_: Annotated[
            StrictStr,
            Field(
                validation_alias="from",
                serialization_alias="from",
                description="The id of the item the edge leaves.",
            ),
        ],
        to: Annotated[StrictStr, Field(description="The id of the item the edge points to.")],
        kind: Literal["SUPPORTS", "CONTRADICTS", "SUPERSEDES", "ALIAS", "ABOUT", "DERIVED_FROM"],
        idempotency_key: Key = None,
    ) -> CallToolResult:
        def body() -> tuple[dict[str, Any], str]:
            key = _keyed(
                "link",
                t.author,
                _client_key(ctx, idempotency_key),
                {"from": from_, "to": to, "kind": kind},
            )
            out = t.link(from_, to, kind, key=key)
            return out, f"linked {from_} {kind} {to}: edge {out['edge_id']}"

        return _call("link", body)

    def forget(
        ctx: Context[Any, Any],
        id: StrictStr,
        reason: StrictStr | None = None,
        cascade: Annotated[
            StrictBool, Field(description="Also retract every item derived from this one.")
        ] = False,
        idempotency_key: Key = None,
    ) -> CallToolResult:
        def body() -> tuple[dict[str, Any], str]:
            key = _keyed(
                "forget",
                t.author,
                _client_key(ctx, idempotency_key),
                {"id": id, "reason": reason, "cascade": cascade},
            )
            out = t.forget(id, reason, cascade, key=key)
            return out, f"retracted {len(out['retracted'])} item(s): {', '.join(out['retracted'])}"

        return _call("forget", body)

    def why(
        ctx: Context[Any, Any],
        id: StrictStr,
        max_depth: Annotated[StrictInt, Field(ge=0, le=1000)] = 5,
    ) -> CallToolResult:
        def body() -> tuple[dict[str, Any], str]:
            out = t.why(id, max_depth)
            lines = [
                f"{'  ' * n['depth']}{n['id']}: {n['text'][:120]}{' ...' if n.get('truncated') else ''}"
                for n in out["nodes"]
            ]
            return out, "\n".join(lines)

        return _call("why", body)

    def contradictions(ctx: Context[Any, Any], scope: StrictStr | None = None) -> CallToolResult:
        def body() -> tuple[dict[str, Any], str]:
            out = t.contradictions(scope)
            lines = [f"{len(out['contradictions'])} active contradiction(s)"]
            lines += [f"{c['a']['id']} CONTRADICTS {c['b']['id']}" for c in out["contradictions"]]
            return out, "\n".join(lines)

        return _call("contradictions", body)

    def resolve(
        ctx: Context[Any, Any],
        winner: Annotated[StrictStr, Field(description="The id of the item that stands.")],
        loser: Annotated[StrictStr, Field(description="The id of the item it supersedes.")],
        reason: StrictStr | None = None,
        idempotency_key: Key = None,
    ) -> CallToolResult:
        def body() -> tuple[dict[str, Any], str]:
            key = _keyed(
                "resolve",
                t.author,
                _client_key(ctx, idempotency_key),
                {"winner": winner, "loser": loser, "reason": reason},
            )
            out = t.resolve(winner, loser, reason, key=key)
            return out, f"{winner} supersedes {loser}; {len(out['changes'])} change(s)"

        return _call("resolve", body)

    add(
        remember,
        "remember",
        "Store a new memory item (a piece of text in a scope) and return its id.",
        _ADD,
    )
    add(
        recall,
        "recall",
        "Find the items that answer a question: ranked by text relevance, then authority, conviction and "
        "importance; superseded items are dropped and contradictions flagged (contradictions='surface').",
        _READ,
    )
    add(update, "update", "Change an item's authority, conviction, importance or meta.", _CHANGE)
    add(
        link,
        "link",
        "Link two items with a typed edge (SUPPORTS, CONTRADICTS, SUPERSEDES, ALIAS, ABOUT, "
        "DERIVED_FROM) and return the edge id.",
        _ADD,
    )
    add(
        forget,
        "forget",
        "Retract an item (and, with cascade, every item derived from it).",
        _CHANGE,
    )
    add(
        why,
        "why",
        "Explain an item: the items it rests on (its parents, recursively), as a flat list of "
        "nodes with their depth and parent ids.",
        _READ,
    )
    add(contradictions, "contradictions", "List the active contradictions, with both sides.", _READ)
    add(
        resolve,
        "resolve",
        "Settle a contradiction: the winner supersedes the loser, whose authority drops.",
        _CHANGE,
    )


EntityIn = Annotated[
    dict[str, Any],
    Field(
        json_schema_extra={
            "properties": {
                "name": {"type": "string", "description": "The name of the entity"},
                "entityType": {"type": "string", "description": "The type of the entity"},
                "observations": {
                    "type": "array",
                    "items": {"type": "string"},
                    "description": "An array of observation contents associated with the entity",
                },
            },
            "required": ["name", "entityType", "observations"],
            "additionalProperties": False,
        }
    ),
]
RelationIn = Annotated[
    dict[str, Any],
    Field(
        json_schema_extra={
            "properties": {
                "from": {
                    "type": "string",
                    "description": "The name of the entity where the relation starts",
                },
                "to": {
                    "type": "string",
                    "description": "The name of the entity where the relation ends",
                },
                "relationType": {"type": "string", "description": "The type of the relation"},
            },
            "required": ["from", "to", "relationType"],
            "additionalProperties": False,
        }
    ),
]
ObservationIn = Annotated[
    dict[str, Any],
    Field(
        json_schema_extra={
            "properties": {
                "entityName": {
                    "type": "string",
                    "description": "The name of the entity to add the observations to",
                },
                "contents": {
                    "type": "array",
                    "items": {"type": "string"},
                    "description": "An array of observation contents to add",
                },
            },
            "required": ["entityName", "contents"],
            "additionalProperties": False,
        }
    ),
]
DeletionIn = Annotated[
    dict[str, Any],
    Field(
        json_schema_extra={
            "properties": {
                "entityName": {
                    "type": "string",
                    "description": "The name of the entity containing the observations",
                },
                "observations": {
                    "type": "array",
                    "items": {"type": "string"},
                    "description": "An array of observations to delete",
                },
            },
            "required": ["entityName", "observations"],
            "additionalProperties": False,
        }
    ),
]


def _kg_tools(server: MCPServer[Any], kg: KgTools) -> None:
    author = kg.tools.author

    def write(
        name: str,
        run: Callable[[str | None], dict[str, Any]],
        ctx: Context[Any, Any],
        arguments: Any,
    ) -> CallToolResult:
        def body() -> tuple[dict[str, Any], str]:
            out = run(_keyed(name, author, _client_key(ctx, None), {"arguments": arguments}))
            return out, out["message"] if "message" in out else _json(next(iter(out.values())))

        return _call(name, body)

    def read(name: str, run: Callable[[], dict[str, Any]]) -> CallToolResult:
        def body() -> tuple[dict[str, Any], str]:
            out = run()
            return out, _json(out)

        return _call(name, body)

    def create_entities(ctx: Context[Any, Any], entities: list[EntityIn]) -> CallToolResult:
        return write(
            "create_entities", lambda key: kg.create_entities(entities, key=key), ctx, entities
        )

    def create_relations(ctx: Context[Any, Any], relations: list[RelationIn]) -> CallToolResult:
        return write(
            "create_relations", lambda key: kg.create_relations(relations, key=key), ctx, relations
        )

    def add_observations(
        ctx: Context[Any, Any], observations: list[ObservationIn]
    ) -> CallToolResult:
        return write(
            "add_observations",
            lambda key: kg.add_observations(observations, key=key),
            ctx,
            observations,
        )

    def delete_entities(
        ctx: Context[Any, Any],
        entityNames: Annotated[
            list[StrictStr], Field(description="An array of entity names to delete")
        ],
    ) -> CallToolResult:
        return write(
            "delete_entities",
            lambda key: kg.delete_entities(entityNames, key=key),
            ctx,
            entityNames,
        )

    def delete_observations(ctx: Context[Any, Any], deletions: list[DeletionIn]) -> CallToolResult:
        return write(
            "delete_observations",
            lambda key: kg.delete_observations(deletions, key=key),
            ctx,
            deletions,
        )

    def delete_relations(
        ctx: Context[Any, Any],
        relations: Annotated[
            list[RelationIn], Field(description="An array of relations to delete")
        ],
    ) -> CallToolResult:
        return write(
            "delete_relations", lambda key: kg.delete_relations(relations, key=key), ctx, relations
        )

    def read_graph(ctx: Context[Any, Any]) -> CallToolResult:
        return read("read_graph", kg.read_graph)

    def search_nodes(
        ctx: Context[Any, Any],
        query: Annotated[
            StrictStr,
            Field(
                description="The search query to match against entity names, types, and observation content"
            ),
        ],
    ) -> CallToolResult:
        return read("search_nodes", lambda: kg.search_nodes(query))

    def open_nodes(
        ctx: Context[Any, Any],
        names: Annotated[
            list[StrictStr], Field(description="An array of entity names to retrieve")
        ],
    ) -> CallToolResult:
        return read("open_nodes", lambda: kg.open_nodes(names))

    tools: list[tuple[Callable[..., Any], str, str, ToolAnnotations]] = [
        (
            create_entities,
            "create_entities",
            "Create multiple new entities in the knowledge graph",
            _ADD,
        ),
        (
            create_relations,
            "create_relations",
            "Create multiple new relations between entities in the "
            "knowledge graph. Relations should be in active voice",
            _ADD,
        ),
        (
            add_observations,
            "add_observations",
            "Add new observations to existing entities in the knowledge graph",
            _ADD,
        ),
        (
            delete_entities,
            "delete_entities",
            "Delete multiple entities and their associated relations from the knowledge graph",
            _CHANGE,
        ),
        (
            delete_observations,
            "delete_observations",
            "Delete specific observations from entities in the knowledge graph",
            _CHANGE,
        ),
        (
            delete_relations,
            "delete_relations",
            "Delete multiple relations from the knowledge graph",
            _CHANGE,
        ),
        (read_graph, "read_graph", "Read the entire knowledge graph", _READ),
        (
            search_nodes,
            "search_nodes",
            "Search for nodes in the knowledge graph based on a query",
            _READ,
        ),
        (
            open_nodes,
            "open_nodes",
            "Open specific nodes in the knowledge graph by their names",
            _READ,
        ),
    ]
    for fn, name, description, hints in tools:
        if kg.tools.read_only and name not in KG_READ_TOOLS:
            continue
        if name.startswith(
            "delete_"
        ):  # as the reference server: deleting twice changes nothing more
            hints = hints.model_copy(update={"idempotent_hint": True})
        server.add_tool(
            fn,
            name=name,
            title=name.replace("_", " ").title(),
            description=description,
            annotations=hints,
            structured_output=False,
        )

    @server.resource(
        "memory://knowledge-graph",
        name="knowledge-graph",
        title="Knowledge Graph",
        description="The full knowledge graph with all entities and relations",
        mime_type="application/json",
    )
    def knowledge_graph() -> str:
        try:
            return _json(kg.read_graph())
        except MemexError as e:
            raise ResourceError(f"{type(e).__name__}: {e}") from None


def _close_schemas(server: MCPServer[Any]) -> None:
    """Every registered tool declares ``additionalProperties: false`` and its argument model
    forbids other names, so the SDK's own validation refuses them too (a call that bypasses
    :class:`_ArgumentErrors`, such as ``server.call_tool`` in process)."""
    for tool in server._tool_manager.list_tools():
        tool.parameters["additionalProperties"] = False
        model = tool.fn_metadata.arg_model
        tool.fn_metadata.arg_model = type(
            model.__name__,
            (model,),
            {
                "__module__": model.__module__,
                "model_config": ConfigDict(**{**model.model_config, "extra": "forbid"}),
            },
        )


def build_server(tools: MemoryTools, *, profile: str = "memex") -> MCPServer[Any]:
    """An MCP server exposing ``tools`` (run it with ``server.run("stdio")``).

    Args:
        tools: the :class:`~memex.mcp.tools.MemoryTools` over the store (its
            author, scope prefix and read-only flag apply to every tool).
        profile: ``"memex"`` (remember, recall, update, link, forget, why,
            contradictions, resolve) or ``"kg"`` (the nine tools of the
            reference knowledge-graph memory server, :mod:`memex.mcp.kg`).
    Returns:
        The :class:`mcp.server.mcpserver.MCPServer`; with ``read_only`` only
        the reading tools are registered. Every tool's input schema is
        closed (``additionalProperties: false``) and the server refuses an
        argument a tool does not declare.
    Raises:
        ValidationError: an unknown profile.
    """
    if profile not in PROFILES:
        raise ValidationError(
            f"profile: expected one of {', '.join(PROFILES)}, got {profile!r}", "profile"
        )
    server: MCPServer[Any] = MCPServer(
        name="memex" if profile == "memex" else "memex-kg",
        version=__version__,
        instructions=(
            "memex: a shared, durable belief store. Use recall before answering from memory, remember to store "
            "what you learn, link/resolve to record support and contradictions, why to explain an item."
            if profile == "memex"
            else "A knowledge graph of entities, relations and observations, kept durably by memex."
        ),
        log_level="WARNING",
    )
    server._lowlevel_server.middleware.append(_ArgumentErrors(server))
    if profile == "memex":
        _memex_tools(server, tools)
    else:
        _kg_tools(server, KgTools(tools))
    _close_schemas(server)
    return server
