"""Compatibility path for memex-python users: the names of :mod:`memex.state.reducer`."""

from memex.state.reducer import *  # noqa: F403
