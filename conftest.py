"""pytest configuration for the whole repository (the test suite's own is tests/conftest.py).

memex-python's paths whose code moved into a layer's folder (``memex/graph.py``,
``memex/reducer.py``, ...) replace themselves in ``sys.modules`` with the moved
module, so the doctest collection of ``memex/`` skips those files: their
doctests are the moved modules', collected from ``memex/state/``,
``memex/codec/`` and ``memex/retrieval/``.
"""

collect_ignore = [
    f"memex/{name}.py"
    for name in (
        "_pmap",
        "envelope",
        "graph",
        "intent",
        "query",
        "reducer",
        "replay",
        "serialization",
        "task",
    )
]
