"""Retrieval: finding and ranking the memory items a question needs (layer 4, the read side).

The package's modules, bottom to top:

* :mod:`memex.retrieval.scoring` — the score formulas (decay, recency, relevance weights);
* :mod:`memex.retrieval.filters` and :mod:`memex.retrieval.query` — the filter
  algebra and the filtered, sorted, paged item query (``get_items``);
* :mod:`memex.retrieval.termstats` and :mod:`memex.retrieval.search` — the text
  projection (an inverted index kept by lifecycle events) and its exact BM25
  term statistics;
* :mod:`memex.retrieval.relevance` — a text question ranked against the projection;
* :mod:`memex.retrieval.ranking` — the weighted top-k over candidates;
* :mod:`memex.retrieval.packing` — budget packing;
* :mod:`memex.retrieval.retrieve` — the retrieval functions a reasoning layer
  calls (``get_scored_items``, ``smart_retrieve``, …), whose names this package
  exports under the path memex-python users import.
"""

from typing import Any

from memex.retrieval import retrieve as _retrieve
from memex.retrieval.retrieve import *  # noqa: F403
from memex.retrieval.retrieve import __all__ as __all__


def __getattr__(name: str) -> Any:
    """Every other name of :mod:`memex.retrieval.retrieve`, the module this path named
    before retrieval became a package (``from memex.retrieval import ScoreWeights``).

    Raises:
        AttributeError: ``name`` is neither there nor a submodule of this package.
    """
    try:
        return getattr(_retrieve, name)
    except AttributeError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
