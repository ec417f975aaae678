"""Compatibility path for states pickled by earlier versions: the names of :mod:`memex.state.pmap`."""

from memex.state.pmap import *  # noqa: F403
