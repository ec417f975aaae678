"""What a reasoning layer puts in its prompt: smart_retrieve over the example log.

Run from the repository root: ``.venv/bin/python docs/examples/smart_retrieve.py``.
"""

import json

import memex
from memex.state.replay import parse_iso_ts

with open("docs/examples/agent_session.jsonl", encoding="utf-8") as fh:
    state = memex.replay_from_envelopes(json.loads(line) for line in fh).state


def tokens(item: memex.MemoryItem) -> int:  # a rough token count of the item's text
    return len(item.content.get("text", "")) // 4 + 1


context = memex.smart_retrieve(
    state,
    budget=140,                      # tokens the prompt can spare
    cost_fn=tokens,
    weights={"authority": 0.7, "importance": 0.3,
             "decay": {"rate": 0.1, "interval": "week", "type": "exponential"}},
    filter={"scope": "user:ada/preferences"},   # read from the scope index
    contradictions="surface",        # keep both sides, say who disagrees
    diversity={"author_penalty": 0.05},
    now=parse_iso_ts("2024-03-14T09:00:00Z"),   # the agent's clock, unix ms
)
for hit in context:
    doubt = [c.content["text"] for c in hit.contradicted_by or []]
    print(f"{hit.score:.3f}  {hit.item.content['text']}" + (f"   <- contradicted by: {doubt}" if doubt else ""))
