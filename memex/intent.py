"""Compatibility path for memex-python users: the names of :mod:`memex.state.intent`."""

from memex.state.intent import *  # noqa: F403
