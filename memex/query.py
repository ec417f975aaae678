"""Compatibility path for memex-python users: the names of :mod:`memex.retrieval.query`."""

from memex.retrieval.query import *  # noqa: F403
