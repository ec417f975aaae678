"""Compatibility path for memex-python users: the names of :mod:`memex.state.graph`."""

from memex.state.graph import *  # noqa: F403
