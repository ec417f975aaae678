"""Compatibility path for memex-python users: the names of :mod:`memex.state.task`."""

from memex.state.task import *  # noqa: F403
