"""Helpers for testing memex and code built on it (need the test extra: ``memex-belief[test]``)."""
