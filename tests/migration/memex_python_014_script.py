"""A program written against memex-python 0.14's documented API, run against memex.

Each section follows an example of memex-python 0.14.0's README (the calls,
argument names and methods it documents, including the Pydantic methods its
models carry), with enough data to print something checkable. Ids and times
are never printed, so the output is the same on every run.

tests/test_migration_script.py runs this file with this repository's memex in
a subprocess and checks every line it prints. The file also runs unchanged
on memex-python 0.14.0 (in a separate virtual environment: both install the
``memex`` package); the lines it prints differently there are recorded in
that test and are the behaviour differences listed in docs/migration.md. Three documented things cannot be
bridged and are not called here, since each would stop the program (see
docs/migration.md): ``Model.model_construct(...)``, ``Model.model_json_schema()``
and ``except pydantic.ValidationError`` (memex does not depend on Pydantic;
both errors are ``ValueError``, which is what this program catches).
"""

from __future__ import annotations

import json

from memex import (
    MemexStore,
    apply_command,
    apply_intent_command,
    apply_many,
    apply_task_command,
    bulk_adjust_scores,
    cascade_retract,
    create_event_envelope,
    create_graph_state,
    create_intent,
    create_intent_state,
    create_memory_item,
    create_task,
    create_task_state,
    decay_importance,
    export_slice,
    from_json,
    get_alias_group,
    get_contradictions,
    get_items,
    get_scored_items,
    get_stale_items,
    get_stats,
    get_support_set,
    get_support_tree,
    import_slice,
    mark_alias,
    mark_contradiction,
    parse,
    replay_from_envelopes,
    resolve_contradiction,
    smart_retrieve,
    stringify,
    to_json,
)
from memex.schemas import validate_command


def show(label: str, value: object) -> None:
    print(f"{label}: {value}")


def tour() -> None:
    """README: "60-second tour" and "Event sourcing and immutability"."""
    state = create_graph_state()
    record = create_memory_item(
        scope="case:liebeck-v-mcdonalds",
        kind="observation",
        content={
            "source": "trial record (Liebeck v. McDonald's Restaurants, 1994)",
            "finding": "coffee served at 180-190°F; third-degree burns requiring "
            "skin grafts; ~700 prior burn complaints on file",
        },
        author="source:trial-record-1994",
        source_kind="imported",
        authority=0.95,
        conviction=0.9,
        importance=0.7,
    )
    state, events = apply_command(state, {"type": "memory.create", "item": record})
    show("tour.events", [e.type for e in events])
    assessment = create_memory_item(
        scope="case:liebeck-v-mcdonalds",
        kind="hypothesis",
        content={
            "claim": "the verdict rested on documented gross negligence, not a frivolous claim"
        },
        author="agent:legal-researcher",
        source_kind="agent_inferred",
        parents=[record.id],
        authority=0.55,
        conviction=0.75,
        importance=0.85,
    )
    state, events = apply_command(state, {"type": "memory.create", "item": assessment})

    ranked = get_scored_items(state, {"authority": 0.5, "conviction": 0.2, "importance": 0.3})
    show("tour.ranked", [(s.item.kind, round(s.score, 4)) for s in ranked])

    tree = get_support_tree(state, assessment.id)
    assert tree is not None
    show(
        "tour.tree",
        (tree.item == assessment, tree.parents[0].item == record, len(tree.parents[0].parents)),
    )

    result = apply_command(
        state, {"type": "memory.retract", "item_id": record.id, "author": "user:ada"}
    )
    show(
        "tour.result", (len(result.state.items), [e.type for e in result.events], len(state.items))
    )

    # Entities are frozen; an edit is model_copy(update=...).
    try:
        record.authority = 0.1  # type: ignore[misc]
    except Exception as exc:  # memex-python: pydantic.ValidationError (frozen_instance)
        show("tour.frozen", type(exc).__name__)
    lowered = record.model_copy(update={"authority": 0.5})
    show("tour.model_copy", (lowered.authority, record.authority, lowered.id == record.id))
    # One content dict reused for several items.
    content = {"text": "tea"}
    first = create_memory_item(
        scope="s",
        kind="observation",
        content=content,
        author="a",
        source_kind="observed",
        authority=0.5,
    )
    content["text"] = "coffee"
    show("tour.content_reused", first.content["text"])
    try:
        create_memory_item(
            scope="s",
            kind="observation",
            content={},
            author="a",
            source_kind="observed",
            authority=1.5,
        )
    except ValueError as exc:  # the README says pydantic.ValidationError, a ValueError
        show("tour.out_of_range", (type(exc).__name__, "authority" in str(exc)))


