"""Retrieval that hears the question: ``smart_retrieve(query=...)`` on the example log.

Run from the repository root::

    .venv/bin/python docs/examples/recall.py

The README ("Asking a question") shows what it prints.
"""

import json

import memex
from memex.state.replay import parse_iso_ts

with open("docs/examples/agent_session.jsonl", encoding="utf-8") as fh:
    state = memex.replay_from_envelopes(json.loads(line) for line in fh).state

index = memex.TextIndex.from_state(state)  # SQLite FTS5 (BM25); follow changes with index.apply(events)


def tokens(item: memex.MemoryItem) -> int:  # a rough token count of the item's text
    return len(item.content.get("text", "")) // 4 + 1


for question in ("what does Ada drink?", "how is the half marathon training going?"):
    print(f"Q: {question}")
    context = memex.smart_retrieve(
        state,
        budget=60,
        cost_fn=tokens,
        weights={"relevance": 1.0, "authority": 0.5, "importance": 0.25},
        query=question,
        index=index,
        expand={"parents": 1, "damping": 0.5},  # a conclusion brings its evidence
        contradictions="surface",
        now=parse_iso_ts("2024-03-14T09:00:00Z"),
    )
    for hit in context:
        doubt = [c.content["text"] for c in hit.contradicted_by or []]
        print(f"  {hit.score:.3f}  rel {hit.relevance:.2f}  {hit.item.content['text']}"
              + (f"   <- contradicted by: {doubt}" if doubt else ""))
