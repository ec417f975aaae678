"""Reading and setting a SQLite file's ``PRAGMA user_version`` (the log's schema
version) directly, for the schema tests."""

from __future__ import annotations

import sqlite3
from pathlib import Path


def user_version(path: Path) -> int:
    """The file's ``PRAGMA user_version``."""
    conn = sqlite3.connect(path)
    try:
        return int(conn.execute("PRAGMA user_version").fetchone()[0])
    finally:
        conn.close()


def set_user_version(path: Path, version: int) -> None:
    """Write ``version`` into the file's ``PRAGMA user_version``."""
    conn = sqlite3.connect(path)
    try:
        conn.execute(f"PRAGMA user_version = {version}")
        conn.commit()
    finally:
        conn.close()