def trust_and_disagreement() -> None:
    """README: "Differential trust" and "Preserved disagreement"."""
    state = create_graph_state()
    audited = create_memory_item(
        scope="10K:ACME-2025",
        kind="observation",
        content={"line": "revenue", "value": 9.84e9, "period": "FY2025"},
        author="filing:ACME-10K-2025",
        source_kind="user_explicit",
        authority=0.98,
        importance=0.85,
    )
    rumor = create_memory_item(
        scope="10K:ACME-2025",
        kind="hypothesis",
        content={"claim": "revenue will be restated downward"},
        author="social:anon-tip",
        source_kind="agent_inferred",
        authority=0.2,
        importance=0.9,
    )
    for item in (audited, rumor):
        state = apply_command(state, {"type": "memory.create", "item": item}).state
    queue = get_items(state, {"range": {"authority": {"max": 0.5}, "importance": {"min": 0.7}}})
    show("trust.attention_queue", [i.content["claim"] for i in queue])

    s = create_graph_state()
    dod = create_memory_item(
        scope="geo:event-2023-balloon",
        kind="assertion",
        content={"claim": "PRC surveillance platform"},
        author="agency:US-DOD",
        source_kind="user_explicit",
        authority=0.85,
        conviction=0.85,
        importance=0.95,
    )
    mfa = create_memory_item(
        scope="geo:event-2023-balloon",
        kind="assertion",
        content={"claim": "civilian weather balloon, off-course"},
        author="agency:PRC-MFA",
        source_kind="user_explicit",
        authority=0.7,
        conviction=0.8,
        importance=0.95,
    )
    for item in (dod, mfa):
        s = apply_command(s, {"type": "memory.create", "item": item}).state
    s = mark_contradiction(s, dod.id, mfa.id, "agent:event-router").state

    briefing = smart_retrieve(
        s,
        budget=4000,
        cost_fn=lambda i: len(str(i.content)),
        weights={"authority": 0.4, "importance": 0.6},
        contradictions="surface",
        diversity={"source_penalty": 0.4},
    )
    show(
        "disagree.surface",
        [
            (
                b.item.content["claim"],
                round(b.score, 4),
                [c.content["claim"] for c in b.contradicted_by or []],
            )
            for b in briefing
        ],
    )
    clean = smart_retrieve(
        s,
        budget=4000,
        cost_fn=lambda i: len(str(i.content)),
        weights={"authority": 0.4, "importance": 0.6},
        contradictions="filter",
    )
    show("disagree.filter", [b.item.content["claim"] for b in clean])
    show("disagree.contradictions", len(get_contradictions(s)))

    # The Pydantic methods of a result, as a memex-python user logs one.
    show("disagree.scored_keys", list(briefing[1].model_dump()))
    dumped = briefing[0].model_dump(exclude_none=True)
    show(
        "disagree.model_dump",
        (sorted(dumped), sorted(dumped["item"])[:4], len(dumped["contradicted_by"])),
    )


