"""Shared fixtures: the repository's own `offshoot` wrapper is the binary, one daemon per session (per worker)."""

from __future__ import annotations

import os
import sqlite3
import uuid
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest

from offshoot import Client, Store, connect
from offshoot.daemon import DaemonHandle

REPO = Path(__file__).resolve().parents[3]
os.environ.setdefault("OFFSHOOT_BIN", str(REPO / "offshoot"))

# CrewAI's telemetry stays off: the tests reach nothing but this machine.
os.environ.setdefault("CREWAI_DISABLE_TELEMETRY", "true")
os.environ.setdefault("OTEL_SDK_DISABLED", "true")

# CrewAI cannot share the main environment: its tests run in their own (scripts/test-python.sh runs both).
collect_ignore_glob = [] if os.environ.get("OFFSHOOT_PY_ENV") == "crewai" else ["integrations/crewai/*"]


@pytest.fixture
def client(offshoot_daemon: DaemonHandle) -> Iterator[Client]:
    """A fresh connection to the session's daemon."""
    with connect(offshoot_daemon.sock) as c:
        yield c


@pytest.fixture
def db(client: Client) -> str:
    """A fresh database name, created."""
    name = f"d-{uuid.uuid4().hex[:12]}"
    client.create(name)
    return name


@pytest.fixture
def store(tmp_path: Path) -> Store:
    """A fresh store at rest (no daemon), initialized."""
    s = Store(tmp_path / "store")
    s.init()
    return s


def write_rows(path: str, *values: int) -> None:
    """Commits `values` into table t (created if needed) of the database at `path`."""
    _append(path, "t", "x INTEGER", values)


def read_rows(path: str) -> list[int]:
    """The values of table t of the database at `path` ([] when it has no such table)."""
    return _column(path, "t", "x")


def write_note(path: str, body: str) -> None:
    """Commits the note `body` into table notes (created if needed) of the database at `path`: the adapters' tool."""
    _append(path, "notes", "body TEXT", [body])


def read_notes(path: str) -> list[str]:
    """The notes of the database at `path` ([] when it has no notes table)."""
    return _column(path, "notes", "body")


def _append(path: str, table: str, column: str, values: Iterable[object]) -> None:
    conn = sqlite3.connect(path)
    try:
        conn.execute(f"CREATE TABLE IF NOT EXISTS {table}({column})")
        conn.executemany(f"INSERT INTO {table} VALUES (?)", [(v,) for v in values])
        conn.commit()
    finally:
        conn.close()


def _column(path: str, table: str, column: str) -> list[Any]:
    conn = sqlite3.connect(path)
    try:
        if not conn.execute("SELECT count(*) FROM sqlite_master WHERE name = ?", (table,)).fetchone()[0]:
            return []
        return [r[0] for r in conn.execute(f"SELECT {column} FROM {table} ORDER BY rowid")]
    finally:
        conn.close()
