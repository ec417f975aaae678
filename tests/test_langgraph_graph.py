"""A compiled LangGraph StateGraph whose long-term memory is a BeliefStore (issue 31).

The graph has no language model: one node writes what the user said as a
memory (a ``put`` keyed by topic, so a changed fact supersedes the old one),
the next searches the user's memories for the message and answers from the
best hit. It is invoked in this process, then again in a fresh Python
process (this file run as a script) on the same SQLite file, as after a
restart, and the second run remembers what the first one stored. The log
then shows the whole story to ``memex history``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any, TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.store.base import BaseStore


class Turn(TypedDict, total=False):
    user: str
    topic: str
    message: str
    recalled: list[str]
    answer: str


def remember(state: Turn, *, store: BaseStore) -> dict[str, Any]:
    """Write what the user said under its topic (nothing for a question)."""
    if not state["message"].endswith("?"):
        store.put(("users", state["user"], "facts"), state["topic"], {"text": state["message"]})
    return {}


def recall(state: Turn, *, store: BaseStore) -> dict[str, Any]:
    """Search the user's memories for the message; answer from the best match."""
    hits = store.search(("users", state["user"]), query=state["message"], limit=3)
    recalled = [h.value["text"] for h in hits if h.score is not None]
    return {"recalled": recalled, "answer": recalled[0] if recalled else "I don't know yet."}


def build(store: BaseStore) -> Any:
    """The compiled graph: START -> remember -> recall -> END, with ``store`` as its store."""
    builder = StateGraph(Turn)
    builder.add_node("remember", remember)
    builder.add_node("recall", recall)
    builder.add_edge(START, "remember")
    builder.add_edge("remember", "recall")
    builder.add_edge("recall", END)
    return builder.compile(store=store)


def run_turns(path: str, turns: list[dict[str, str]]) -> list[dict[str, Any]]:
    """Invoke the graph once per turn on a BeliefStore opened on ``path``; the final states."""
    from memex.langgraph import BeliefStore

    with BeliefStore.open(path, author="agent:assistant") as store:
        graph = build(store)
        return [graph.invoke(turn) for turn in turns]


def test_graph_remembers_across_a_process_restart(tmp_path: Path) -> None:
    path = str(tmp_path / "agent.db")
    first = run_turns(
        path,
        [
            {"user": "ada", "topic": "diet", "message": "I am vegetarian"},
            {"user": "ada", "topic": "city", "message": "I live in Leeds"},
            {"user": "ada", "topic": "diet", "message": "I eat fish again, pescatarian now"},
            {"user": "ada", "topic": "q", "message": "what do I eat, vegetarian or pescatarian?"},
        ],
    )
    assert first[0]["answer"] == "I am vegetarian"
    assert first[3]["recalled"] == ["I eat fish again, pescatarian now"]  # never the old diet

    # a new process, as after a restart: the graph is built again on the same file
    turns = [
        {"user": "ada", "topic": "q", "message": "where do I live?"},
        {"user": "ada", "topic": "q", "message": "am I vegetarian?"},
        {"user": "bo", "topic": "q", "message": "where do I live?"},
    ]
    out = subprocess.run(
        [sys.executable, __file__, path, json.dumps(turns)],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parent.parent,
    )
    second = json.loads(out.stdout)
    assert [s["answer"] for s in second] == [
        "I live in Leeds",
        "I eat fish again, pescatarian now",  # the vegetarian match handed over to its successor
        "I don't know yet.",  # another user's namespace holds nothing
    ]

    from memex import MemexStore
    from memex.langgraph import BeliefStore

    with BeliefStore.open(path, read_only=True) as store:
        diet = store.versions(("users", "ada", "facts"), "diet")
        assert [v.content["text"] for v in diet] == [
            "I eat fish again, pescatarian now",
            "I am vegetarian",
        ]
        assert {v.author for v in diet} == {"agent:assistant"}
        history = store.store.history(diet[1].id)
        assert [e.type for e in history] == ["memory.created", "edge.created"]
        assert isinstance(store.store, MemexStore)


async def aremember(state: Turn, *, store: BaseStore) -> dict[str, Any]:
    """The async twin of :func:`remember`."""
    if not state["message"].endswith("?"):
        await store.aput(
            ("users", state["user"], "facts"), state["topic"], {"text": state["message"]}
        )
    return {}


async def arecall(state: Turn, *, store: BaseStore) -> dict[str, Any]:
    """The async twin of :func:`recall`."""
    hits = await store.asearch(("users", state["user"]), query=state["message"], limit=3)
    recalled = [h.value["text"] for h in hits if h.score is not None]
    return {"recalled": recalled, "answer": recalled[0] if recalled else "I don't know yet."}


def test_async_graph_with_the_store(tmp_path: Path) -> None:
    import asyncio

    from memex.langgraph import BeliefStore

    builder = StateGraph(Turn)
    builder.add_node("remember", aremember)
    builder.add_node("recall", arecall)
    builder.add_edge(START, "remember")
    builder.add_edge("remember", "recall")
    builder.add_edge("recall", END)

    async def run(store: BaseStore) -> list[str]:
        graph = builder.compile(store=store)
        await graph.ainvoke({"user": "ada", "topic": "pet", "message": "I have a cat"})
        await graph.ainvoke({"user": "ada", "topic": "pet", "message": "I have a dog now"})
        out = await graph.ainvoke({"user": "ada", "topic": "q", "message": "do I have a cat?"})
        return list(out["recalled"])

    with BeliefStore.open(str(tmp_path / "async.db")) as store:
        assert asyncio.run(run(store)) == ["I have a dog now"]
        assert len(store.versions(("users", "ada", "facts"), "pet")) == 2


if __name__ == "__main__":  # the second process of the test above
    print(json.dumps(run_turns(sys.argv[1], json.loads(sys.argv[2]))))
