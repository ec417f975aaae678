"""Bridges to the tools researchers use: networkx graphs (more to come: DataFrames, plots).

Each bridge imports its third-party library when first called, so
``import memex`` stays fast and the library is only needed by who uses it.
"""

from memex.interop.networkx_graph import PARENT, to_networkx

__all__ = ["to_networkx", "PARENT"]
