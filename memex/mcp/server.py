"""The MCP binding: :class:`~memex.mcp.tools.MemoryTools` and :class:`~memex.mcp.kg.KgTools`
served over the Model Context Protocol with the official SDK (``mcp`` 2.3, the ``mcp`` extra).

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
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from types import MethodType
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ToolError
from mcp.server.mcpserver.tools import Tool
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import ConfigDict, Field, StrictBool, StrictInt, StrictStr
from pydantic import ValidationError as PydanticValidationError
from pydantic.config import JsonDict, JsonValue

from memex import __version__
from memex.codec.jsonfmt import dumps
from memex.errors import MemexError, ValidationError
from memex.mcp._arguments import refuse_unknown
from memex.mcp.kg import KG_READ_TOOLS, KgTools
from memex.mcp.tools import READ_TOOLS, MemoryTools
from memex.store.everyday import (
    RECALL_CONTRADICTIONS,
    RECALL_LIMIT,
    REMEMBER_AUTHORITY,
    REMEMBER_CONVICTION,
    REMEMBER_IMPORTANCE,
    REMEMBER_KIND,
    REMEMBER_SOURCE_KIND,
)

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
    An argument the tool does not declare is reported first, with the closest declared name.

    Args:
        tools: the server's tools by name (the ones it was built with).
    """

    def __init__(self, tools: Mapping[str, Tool]) -> None:
        self._tools = tools

    async def __call__(self, ctx: Any, call_next: Any) -> Any:
        params = ctx.params if ctx.method == "tools/call" else None
        if isinstance(params, Mapping) and isinstance(params.get("name"), str):
            tool = self._tools.get(params["name"])
            arguments = params.get("arguments") or {}
            if tool is not None and isinstance(arguments, Mapping):
                problem = _argument_problem(tool, arguments)
                if problem is not None:
                    text = f"Error executing tool {tool.name}: ValidationError: {problem}"
                    return CallToolResult(
                        content=[TextContent(type="text", text=text)], is_error=True
                    )
        return await call_next(ctx)


def _argument_problem(tool: Tool, arguments: Mapping[str, Any]) -> str | None:
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


def _call(
    name: str, run: Callable[[], dict[str, Any]], render: Callable[[dict[str, Any]], str]
) -> CallToolResult:
    """Run a tool: its result carries ``run()``'s payload and ``render(payload)`` as its text.

    A memex error (raised by ``run`` or ``render``) becomes a tool error
    ``"<MemexErrorType>: <message>"``, anything else a generic one (logged).
    """
    try:
        payload = run()
        text = render(payload)
    except MemexError as e:
        raise ToolError(f"{type(e).__name__}: {e}") from None
    except Exception:
        _log.exception("tool %s failed", name)
        raise ToolError("InternalError: the server failed to run this tool; see its log") from None
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=payload)


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


class _Handlers:
    """The tool functions of a profile, as methods named as their tools: each method's typed
    signature (after ``self``) is its tool's input schema, its docstring the tool's description
    (as clients read it, on one line), and it returns the tool's result.

    Args:
        author: the author of the server's writes (part of every idempotency key).
    """

    def __init__(self, author: str) -> None:
        self.author = author

    def _write(
        self,
        ctx: Context[Any, Any],
        name: str,
        client_key: str | None,
        arguments: Mapping[str, Any],
        run: Callable[[str | None], dict[str, Any]],
        render: Callable[[dict[str, Any]], str],
    ) -> CallToolResult:
        """Run the writing tool ``name`` as :func:`_call` does, ``run`` getting the store-level
        idempotency key of the call (``None`` without a client key): made from the client's key
        (the ``idempotency_key`` argument ``client_key``, else the request's ``_meta``) and the
        call's ``arguments``."""
        return _call(
            name,
            lambda: run(_keyed(name, self.author, _client_key(ctx, client_key), arguments)),
            render,
        )


def _recall_text(out: dict[str, Any]) -> str:
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
    return "\n".join(lines)


def _why_text(out: dict[str, Any]) -> str:
    return "\n".join(
        f"{'  ' * n['depth']}{n['id']}: {n['text'][:120]}{' ...' if n.get('truncated') else ''}"
        for n in out["nodes"]
    )


def _contradictions_text(out: dict[str, Any]) -> str:
    lines = [f"{len(out['contradictions'])} active contradiction(s)"]
    lines += [f"{c['a']['id']} CONTRADICTS {c['b']['id']}" for c in out["contradictions"]]
    return "\n".join(lines)


