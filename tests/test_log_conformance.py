"""The shared conformance suite of :class:`memex.EventLog`
(:class:`memex.testing.log_conformance.EventLogConformance`) run against the
SQLite log in both durability modes."""

from __future__ import annotations

from memex.log import EventLog, SQLiteEventLog
from memex.testing.log_conformance import EventLogConformance


class TestSQLiteFull(EventLogConformance):
    def make_log(self, name: str = "main") -> EventLog:
        return SQLiteEventLog(self.tmp_path / f"{name}.db")


class TestSQLiteNormal(EventLogConformance):
    def make_log(self, name: str = "main") -> EventLog:
        return SQLiteEventLog(self.tmp_path / f"{name}.db", synchronous="NORMAL")
