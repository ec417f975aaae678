"""Compatibility path for memex-python users: this module *is* :mod:`memex.codec.envelope`.

Importing ``memex.envelope`` gives that module object itself, so every name it
had before the code moved into ``memex/codec/`` resolves here, and the star
import tells type checkers the public names.
"""

import sys

from memex.codec import envelope as _module
from memex.codec.envelope import *  # noqa: F403

sys.modules[__name__] = _module