class _MemexHandlers(_Handlers):
    """The ``memex`` profile's tools over ``t``, a :class:`~memex.mcp.tools.MemoryTools`."""

    def __init__(self, t: MemoryTools) -> None:
        super().__init__(t.author)
        self.t = t

    def remember(
        self,
        ctx: Context[Any, Any],
        text: Annotated[StrictStr, Field(description="What to remember (stored as content.text).")],
        scope: Annotated[
            StrictStr,
            Field(description="The scope the item belongs to, e.g. 'user:ada' or 'project:x'."),
        ],
        kind: StrictStr = REMEMBER_KIND,
        source_kind: StrictStr = REMEMBER_SOURCE_KIND,
        authority: Score = REMEMBER_AUTHORITY,
        importance: Score | None = REMEMBER_IMPORTANCE,
        conviction: Score | None = REMEMBER_CONVICTION,
        parents: Annotated[
            list[StrictStr] | None, Field(description="Ids of the items this one rests on.")
        ] = None,
        meta: dict[str, Any] | None = None,
        idempotency_key: Key = None,
    ) -> CallToolResult:
        """Store a new memory item (a piece of text in a scope) and return its id."""
        arguments: dict[str, Any] = {
            "text": text,
            "scope": scope,
            "kind": kind,
            "source_kind": source_kind,
            "authority": authority,
            "importance": importance,
            "conviction": conviction,
            "parents": parents,
            "meta": meta,
        }
        return self._write(
            ctx,
            "remember",
            idempotency_key,
            arguments,
            lambda key: self.t.remember(**arguments, key=key),
            lambda out: f"remembered {out['id']}",
        )

    def recall(
        self,
        ctx: Context[Any, Any],
        query: Annotated[StrictStr, Field(description="The question, in words.")],
        scope: StrictStr | None = None,
        scope_prefix: StrictStr | None = None,
        limit: Annotated[StrictInt, Field(ge=1, le=1000)] = RECALL_LIMIT,
        budget_tokens: Annotated[
            StrictInt | None, Field(ge=1, description="Token budget (text length / 4 per item).")
        ] = None,
        contradictions: Literal["surface", "filter", "ignore"] = RECALL_CONTRADICTIONS,
    ) -> CallToolResult:
        """Find the items that answer a question: ranked by text relevance, then authority,
        conviction and importance; superseded items are dropped and contradictions flagged
        (contradictions='surface')."""
        return _call(
            "recall",
            lambda: self.t.recall(query, scope, scope_prefix, limit, budget_tokens, contradictions),
            _recall_text,
        )

    def update(
        self,
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
        """Change an item's authority, conviction, importance or meta."""
        arguments: dict[str, Any] = {
            "id": id,
            "authority": authority,
            "conviction": conviction,
            "importance": importance,
            "meta": meta,
        }
        return self._write(
            ctx,
            "update",
            idempotency_key,
            arguments,
            lambda key: self.t.update(**arguments, key=key),
            lambda out: f"updated {out['id']}",
        )

    def link(
        self,
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
        """Link two items with a typed edge (SUPPORTS, CONTRADICTS, SUPERSEDES, ALIAS, ABOUT,
        DERIVED_FROM) and return the edge id."""
        return self._write(
            ctx,
            "link",
            idempotency_key,
            {"from": from_, "to": to, "kind": kind},
            lambda key: self.t.link(from_, to, kind, key=key),
            lambda out: f"linked {from_} {kind} {to}: edge {out['edge_id']}",
        )

    def forget(
        self,
        ctx: Context[Any, Any],
        id: StrictStr,
        reason: StrictStr | None = None,
        cascade: Annotated[
            StrictBool, Field(description="Also retract every item derived from this one.")
        ] = False,
        idempotency_key: Key = None,
    ) -> CallToolResult:
        """Retract an item (and, with cascade, every item derived from it)."""
        arguments: dict[str, Any] = {"id": id, "reason": reason, "cascade": cascade}
        return self._write(
            ctx,
            "forget",
            idempotency_key,
            arguments,
            lambda key: self.t.forget(**arguments, key=key),
            lambda out: f"retracted {len(out['retracted'])} item(s): {', '.join(out['retracted'])}",
        )

    def why(
        self,
        ctx: Context[Any, Any],
        id: StrictStr,
        max_depth: Annotated[StrictInt, Field(ge=0, le=1000)] = 5,
    ) -> CallToolResult:
        """Explain an item: the items it rests on (its parents, recursively), as a flat list of
        nodes with their depth and parent ids."""
        return _call("why", lambda: self.t.why(id, max_depth), _why_text)

    def contradictions(
        self, ctx: Context[Any, Any], scope: StrictStr | None = None
    ) -> CallToolResult:
        """List the active contradictions, with both sides."""
        return _call("contradictions", lambda: self.t.contradictions(scope), _contradictions_text)

    def resolve(
        self,
        ctx: Context[Any, Any],
        winner: Annotated[StrictStr, Field(description="The id of the item that stands.")],
        loser: Annotated[StrictStr, Field(description="The id of the item it supersedes.")],
        reason: StrictStr | None = None,
        idempotency_key: Key = None,
    ) -> CallToolResult:
        """Settle a contradiction: the winner supersedes the loser, whose authority drops."""
        arguments: dict[str, Any] = {"winner": winner, "loser": loser, "reason": reason}
        return self._write(
            ctx,
            "resolve",
            idempotency_key,
            arguments,
            lambda key: self.t.resolve(**arguments, key=key),
            lambda out: f"{winner} supersedes {loser}; {len(out['changes'])} change(s)",
        )


def _closed(properties: JsonDict) -> Any:
    """The pydantic ``Field`` that advertises a ``dict`` argument as a JSON object of
    ``properties`` (each a JSON schema), all of them required and no other."""
    required: list[JsonValue] = [name for name in properties]
    return Field(
        json_schema_extra={
            "properties": properties,
            "required": required,
            "additionalProperties": False,
        }
    )


def _string(description: str) -> JsonDict:
    return {"type": "string", "description": description}


def _strings(description: str) -> JsonDict:
    return {"type": "array", "items": {"type": "string"}, "description": description}


EntityIn = Annotated[
    dict[str, Any],
    _closed(
        {
            "name": _string("The name of the entity"),
            "entityType": _string("The type of the entity"),
            "observations": _strings("An array of observation contents associated with the entity"),
        }
    ),
]
RelationIn = Annotated[
    dict[str, Any],
    _closed(
        {
            "from": _string("The name of the entity where the relation starts"),
            "to": _string("The name of the entity where the relation ends"),
            "relationType": _string("The type of the relation"),
        }
    ),
]
ObservationIn = Annotated[
    dict[str, Any],
    _closed(
        {
            "entityName": _string("The name of the entity to add the observations to"),
            "contents": _strings("An array of observation contents to add"),
        }
    ),
]
DeletionIn = Annotated[
    dict[str, Any],
    _closed(
        {
            "entityName": _string("The name of the entity containing the observations"),
            "observations": _strings("An array of observations to delete"),
        }
    ),
]


def _kg_text(out: dict[str, Any]) -> str:
    """A writing kg tool's text: its message, else the JSON of its one list."""
    return out["message"] if "message" in out else _json(next(iter(out.values())))


class _KgHandlers(_Handlers):
    """The ``kg`` profile's tools over ``kg``, a :class:`~memex.mcp.kg.KgTools`: each calls the
    :class:`~memex.mcp.kg.KgTools` method of its name."""

    def __init__(self, kg: KgTools) -> None:
        super().__init__(kg.tools.author)
        self.kg = kg

    def _change(
        self,
        ctx: Context[Any, Any],
        name: str,
        run: Callable[..., dict[str, Any]],
        given: Any,
    ) -> CallToolResult:
        """The writing tool ``name``: ``run(given, key=...)``, keyed by the request's ``_meta`` only."""
        return self._write(
            ctx, name, None, {"arguments": given}, lambda key: run(given, key=key), _kg_text
        )

    def create_entities(self, ctx: Context[Any, Any], entities: list[EntityIn]) -> CallToolResult:
        """Create multiple new entities in the knowledge graph"""
        return self._change(ctx, "create_entities", self.kg.create_entities, entities)

    def create_relations(
        self, ctx: Context[Any, Any], relations: list[RelationIn]
    ) -> CallToolResult:
        """Create multiple new relations between entities in the knowledge graph. Relations should
        be in active voice"""
        return self._change(ctx, "create_relations", self.kg.create_relations, relations)

    def add_observations(
        self, ctx: Context[Any, Any], observations: list[ObservationIn]
    ) -> CallToolResult:
        """Add new observations to existing entities in the knowledge graph"""
        return self._change(ctx, "add_observations", self.kg.add_observations, observations)

    def delete_entities(
        self,
        ctx: Context[Any, Any],
        entityNames: Annotated[
            list[StrictStr], Field(description="An array of entity names to delete")
        ],
    ) -> CallToolResult:
        """Delete multiple entities and their associated relations from the knowledge graph"""
        return self._change(ctx, "delete_entities", self.kg.delete_entities, entityNames)

    def delete_observations(
        self, ctx: Context[Any, Any], deletions: list[DeletionIn]
    ) -> CallToolResult:
        """Delete specific observations from entities in the knowledge graph"""
        return self._change(ctx, "delete_observations", self.kg.delete_observations, deletions)

    def delete_relations(
        self,
        ctx: Context[Any, Any],
        relations: Annotated[
            list[RelationIn], Field(description="An array of relations to delete")
        ],
    ) -> CallToolResult:
        """Delete multiple relations from the knowledge graph"""
        return self._change(ctx, "delete_relations", self.kg.delete_relations, relations)

    def read_graph(self, ctx: Context[Any, Any]) -> CallToolResult:
        """Read the entire knowledge graph"""
        return _call("read_graph", self.kg.read_graph, _json)

    def search_nodes(
        self,
        ctx: Context[Any, Any],
        query: Annotated[
            StrictStr,
            Field(
                description="The search query to match against entity names, types, and observation content"
            ),
        ],
    ) -> CallToolResult:
        """Search for nodes in the knowledge graph based on a query"""
        return _call("search_nodes", lambda: self.kg.search_nodes(query), _json)

    def open_nodes(
        self,
        ctx: Context[Any, Any],
        names: Annotated[
            list[StrictStr], Field(description="An array of entity names to retrieve")
        ],
    ) -> CallToolResult:
        """Open specific nodes in the knowledge graph by their names"""
        return _call("open_nodes", lambda: self.kg.open_nodes(names), _json)


_READ = ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)
_ADD = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False
)
_CHANGE = ToolAnnotations(
    read_only_hint=False, destructive_hint=True, idempotent_hint=False, open_world_hint=False
)
#: the kg deletes, as in the reference server: deleting twice changes nothing more
_DELETE = ToolAnnotations(
    read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=False
)


