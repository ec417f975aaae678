"""Bridges to the tools researchers use: networkx graphs, pandas DataFrames, matplotlib plots.

Each bridge imports its third-party library when first called, so
``import memex`` stays fast and the library is only needed by who uses it:
networkx is a dependency of memex; pandas and matplotlib come with the
``notebook`` extra (``pip install 'memex-belief[notebook]'``), and a helper
called without them raises :class:`~memex.MissingDependencyError` saying so.

* :func:`to_networkx` (:mod:`~memex.interop.networkx_graph`): the graph as a
  ``networkx.MultiDiGraph``.
* :func:`to_dataframe`, :func:`edges_dataframe` (:mod:`~memex.interop.frames`):
  items, retrieval results or edges as DataFrames, one row each.
* :func:`plot_graph`, :func:`plot_support_tree` (:mod:`~memex.interop.plots`):
  drawings with kinds as colours, authority as size, contradictions in red.

The DataFrame and plot modules are imported on first use of their names.
"""

from typing import TYPE_CHECKING, Any

from memex._lazy import lazy_attribute, lazy_dir
from memex.interop.networkx_graph import PARENT, to_networkx

if TYPE_CHECKING:
    from memex.interop.frames import edges_dataframe, to_dataframe
    from memex.interop.plots import plot_graph, plot_support_tree

__all__ = [
    "to_networkx",
    "PARENT",
    "to_dataframe",
    "edges_dataframe",
    "plot_graph",
    "plot_support_tree",
]

_LAZY = {
    "to_dataframe": "memex.interop.frames",
    "edges_dataframe": "memex.interop.frames",
    "plot_graph": "memex.interop.plots",
    "plot_support_tree": "memex.interop.plots",
}


def __getattr__(name: str) -> Any:
    """The DataFrame and plot helpers, imported on first use."""
    return lazy_attribute(__name__, _LAZY, name)


def __dir__() -> list[str]:
    return lazy_dir(globals(), _LAZY)
