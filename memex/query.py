"""Compatibility path for memex-python users: this module *is* :mod:`memex.retrieval.query`.

Importing ``memex.query`` gives that module object itself, so every name it
had before the code moved into ``memex/retrieval/`` resolves here, and the star
import tells type checkers the public names.
"""

import sys

from memex.retrieval import query as _module
from memex.retrieval.query import *  # noqa: F403

sys.modules[__name__] = _module