def provenance_and_time() -> None:
    """README: "Causal traceability", "Temporal honesty", staleness, aliases."""
    state = create_graph_state()
    footnote = create_memory_item(
        scope="credit:acme",
        kind="observation",
        content={"note": "footnote 12"},
        author="filing:10K",
        source_kind="imported",
        authority=0.95,
    )
    debt = create_memory_item(
        scope="credit:acme",
        kind="observation",
        content={"line": "debt"},
        author="filing:10K",
        source_kind="imported",
        authority=0.95,
        parents=[footnote.id],
    )
    ebitda = create_memory_item(
        scope="credit:acme",
        kind="observation",
        content={"line": "ebitda"},
        author="filing:10K",
        source_kind="imported",
        authority=0.95,
    )
    leverage = create_memory_item(
        scope="credit:acme",
        kind="derivation",
        content={"ratio": "leverage"},
        author="agent:analyst",
        source_kind="derived_deterministic",
        authority=0.9,
        parents=[debt.id, ebitda.id],
    )
    rating = create_memory_item(
        scope="credit:acme",
        kind="hypothesis",
        content={"rating": "BBB"},
        author="agent:analyst",
        source_kind="agent_inferred",
        authority=0.6,
        importance=0.8,
        parents=[leverage.id],
    )
    for item in (footnote, debt, ebitda, leverage, rating):
        state = apply_command(state, {"type": "memory.create", "item": item}).state
    rating_id = rating.id

    support = get_support_set(state, rating_id)
    show("prov.support_set", [next(iter(i.content.values())) for i in support])

    decayed = get_scored_items(
        state,
        {
            "authority": 0.5,
            "importance": 0.5,
            "decay": {"rate": 0.1, "interval": "day", "type": "exponential"},
        },
    )
    show("time.decayed", [round(s.score, 3) for s in decayed])

    pulled = apply_command(
        state, {"type": "memory.retract", "item_id": debt.id, "author": "system:restatement"}
    ).state
    stale = get_stale_items(pulled)
    show("stale.items", [(s.item.content["ratio"], len(s.missing_parents)) for s in stale])

    next_state, events, retracted = cascade_retract(state, debt.id, "system:restatement")
    show("stale.cascade", (len(retracted), len(next_state.items), sorted({e.type for e in events})))

    the_company = create_memory_item(
        scope="entity",
        kind="observation",
        content={"name": "the company"},
        author="agent:x",
        source_kind="observed",
        authority=0.7,
    )
    acme_corp = create_memory_item(
        scope="entity",
        kind="observation",
        content={"name": "ACME Corp"},
        author="agent:x",
        source_kind="observed",
        authority=0.7,
    )
    acme_industries = create_memory_item(
        scope="entity",
        kind="observation",
        content={"name": "ACME Industries"},
        author="agent:x",
        source_kind="observed",
        authority=0.7,
    )
    for item in (the_company, acme_corp, acme_industries):
        state = apply_command(state, {"type": "memory.create", "item": item}).state
    state = mark_alias(state, the_company.id, acme_corp.id, "agent:resolver").state
    state = mark_alias(state, acme_corp.id, acme_industries.id, "agent:resolver").state
    show("alias.group", sorted(i.content["name"] for i in get_alias_group(state, the_company.id)))


def supersession_and_queries() -> None:
    """README: "Supersession", "Smart retrieval", "Querying: the filter algebra", "Bulk operations"."""
    state = create_graph_state()
    plessy = create_memory_item(
        scope="doctrine:1A/segregation",
        kind="policy",
        content={"case": "Plessy v. Ferguson"},
        author="court:SCOTUS",
        source_kind="imported",
        authority=0.9,
        importance=0.5,
    )
    brown = create_memory_item(
        scope="doctrine:1A/segregation",
        kind="policy",
        content={"case": "Brown v. Board of Education"},
        author="court:SCOTUS",
        source_kind="imported",
        authority=0.95,
        importance=0.9,
    )
    blog = create_memory_item(
        scope="doctrine:1A/commentary",
        kind="hypothesis",
        content={"case": "a blog post"},
        author="blog:someone",
        source_kind="agent_inferred",
        authority=0.3,
        importance=0.99,
    )
    for item in (plessy, brown, blog):
        state = apply_command(state, {"type": "memory.create", "item": item}).state
    state = mark_contradiction(state, brown.id, plessy.id, "court:SCOTUS").state
    state = resolve_contradiction(
        state,
        brown.id,
        plessy.id,
        "court:SCOTUS",
        "Brown v. Board of Education, 347 U.S. 483",
    ).state
    show("supersede.plessy_authority", round(state.items[plessy.id].authority, 4))
    show("supersede.edges", sorted((e.kind, e.active) for e in state.edges.values()))

    context = smart_retrieve(
        state,
        budget=16000,
        cost_fn=lambda i: len(str(i.content)),
        weights={
            "authority": 0.85,
            "importance": 0.15,
            "decay": {"rate": 0.05, "interval": "day", "type": "exponential"},
        },
        filter={
            "scope_prefix": "doctrine:1A/",
            "range": {"authority": {"min": 0.7}},
            "or": [{"source_kind": "user_explicit"}, {"source_kind": "imported"}],
        },
        contradictions="surface",
        diversity={"source_penalty": 0.4},
    )
    show("smart.context", [c.item.content["case"] for c in context])

    low_res = get_items(
        state,
        {
            "range": {"authority": {"min": 0.7}},
            "not": {"or": [{"kind": "hypothesis"}, {"kind": "simulation"}]},
            "decay": {
                "config": {"rate": 0.3, "interval": "day", "type": "exponential"},
                "min": 0.5,
            },
        },
        {"sort": {"field": "importance", "order": "desc"}, "limit": 20},
    )
    show("filter.low_res", [i.content["case"] for i in low_res])
    show("filter.meta", len(get_items(state, {"meta": {"agent_id": "agent:researcher"}})))

    state = bulk_adjust_scores(
        state,
        {"scope": "doctrine:1A/segregation"},
        {"importance": 0.4},
        "system:rebalance",
        "1995 analog conviction crossed 0.7",
    ).state
    show("bulk.adjusted", sorted(round(i.importance or 0, 4) for i in state.items.values()))
    state = decay_importance(state, 7 * 86_400_000, 0.5, "system:nightly").state
    show("bulk.decayed", sorted(round(i.importance or 0, 4) for i in state.items.values()))
    state = apply_many(
        state,
        {"scope_prefix": "doctrine:1A/commentary", "range": {"importance": {"min": 0.9}}},
        lambda item: None,
        "system:gc",
    ).state
    show("bulk.apply_many", len(state.items))


