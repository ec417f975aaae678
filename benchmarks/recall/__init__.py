"""Retrieval-quality evaluation: recall of memex's question answering on a generated memory.

``python -m benchmarks.recall [--seed N] [--json]`` builds a deterministic
multi-user, multi-session agent memory (:mod:`benchmarks.recall.memory`),
asks its questions through :func:`memex.get_scored_items` and
:func:`memex.smart_retrieve` under several weightings, and compares the
ranking with a plain BM25 baseline (``bm25s``) over the same texts
(:mod:`benchmarks.recall.evaluate`).
"""
