"""Compatibility path for memex-python users: the names of :mod:`memex.codec.envelope`."""

from memex.codec.envelope import *  # noqa: F403