def three_graphs() -> None:
    """README: "The three graphs: memory, intent, task"."""
    record = create_memory_item(
        scope="case:liebeck-v-mcdonalds",
        kind="observation",
        content={"finding": "~700 prior burn complaints"},
        author="source:trial-record-1994",
        source_kind="imported",
        authority=0.95,
    )
    intents = create_intent_state()
    tasks = create_task_state()
    intent = create_intent(
        label="determine whether Liebeck was a frivolous lawsuit",
        owner="agent:legal-researcher",
        priority=0.8,
        root_memory_ids=[record.id],
    )
    intents = apply_intent_command(intents, {"type": "intent.create", "intent": intent}).state
    task = create_task(
        intent_id=intent.id,
        action="review_primary_record",
        priority=0.8,
        input_memory_ids=[record.id],
    )
    tasks = apply_task_command(tasks, {"type": "task.create", "task": task}).state
    tasks = apply_task_command(tasks, {"type": "task.start", "task_id": task.id}).state
    result = apply_task_command(
        tasks,
        {"type": "task.complete", "task_id": task.id, "output_memory_ids": []},
    )
    tasks = result.state
    done = tasks.tasks[task.id]
    show("graphs.task", (done.status, done.attempt, done.output_memory_ids))
    show("graphs.intent", (intents.intents[intent.id].status, task.status, task.attempt))

    event = result.events[0]
    show("graphs.event.model_dump", {k: v for k, v in event.model_dump().items() if k != "task"})
    show("graphs.task.model_dump", sorted(k for k, v in done.model_dump(exclude_none=True).items()))
    show("graphs.intent.model_dump", intent.model_dump()["status"])

    synthesis = create_memory_item(
        scope="case:liebeck-v-mcdonalds",
        kind="derivation",
        content={
            "synthesis": "the popular 'frivolous lawsuit' framing is contradicted by the record"
        },
        author="agent:legal-researcher",
        source_kind="derived_deterministic",
        parents=[record.id],
        intent_id=intent.id,
        task_id=task.id,
        authority=0.8,
    )
    show("graphs.synthesis", (synthesis.intent_id == intent.id, synthesis.task_id == task.id))


def store_facade() -> None:
    """README: "Prefer an object? The MemexStore facade"."""
    store = MemexStore()
    a = store.create(
        scope="user:laz",
        kind="observation",
        content={"v": 1},
        author="agent:x",
        source_kind="observed",
        authority=0.9,
    )
    b = store.create(
        scope="user:laz",
        kind="assertion",
        content={"v": 2},
        author="agent:y",
        source_kind="user_explicit",
        authority=0.4,
    )
    store.mark_contradiction(a.id, b.id, "system:detector")
    store.resolve_contradiction(a.id, b.id, "system:resolver")
    show("store.b_authority", round(store.item(b.id).authority, 4))  # type: ignore[union-attr]

    intent = store.create_intent(label="find target", priority=0.9, owner="user:laz")
    task = store.create_task(intent_id=intent.id, action="search", priority=0.8)
    show("store.graphs", (len(store.get_intents()), len(store.get_tasks()), task.status))

    top = store.scored({"authority": 1.0, "importance": 0.5})
    show("store.scored", [(s.item.content["v"], round(s.score, 4)) for s in top])
    snapshot = store.dumps(pretty=True)
    restored = MemexStore.loads(snapshot)
    show(
        "store.loads",
        (len(restored.mem.items), len(restored.mem.edges), snapshot.startswith('{\n  "items"')),
    )


