"""A transient batch folds memory commands exactly as the reducer does, one persistent version at a time.

``memex.state.transient.GraphBuilder`` backs every fold (replay, cascades, bulk
operations, ``apply_many``, slice import). For random command streams —
duplicates, missing targets, invalid partials, edge commands, retractions
with edges — folding through the builder and folding through
``apply_command`` give equal states (items, edges, every index, insertion
order) and identical events, and a failing command changes nothing.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memex import GraphState, MemexError, apply_command, create_graph_state, get_children, get_items
from memex.codec.adapter import MemoryCommandAdapter
from memex.state.transient import GraphBuilder
from tests.test_properties import command


def _index_view(state: GraphState) -> tuple[Any, ...]:
    children = {k: sorted(v.keys()) for k, v in state._children.items()}
    scopes = {
        k: sorted((seq, i, it.to_dict()) for i, (seq, it) in v.items())
        for k, v in state._by_scope.items()
    }
    nodes = {
        k: sorted((seq, e, ed.to_dict()) for e, (seq, ed) in v.items())
        for k, v in state._edges_by_node.items()
    }
    return children, scopes, nodes, state._seq


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(command, max_size=40))
def test_builder_folds_like_the_reducer(stream: list[tuple[str, Any]]) -> None:
    persistent = create_graph_state()
    builder = GraphBuilder(persistent)
    for _tag, raw in stream:
        try:
            cmd = MemoryCommandAdapter.validate_python(raw)
        except (MemexError, ValueError, TypeError):
            continue
        try:
            persistent, want = apply_command(persistent, cmd)
        except MemexError as e:
            try:
                builder.apply(cmd)
            except MemexError as e2:
                assert type(e2) is type(e) and str(e2) == str(e)
            else:
                raise AssertionError(f"the builder applied a command the reducer refused: {e}")
            continue
        got = builder.apply(cmd)
        assert [x.to_dict() for x in got] == [x.to_dict() for x in want]
    folded = builder.finish()
    assert list(folded.items.items()) == list(persistent.items.items())
    assert list(folded.edges.items()) == list(persistent.edges.items())
    assert _index_view(folded) == _index_view(persistent)
    for i in ("a", "b", "c", "d"):
        assert get_children(folded, i) == get_children(persistent, i)
    assert get_items(folded, {"scope": "s1"}) == get_items(persistent, {"scope": "s1"})


def test_an_empty_batch_returns_the_state_itself() -> None:
    state = create_graph_state()
    assert GraphBuilder(state).finish() is state
