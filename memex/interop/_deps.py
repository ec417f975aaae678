"""The optional packages of the notebook helpers, imported when first needed.

``import memex`` never imports pandas or matplotlib; each helper calls
:func:`require` and a missing package is a
:class:`~memex.errors.MissingDependencyError` that says how to install it.
"""

from __future__ import annotations

import importlib
from typing import Any

from memex.errors import MissingDependencyError

__all__ = ["EXTRA", "require"]

#: The optional extra that installs pandas, matplotlib and a notebook runner.
EXTRA = "notebook"


def require(module: str, feature: str) -> Any:
    """Import ``module`` for ``feature``.

    Args:
        module: the import name (``"pandas"``, ``"matplotlib.figure"``).
        feature: the helper that needs it, named in the error.
    Returns:
        The module.
    Raises:
        MissingDependencyError: the package is not installed (or set to
            ``None`` in ``sys.modules``); the message says
            ``pip install 'memex-belief[notebook]'``.
    """
    try:
        return importlib.import_module(module)
    except ImportError as e:
        raise MissingDependencyError(module.partition(".")[0], EXTRA, feature) from e
