"""Compatibility path for memex-python users: this module *is* :mod:`memex.state.replay`.

Importing ``memex.replay`` gives that module object itself, so every name it
had before the code moved into ``memex/state/`` resolves here, and the star
import tells type checkers the public names.
"""

import sys

from memex.state import replay as _module
from memex.state.replay import *  # noqa: F403

sys.modules[__name__] = _module