@dataclass(frozen=True)
class _Spec:
    """One tool of a profile: its handler (a method of the profile's :class:`_Handlers`, named as
    the tool, whose docstring is the tool's description) and its hints."""

    handler: Callable[..., CallToolResult]
    annotations: ToolAnnotations

    @property
    def name(self) -> str:
        """The tool's name: its handler's."""
        return self.handler.__name__

    @property
    def description(self) -> str:
        """The tool's description: its handler's docstring on one line."""
        return " ".join((self.handler.__doc__ or "").split())


#: The ``memex`` profile, in the order ``tools/list`` gives.
_MEMEX_TOOLS = (
    _Spec(_MemexHandlers.remember, _ADD),
    _Spec(_MemexHandlers.recall, _READ),
    _Spec(_MemexHandlers.update, _CHANGE),
    _Spec(_MemexHandlers.link, _ADD),
    _Spec(_MemexHandlers.forget, _CHANGE),
    _Spec(_MemexHandlers.why, _READ),
    _Spec(_MemexHandlers.contradictions, _READ),
    _Spec(_MemexHandlers.resolve, _CHANGE),
)
#: The ``kg`` profile (the reference server's descriptions), in the order ``tools/list`` gives.
_KG_TOOLS = (
    _Spec(_KgHandlers.create_entities, _ADD),
    _Spec(_KgHandlers.create_relations, _ADD),
    _Spec(_KgHandlers.add_observations, _ADD),
    _Spec(_KgHandlers.delete_entities, _DELETE),
    _Spec(_KgHandlers.delete_observations, _DELETE),
    _Spec(_KgHandlers.delete_relations, _DELETE),
    _Spec(_KgHandlers.read_graph, _READ),
    _Spec(_KgHandlers.search_nodes, _READ),
    _Spec(_KgHandlers.open_nodes, _READ),
)


