"""The asyncio client against a real daemon: the same ops, errors, sessions and events as the blocking one."""

from __future__ import annotations

import asyncio
import contextlib
import os
import sqlite3
import uuid
from pathlib import Path

import pytest
from conftest import read_rows, write_rows

from offshoot import AsyncClient, OffshootError, connect_async
from offshoot.daemon import DaemonHandle, start_daemon


def fresh() -> str:
    return f"a-{uuid.uuid4().hex[:12]}"


def test_every_op(offshoot_daemon: DaemonHandle, tmp_path: Path) -> None:
    async def main() -> None:
        async with await connect_async(offshoot_daemon.sock) as c:
            db = fresh()
            await c.create(db)
            assert db in await c.dbs()
            async with await c.open(db) as s:
                write_rows(s.path, 1)
                one = await s.flush("one", {"k": "v"})
                assert [x.db for x in await c.sessions() if x.db == db] == [db]
                assert [x["db"] for x in await c.status() if x["db"] == db] == [db]
                assert await c.fork(db, "main", "b", ttl="1h", meta={"a": "b"}) == one
            assert read_rows(await c.checkout(db, "b")) == [1]
            assert (await c.touch(db, "b", ttl="2h")).ttl == "2h0m0s"
            assert (await c.protect(db, "b")).changed is True
            assert (await c.unprotect(db, "b")).protected is False
            async with await c.open(db, "b") as s:
                write_rows(s.path, 2)
                await s.flush("two")
            ro = await c.checkout_at(db, "b", "two")
            assert read_rows(ro) == [1, 2]
            d = await c.diff(f"{db}@main", f"{db}@b")
            assert [r["x"] for r in d.tables[0].added] == [2]
            out = tmp_path / "b.db"
            await c.export(db, "b", out, checkpoint="two")
            assert read_rows(str(out)) == [1, 2]
            assert read_rows(await c.rollback(db, "b", "fork")) == [1]
            txid = await c.promote(db, "main", "b")
            assert next(b for b in await c.branches(db) if b.branch == "b").head_txid == txid
            assert await c.compact(db, "b") == txid
            await c.destroy(db, "b")
            assert "b" not in [b.branch for b in await c.branches(db)]
            assert (await c.gc()).reap_errors == []

    asyncio.run(main())


def test_errors_carry_codes(offshoot_daemon: DaemonHandle, tmp_path: Path) -> None:
    async def main() -> None:
        async with await AsyncClient.connect(offshoot_daemon.sock) as c:
            db = fresh()
            await c.create(db)
            with pytest.raises(OffshootError) as e:
                await c.create(db)
            assert e.value.code == "ALREADY_EXISTS"
            with pytest.raises(OffshootError) as e:
                await c.destroy(db, "main")
            assert e.value.code == "PROTECTED"
            with pytest.raises(OffshootError) as e:
                await c.fork(db, "main", "x", ttl="none")
            assert e.value.code == "INVALID_ARGUMENT"
            with pytest.raises(TypeError):
                await c.fork(db, "main", "x", ttl=5)
        with pytest.raises(OffshootError) as e:
            await connect_async(tmp_path / "none.sock")
        assert e.value.code == "CONNECTION_FAILED"
        with pytest.raises(OffshootError) as e:
            await c.dbs()
        assert e.value.code == "CONNECTION_CLOSED"

    asyncio.run(main())


def test_concurrent_tasks_share_one_connection(offshoot_daemon: DaemonHandle) -> None:
    async def main() -> None:
        async with await connect_async(offshoot_daemon.sock) as c:
            db = fresh()
            await c.create(db)
            await asyncio.gather(*(c.fork(db, "main", f"b{i}") for i in range(8)))
            names = {b.branch for b in await c.branches(db)}
            assert {f"b{i}" for i in range(8)} <= names

    asyncio.run(main())


def test_events(offshoot_daemon: DaemonHandle) -> None:
    async def main() -> None:
        async with await connect_async(offshoot_daemon.sock) as c:
            db = fresh()
            await c.create(db)
            async with await c.events(timeout=30) as stream:
                s = await c.open(db)
                write_rows(s.path, 1)
                txid = await s.flush()
                await s.close()
                seen = []
                async for ev in stream:
                    if ev.db == db:
                        seen.append(ev)
                        if ev.type == "session_closed":
                            break
            assert [e.type for e in seen] == ["session_opened", "flushed", "session_closed"]
            assert seen[1].detail["txid"] == txid
            async with await c.events(timeout=0.2) as quiet:
                with pytest.raises(OffshootError) as e:
                    await quiet.__anext__()
                assert e.value.code == "TIMEOUT"

    asyncio.run(main())


