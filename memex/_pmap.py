"""Compatibility path for states pickled by earlier versions: this module *is* :mod:`memex.state.pmap`.

Importing ``memex._pmap`` gives that module object itself, so every name it
had before the code moved into ``memex/state/`` resolves here, and the star
import tells type checkers the public names.
"""

import sys

from memex.state import pmap as _module
from memex.state.pmap import *  # noqa: F403

sys.modules[__name__] = _module
