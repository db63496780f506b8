"""`merge(into, *, prefer=None, force=False)` on both savers, in session mode and at rest: two forks' LangGraph threads
merged back into main row by row, where a second promote would replace the first; a row both forks changed holds the
merge, nothing applied, until `prefer` picks a side; a protected target needs `force`."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable
from typing import Any

import pytest
from daemon_process import Daemon
from graphs import counter_app, thread
from offshoot import OffshootError

from langgraph_checkpoint_offshoot import AsyncOffshootSaver, OffshootSaver

MODES = ["session", "at_rest"]
# A table of the agent's own beside LangGraph's, with a primary key: merge refuses a table without one.
NOTES = "CREATE TABLE notes(id INTEGER PRIMARY KEY, v TEXT); INSERT INTO notes VALUES (1, 'base')"


def write(path: str, sql: str) -> None:
    """Runs `sql` on the checkout at `path` with a connection of its own, as the agent's tools would."""
    conn = sqlite3.connect(path)
    try:
        conn.executescript(sql)
    finally:
        conn.close()


def note(path: str) -> str:
    """The one note in the checkout at `path`."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return str(conn.execute("SELECT v FROM notes WHERE id = 1").fetchone()[0])
    finally:
        conn.close()


@pytest.fixture(params=MODES)
def opener(request: pytest.FixtureRequest, daemon: Daemon, store: str) -> Callable[..., OffshootSaver]:
    """Opens a sync saver on `db@branch`, in session mode on the suite's daemon or at rest in a fresh store."""
    if request.param == "session":
        return lambda db, branch="main", **kw: OffshootSaver.session(daemon.socket, db, branch, **kw)
    return lambda db, branch="main", **kw: OffshootSaver.at_rest(store, db, branch, **kw)


@pytest.fixture(params=MODES)
def async_opener(request: pytest.FixtureRequest, daemon: Daemon, store: str) -> Callable[..., Any]:
    """Opens an async saver on `db@branch` (awaitable, or `async with`), in session mode or at rest."""
    if request.param == "session":
        return lambda db, branch="main", **kw: AsyncOffshootSaver.session(daemon.socket, db, branch, **kw)
    return lambda db, branch="main", **kw: AsyncOffshootSaver.at_rest(store, db, branch, **kw)


def test_two_forks_threads_merge_back_into_main(opener: Callable[..., OffshootSaver], db_name: str) -> None:
    main = opener(db_name)
    counter_app(main).invoke({"n": 0}, thread("t"))
    main.checkpoint("seeded")
    a = main.fork_thread("agent-a", ttl="1h")
    b = main.fork_thread("agent-b", ttl="1h")
    main.close()  # the merge writes main's checkout: its saver is closed first, as for promote
    counter_app(a).invoke({"n": 10}, thread("a"))  # never checkpointed: the merge makes it durable first
    counter_app(b).invoke({"n": 20}, thread("b"))

    with pytest.raises(OffshootError) as protected:
        a.merge("main")
    assert protected.value.code == "PROTECTED"
    first = a.merge("main", force=True)
    assert (first.applied, first.conflicts, first.backup) == (True, [], "main-pre-merge")
    second = b.merge("main", force=True)
    assert (second.applied, second.conflicts) == (True, [])
    assert second.txid > first.txid
    a.destroy()
    b.destroy()

    with opener(db_name, create=False) as merged:
        values = {t: counter_app(merged).get_state(thread(t)).values for t in ("t", "a", "b")}
        assert values == {"t": {"n": 1}, "a": {"n": 11}, "b": {"n": 21}}, "agent-a's thread survived agent-b's merge"
        with pytest.raises(OffshootError) as bad:
            merged.merge("")
        assert bad.value.code == "INVALID_ARGUMENT"


def test_merge_needs_the_target_session_closed(daemon: Daemon, db_name: str) -> None:
    main = OffshootSaver.session(daemon.socket, db_name)
    counter_app(main).invoke({"n": 0}, thread("t"))
    with main.fork_thread("attempt") as attempt:
        counter_app(attempt).invoke({"n": 5}, thread("a"))
        with pytest.raises(OffshootError) as err:
            attempt.merge("main", force=True)
        assert err.value.code == "SESSION_OPEN"
        assert main.get_tuple(thread("a")) is None
        main.close()
        assert attempt.merge("main", force=True).applied


def test_rows_both_forks_changed_hold_the_merge_until_prefer_picks_a_side(
    opener: Callable[..., OffshootSaver], db_name: str
) -> None:
    main = opener(db_name)
    counter_app(main).invoke({"n": 0}, thread("t"))
    write(main.path, NOTES)
    main.checkpoint("seeded")
    a = main.fork_thread("agent-a", ttl="1h")
    b = main.fork_thread("agent-b", ttl="1h")
    main.close()
    write(a.path, "UPDATE notes SET v = 'a'")
    write(b.path, "UPDATE notes SET v = 'b'")
    counter_app(b).invoke({"n": 20}, thread("b"))

    assert a.merge("main", force=True).applied
    held = b.merge("main", force=True)
    assert not held.applied
    assert [(c.table, c.kind, c.key, c.source, c.target) for c in held.conflicts] == [
        ("notes", "update/update", {"id": 1}, {"id": 1, "v": "b"}, {"id": 1, "v": "a"})
    ]
    with opener(db_name, create=False) as unchanged:
        assert note(unchanged.path) == "a"
        assert unchanged.get_tuple(thread("b")) is None, "a held merge applies none of the source's rows"

    resolved = b.merge("main", prefer="source", force=True)
    assert (resolved.applied, resolved.prefer) == (True, "source")
    b.close()
    a.close()
    with opener(db_name, create=False) as merged:
        assert note(merged.path) == "b"
        assert counter_app(merged).get_state(thread("b")).values == {"n": 21}


def test_the_async_saver_merges_and_prefer_target_keeps_the_targets_rows(
    async_opener: Callable[..., Any], db_name: str
) -> None:
    async def run() -> None:
        async with async_opener(db_name) as main:
            await counter_app(main).ainvoke({"n": 0}, thread("t"))
            write(main.path, NOTES)
            await main.checkpoint("seeded")
            a = await main.fork_thread("agent-a", ttl="1h")
            b = await main.fork_thread("agent-b", ttl="1h")
        write(a.path, "UPDATE notes SET v = 'a'")
        write(b.path, "UPDATE notes SET v = 'b'")
        await counter_app(a).ainvoke({"n": 10}, thread("a"))
        await counter_app(b).ainvoke({"n": 20}, thread("b"))

        with pytest.raises(OffshootError) as protected:
            await a.merge("main")
        assert protected.value.code == "PROTECTED"
        assert (await a.merge("main", force=True)).applied
        held = await b.merge("main", force=True)
        assert not held.applied
        assert [(c.table, c.kind) for c in held.conflicts] == [("notes", "update/update")]
        kept = await b.merge("main", prefer="target", force=True)
        assert kept.applied
        await a.destroy()
        await b.destroy()

        async with async_opener(db_name, create=False) as merged:
            assert note(merged.path) == "a", "prefer target kept main's row"
            for t, n in (("t", 1), ("a", 11), ("b", 21)):
                assert (await counter_app(merged).aget_state(thread(t))).values == {"n": n}

    asyncio.run(run())
