"""ThreadForks against a real daemon: a branch per thread, checkpoints named for LangGraph's, forks at them."""

from __future__ import annotations

import pytest
from conftest import read_rows, write_rows

from offshoot import Client, OffshootError
from offshoot.langgraph import ThreadForks
from offshoot.sanitize import sanitize


def test_threads_fork_checkpoint_and_rewind(client: Client, db: str) -> None:
    forks = ThreadForks(client, db)
    assert forks.branch_for("chat 1") == "thread-" + sanitize("chat 1")
    a = forks.path("chat 1")
    assert forks.path("chat 1") == a
    write_rows(a, 1)
    forks.checkpoint("chat 1", "1ef-step-1")
    write_rows(a, 2)
    forks.checkpoint("chat 1", "1ef-step-2")
    info = next(b for b in client.branches(db) if b.branch == forks.branch_for("chat 1"))
    assert info.ttl == "24h0m0s"
    assert {sanitize("1ef-step-1"), sanitize("1ef-step-2")} <= set(info.checkpoints)
    b = forks.fork_thread("chat 1", "1ef-step-1", "chat 1 retry")
    assert read_rows(b) == [1]
    write_rows(b, 9)
    assert read_rows(a) == [1, 2]
    # Another thread starts from the base branch, not from any thread.
    assert read_rows(forks.path("chat 2")) == []
    forks.close("chat 2")
    assert forks.branch_for("chat 2") not in {s.branch for s in client.sessions() if s.db == db}
    forks.close()
    assert [s for s in client.sessions() if s.db == db] == []
    # Reopening a known thread reuses its branch instead of forking again.
    again = ThreadForks(client, db, ttl="2h")
    assert read_rows(again.path("chat 1 retry")) == [1, 9]
    again.close()


def test_fork_thread_errors_name_the_missing_piece(client: Client, db: str) -> None:
    forks = ThreadForks(client, db, prefix="t-")
    with pytest.raises(OffshootError) as e:
        forks.fork_thread("never", "cp", "new")
    assert e.value.code == "NOT_FOUND"
    assert "unknown thread" in e.value.message
    forks.path("src")
    forks.path("taken")
    with pytest.raises(OffshootError) as e:
        forks.fork_thread("src", "cp", "taken")
    assert e.value.code == "ALREADY_EXISTS"
    with pytest.raises(OffshootError) as e:
        forks.fork_thread("src", "cp-never-recorded", "fresh")
    assert e.value.code == "NOT_FOUND"
    assert "never recorded" in e.value.message
    assert e.value.hint is not None
    assert "checkpoint(" in e.value.hint
    forks.close()


def test_the_database_must_exist(client: Client) -> None:
    with pytest.raises(OffshootError) as e:
        ThreadForks(client, "no-such-db").path("x")
    assert e.value.code == "NOT_FOUND"
