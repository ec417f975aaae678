"""Records of the three graphs: entities, commands, events, filters, options and results.

Every record is a frozen ``attrs`` class built with keywords whose schema is
declared once, in its field annotations (:mod:`memex.models._schema`):
construction validates types, bounds and enums and raises
:class:`memex.ValidationError` naming the field path; unknown keywords raise
``TypeError``. ``Cls.from_dict(mapping)`` validates a wire-shaped mapping
(TypeScript keys: ``from``, ``not``, ``or``; the Python spellings ``from_``,
``not_``, ``or_`` are accepted too, the wire key wins; unknown keys are
ignored) and ``obj.to_dict()`` returns the wire dict (absent fields omitted,
keys in wire order).

Modules: :mod:`~memex.models.kinds` (known kinds and statuses),
:mod:`~memex.models.entities`, :mod:`~memex.models.commands`,
:mod:`~memex.models.events`, :mod:`~memex.models.queries` (filters, options,
weights, results), :mod:`~memex.models.fields` (field types) and
:mod:`~memex.models._schema` (the record machinery).
"""

from memex.errors import ValidationError
from memex.models import commands, entities, events, kinds, queries
from memex.models._schema import Command, Record, record, replace_unchecked, to_wire
from memex.models.commands import *  # noqa: F403
from memex.models.entities import *  # noqa: F403
from memex.models.events import *  # noqa: F403
from memex.models.kinds import *  # noqa: F403
from memex.models.queries import *  # noqa: F403

# the record machinery, then every name of each module
__all__ = ["Record", "Command", "record", "replace_unchecked", "to_wire", "ValidationError"]
__all__ += kinds.__all__
__all__ += entities.__all__
__all__ += commands.__all__
__all__ += events.__all__
__all__ += queries.__all__
