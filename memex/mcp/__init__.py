"""memex over the Model Context Protocol: ``memex mcp`` serves a durable store to agents.

:mod:`memex.mcp.tools` holds the tools as plain methods over a
:class:`~memex.MemexStore` (no protocol code; usable and testable without the
SDK); :mod:`memex.mcp.kg` the ``kg`` profile, the tools of the reference
knowledge-graph memory server mapped onto items and edges;
:mod:`memex.mcp.server` binds either set to an MCP server with the official
SDK, which the optional extra installs (``pip install 'memex-belief[mcp]'``).
Importing this package does not import the SDK.
"""

from memex.mcp.kg import KG_TOOLS, KgTools
from memex.mcp.tools import READ_TOOLS, WRITE_TOOLS, MemoryTools

__all__ = ["MemoryTools", "KgTools", "KG_TOOLS", "READ_TOOLS", "WRITE_TOOLS"]