def test_session_guards_and_flush_errors(offshoot_daemon: DaemonHandle) -> None:
    async def main() -> None:
        async with await connect_async(offshoot_daemon.sock) as c:
            db = fresh()
            await c.create(db)
            s = await c.open(db)
            with pytest.raises(OffshootError) as e:
                await c.open(db)
            assert e.value.code == "SESSION_OPEN"
            with pytest.raises(OffshootError) as e:
                await c.rollback(db, "main", "init")
            assert e.value.code == "SESSION_OPEN"
            with pytest.raises(OffshootError) as e:
                await s.flush("", {"k": "v"})
            assert e.value.code == "INVALID_ARGUMENT"
            await s.close()
            with pytest.raises(OffshootError) as e:
                await s.flush()
            assert e.value.code == "NOT_FOUND"

    asyncio.run(main())


def test_killed_daemon_and_bad_responses(tmp_path: Path) -> None:
    async def main() -> None:
        handle = start_daemon(os.environ["OFFSHOOT_BIN"], tmp_path)
        try:
            c = await connect_async(handle.sock)
            await c.create("app")
            handle.proc.kill()
            handle.proc.wait()
            with pytest.raises(OffshootError) as e:
                await c.dbs()
            assert e.value.code == "CONNECTION_CLOSED"
            await c.aclose()
        finally:
            handle.stop()

        async def garbage(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            await reader.readline()
            writer.write(b"[1, 2]\n")
            await writer.drain()
            await reader.readline()
            writer.close()

        fake = str(tmp_path / "fake.sock")
        server = await asyncio.start_unix_server(garbage, fake)
        async with server, await connect_async(fake) as bad:
            with pytest.raises(OffshootError) as e:
                await bad.dbs()
            assert e.value.code == "BAD_RESPONSE"
            with pytest.raises(OffshootError) as e:
                await bad.dbs()
            assert e.value.code == "CONNECTION_CLOSED"

    asyncio.run(main())


def test_a_cancelled_call_never_leaves_its_answer_to_the_next(tmp_path: Path) -> None:
    async def main() -> None:
        got_request = asyncio.Event()

        async def slow(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            await reader.readline()
            got_request.set()
            await reader.read()  # answers only after the client has given up
            writer.close()

        path = str(tmp_path / "slow.sock")
        server = await asyncio.start_unix_server(slow, path)
        async with server, await connect_async(path) as c:
            call = asyncio.ensure_future(c.dbs())
            await got_request.wait()
            call.cancel()
            with pytest.raises(asyncio.CancelledError):
                await call
            with pytest.raises(OffshootError) as e:
                await c.dbs()
            assert e.value.code == "CONNECTION_CLOSED"

    asyncio.run(main())


def test_async_merge(offshoot_daemon: DaemonHandle) -> None:
    async def main() -> None:
        db = fresh()
        async with await connect_async(offshoot_daemon.sock) as c:
            await c.create(db)
            with contextlib.closing(sqlite3.connect(await c.checkout(db, "main"))) as conn:
                conn.executescript("CREATE TABLE kv(k TEXT PRIMARY KEY, v TEXT); INSERT INTO kv VALUES ('a', '0');")
            await c.fork(db, "main", "one")
            with contextlib.closing(sqlite3.connect(await c.checkout(db, "one"))) as conn:
                conn.executescript("UPDATE kv SET v = '1' WHERE k = 'a';")
            merged = await c.merge(db, "one", "main", force=True)
            assert (merged.applied, merged.conflicts, merged.backup) == (True, [], "main-pre-merge")
            await c.fork(db, "main", ["x", "y"])
            for branch in ("x", "y"):
                with contextlib.closing(sqlite3.connect(await c.checkout(db, branch))) as conn:
                    conn.executescript(f"UPDATE kv SET v = '{branch}' WHERE k = 'a';")
            row = {"table": "kv", "key": {"k": "a"}, "row": {"k": "a", "v": "x+y"}}
            resolved = await c.merge(db, "x", "y", resolved=[row])
            assert (resolved.applied, resolved.resolved) == (True, 1)

    asyncio.run(main())


def test_async_merge_from_checkpoint(offshoot_daemon: DaemonHandle) -> None:
    async def main() -> None:
        db = fresh()
        async with await connect_async(offshoot_daemon.sock) as c:
            await c.create(db)
            with contextlib.closing(sqlite3.connect(await c.checkout(db, "main"))) as conn:
                conn.executescript("CREATE TABLE kv(k TEXT PRIMARY KEY, v TEXT);")
            await c.fork(db, "main", ["one", "two"])
            async with await c.open(db, "one") as s:
                with contextlib.closing(sqlite3.connect(s.path)) as conn:
                    conn.executescript("INSERT INTO kv VALUES ('a', '1');")
                await s.flush("first")
                with contextlib.closing(sqlite3.connect(s.path)) as conn:
                    conn.executescript("INSERT INTO kv VALUES ('b', '1');")
            merged = await c.merge(db, "one", "two", from_checkpoint="first")
            assert merged.tables == [{"table": "kv", "inserted": 1, "updated": 0, "deleted": 0}]

    asyncio.run(main())
