"""Transplant: move part of a cognitive state to another agent and merge it back.

:func:`export_slice` cuts a self-contained :class:`MemexExport` (memories,
edges, intents, tasks) out of the three graphs, optionally walking parents,
children, aliases and the intents and tasks linked to the memories.
:func:`import_slice` merges a slice into three states following a decision
table (create, update in place, skip, report a conflict, or copy under a
fresh id) and reports what it did in an :class:`ImportReport`;
:func:`plan_import` returns the same import as ordinary commands.

Slices travel as JSON in the TypeScript shape
``{"memories": [...], "edges": [...], "intents": [...], "tasks": [...]}``:
:func:`slice_to_json` / :func:`slice_from_json`.

Modules: :mod:`~memex.transplant.records` (options, the slice, the report and
plan, entity equality), :mod:`~memex.transplant.export`,
:mod:`~memex.transplant.plan` (planning and folding an import) and
:mod:`~memex.transplant.codec` (JSON text).
"""

from memex.transplant import codec, export, plan, records
from memex.transplant.codec import *  # noqa: F403
from memex.transplant.export import *  # noqa: F403
from memex.transplant.plan import *  # noqa: F403
from memex.transplant.records import *  # noqa: F403

__all__: list[str] = []
__all__ += records.__all__
__all__ += export.__all__
__all__ += plan.__all__
__all__ += codec.__all__
