"""Getting started (docs/getting-started.md): the store the README's first command built.

Run from the directory holding memex.db (the repository root after the first
README command). Prints a retrieval and a support tree, and draws the tree
into support_tree_taper.png (needs matplotlib: .venv/bin/pip install '.[notebook]').
tests/test_docs.py checks that it prints what docs/getting-started.md shows.
"""

import memex
from memex.state.replay import parse_iso_ts

with memex.MemexStore.open("memex.db", read_only=True) as store:
    print(store.position, len(store.mem.items), "items")

    # what should the assistant remember about what Ada drinks, as of 14 March?
    for hit in store.smart_retrieve(
        budget=60,
        filter={"scope": "user:ada/preferences"},
        cost_fn=lambda item: len(item.content.get("text", "")) // 4 + 1,
        weights={"relevance": 1.0, "authority": 0.5, "importance": 0.25},
        query="what does Ada drink?",
        contradictions="surface",
        now=parse_iso_ts("2024-03-14T09:00:00Z"),
    ):
        doubt = [c.content["text"] for c in hit.contradicted_by or []]
        print(
            f"{hit.score:.3f}  {hit.item.content['text']}"
            + (f"  <- contradicted by {doubt}" if doubt else "")
        )

    # why does the agent believe the taper week? its support, depth first
    taper = "018e2c7f-0e20-77e5-8c75-978136843e38"
    for depth, node in store.support_tree(taper).walk():
        print("  " * depth + node.item.content["text"])

    # draw it (needs matplotlib: the install step above)
    fig = memex.plot_support_tree(store, taper)
    fig.savefig("support_tree_taper.png", dpi=100, bbox_inches="tight")