def _tools(
    specs: tuple[_Spec, ...], handlers: _Handlers, read_only: bool, read_names: Collection[str]
) -> list[Tool]:
    """The SDK's :class:`~mcp.server.mcpserver.tools.Tool` of each spec (with ``read_only``, only
    those named in ``read_names``), its handler bound to ``handlers``.

    Every tool's input schema is closed (``additionalProperties: false``) and
    its argument model forbids other names, so the SDK's own validation
    refuses them too (a call that bypasses :class:`_ArgumentErrors`, such as
    ``server.call_tool`` in process).
    """
    tools = []
    for spec in specs:
        if read_only and spec.name not in read_names:
            continue
        tool = Tool.from_function(
            MethodType(spec.handler, handlers),
            name=spec.name,
            title=spec.name.replace("_", " ").title(),
            description=spec.description,
            annotations=spec.annotations,
            structured_output=False,
        )
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
        tools.append(tool)
    return tools


def _kg_resource(server: MCPServer[Any], kg: KgTools) -> None:
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
    kg = KgTools(tools) if profile == "kg" else None
    served = (
        _tools(_MEMEX_TOOLS, _MemexHandlers(tools), tools.read_only, READ_TOOLS)
        if kg is None
        else _tools(_KG_TOOLS, _KgHandlers(kg), tools.read_only, KG_READ_TOOLS)
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
        tools=served,
        middleware=[_ArgumentErrors({tool.name: tool for tool in served})],
    )
    if kg is not None:
        _kg_resource(server, kg)
    return server
