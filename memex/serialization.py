"""Compatibility path for memex-python users: the names of :mod:`memex.codec.serialization`."""

from memex.codec.serialization import *  # noqa: F403