def transplant() -> None:
    """README: "Transplant: portable belief, sandboxed sub-agents"."""
    mem_state = create_graph_state()
    intent_state = create_intent_state()
    task_state = create_task_state()
    base = create_memory_item(
        scope="deal:reorg-2026/base",
        kind="observation",
        content={"t": "base"},
        author="agent:lead",
        source_kind="observed",
        authority=0.9,
    )
    term = create_memory_item(
        scope="deal:reorg-2026/terms",
        kind="assertion",
        content={"t": "terms"},
        author="agent:lead",
        source_kind="user_explicit",
        authority=0.8,
        parents=[base.id],
    )
    for item in (base, term):
        mem_state = apply_command(mem_state, {"type": "memory.create", "item": item}).state

    ids = [i.id for i in get_items(mem_state, {"scope_prefix": "deal:reorg-2026/terms"})]
    slice_ = export_slice(
        mem_state,
        intent_state,
        task_state,
        memory_ids=ids,
        include_parents=True,
    )
    show("transplant.export", (len(slice_.memories), len(slice_.edges)))

    # The sub-agent works on its own copy: one new derivation, one divergent edit.
    sub = import_slice(
        create_graph_state(), create_intent_state(), create_task_state(), slice_
    ).mem_state
    derived = create_memory_item(
        scope="deal:reorg-2026/analysis",
        kind="derivation",
        content={"t": "derived"},
        author="agent:sub",
        source_kind="agent_inferred",
        authority=0.6,
        parents=[term.id],
    )
    sub = apply_command(sub, {"type": "memory.create", "item": derived}).state
    sub = apply_command(
        sub,
        {
            "type": "memory.update",
            "item_id": term.id,
            "partial": {"authority": 0.5},
            "author": "agent:sub",
        },
    ).state
    sub_agent_slice = export_slice(
        sub, create_intent_state(), create_task_state(), memory_ids=list(sub.items)
    )

    result = import_slice(
        mem_state,
        intent_state,
        task_state,
        sub_agent_slice,
        shallow_compare_existing=True,
        re_id_on_difference=True,
    )
    merged_mem = result.mem_state
    report = result.report
    show(
        "transplant.report",
        (
            len(report.created.memories),
            len(report.updated.memories),
            len(report.skipped.memories),
            len(report.conflicts.memories),
        ),
    )
    show("transplant.merged", len(merged_mem.items))


def persistence() -> None:
    """README: "Persistence", event-sourced persistence and "Validating external input"."""
    state = create_graph_state()
    items = [
        create_memory_item(
            scope="user:ada",
            kind="observation",
            content={"text": t},
            author="user:ada",
            source_kind="user_explicit",
            authority=a,
        )
        for t, a in (("tea", 0.9), ("coffee", 0.4))
    ]
    log_lines = []
    for item in items:
        cmd = {"type": "memory.create", "item": item}
        state = apply_command(state, cmd).state
        # Persist each command in an envelope, one JSON line each.
        envelope = create_event_envelope("memory.create", cmd)
        log_lines.append(envelope.model_dump_json(by_alias=True, exclude_none=True))
    show("persist.envelope_keys", list(json.loads(log_lines[0])))

    blob = stringify(state, pretty=True)
    restored = parse(blob)
    show("persist.parse", (len(restored.items), restored.items[items[0].id] == items[0]))
    show("persist.json", len(from_json(to_json(state)).items))
    stats = get_stats(state)
    show("persist.stats", (stats.items.total, stats.items.by_kind, stats.edges.total))

    envelopes = [json.loads(line) for line in log_lines]
    envelopes.append(
        {
            "id": "x",
            "namespace": "memory",
            "type": "memory.create",
            "ts": "yesterday",
            "payload": {"type": "memory.create", "item": items[0].model_dump()},
        }
    )
    result = replay_from_envelopes(envelopes)
    replayed, events, skipped = result
    show(
        "persist.replay",
        (len(replayed.items), len(events), [(f.index, type(f.error).__name__) for f in skipped]),
    )

    raw = {"type": "memory.create", "item": items[1].model_dump(by_alias=True)}
    cmd = validate_command(raw)
    show("validate.ok", (cmd.type, cmd.item == items[1]))
    raw["item"]["authority"] = 2
    try:
        validate_command(raw)
    except ValueError as exc:  # the README says pydantic.ValidationError, a ValueError
        show("validate.bad", (type(exc).__name__, "authority" in str(exc)))


