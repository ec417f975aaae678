"""Compatibility path for memex-python users: the names of :mod:`memex.state.replay`."""

from memex.state.replay import *  # noqa: F403