def pydantic_methods() -> None:
    """The Pydantic methods memex-python's models have, as its users call them."""
    from memex import Edge, MemoryItem, create_edge

    item = create_memory_item(
        scope="user:ada",
        kind="observation",
        content={"text": "tea", "tags": ["a"]},
        author="user:ada",
        source_kind="user_explicit",
        authority=0.9,
        meta={"agent_id": "aria"},
    )
    dumped = item.model_dump()
    show("pyd.item.keys", list(dumped))
    dumped["content"]["tags"].append("changed")
    show("pyd.item.copy_is_independent", item.content["tags"])
    show(
        "pyd.item.roundtrip", MemoryItem.model_validate(dumped | {"content": item.content}) == item
    )

    edge = create_edge(
        from_=item.id,
        to=item.id,
        kind="ABOUT",
        author="agent:x",
        source_kind="observed",
        authority=0.5,
    )
    show("pyd.edge.names", [k for k in edge.model_dump() if k.startswith("from")])
    show("pyd.edge.alias", [k for k in edge.model_dump(by_alias=True) if k.startswith("from")])
    show("pyd.edge.exclude_none", list(edge.model_dump(by_alias=True, exclude_none=True)))
    show("pyd.edge.validate_alias", Edge.model_validate(edge.model_dump(by_alias=True)) == edge)
    show("pyd.edge.validate_names", Edge.model_validate(edge.model_dump()) == edge)
    text = edge.model_dump_json(by_alias=True)
    show(
        "pyd.edge.json",
        (text.startswith('{"edge_id":'), '"weight":null' in text, '"from":' in text),
    )
    show(
        "pyd.edge.json_indent",
        [line.split(":")[0] for line in edge.model_dump_json(indent=2).splitlines()[:3]],
    )

    heavier = edge.model_copy(update={"weight": 0.7})
    show("pyd.model_copy", (heavier.weight, edge.weight, heavier is not edge))
    try:
        MemoryItem.model_validate(
            {
                "id": "m1",
                "scope": "s",
                "kind": "observation",
                "content": {},
                "author": "a",
                "source_kind": "observed",
                "authority": 1.5,
            }
        )
    except ValueError as exc:  # pydantic.ValidationError in memex-python
        show("pyd.validate_error", (type(exc).__name__, "authority" in str(exc)))
    try:
        MemoryItem.model_validate(
            {
                "id": "m1",
                "scope": "s",
                "kind": "observation",
                "content": {},
                "author": "a",
                "source_kind": "observed",
                "authority": "0.5",
            }
        )
        show("pyd.validate_str_number", "accepted")
    except ValueError as exc:
        show("pyd.validate_str_number", type(exc).__name__)
    try:
        bad = item.model_copy(update={"authority": 7})
        show("pyd.model_copy_bad", bad.authority)
    except ValueError as exc:
        show("pyd.model_copy_bad", type(exc).__name__)
    envelope = create_event_envelope("memory.create", {"type": "memory.create", "item": item})
    payload = envelope.model_dump()["payload"]
    show("pyd.envelope.payload", (type(payload["item"]).__name__, payload["item"]["authority"]))
    whole = create_memory_item(
        scope="s", kind="observation", content={}, author="a", source_kind="observed", authority=1
    )
    show(
        "pyd.int_score",
        whole.model_dump_json(exclude_none=True).split('"authority":')[1].split(",")[0],
    )


def main() -> None:
    tour()
    trust_and_disagreement()
    provenance_and_time()
    supersession_and_queries()
    three_graphs()
    store_facade()
    transplant()
    persistence()
    pydantic_methods()


if __name__ == "__main__":
    main()
