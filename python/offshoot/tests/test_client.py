"""The blocking client against a real daemon: every op, the error codes, sessions and events."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import sqlite3
import tempfile
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest
from conftest import read_rows, write_rows

from offshoot import Branch, Client, Event, OffshootError, SessionInfo, Store, connect
from offshoot.daemon import DaemonHandle, start_daemon


def branch(client: Client, db: str, name: str) -> Branch:
    return next(b for b in client.branches(db) if b.branch == name)


def test_create_dbs_and_branches(client: Client, db: str) -> None:
    assert db in client.dbs()
    assert client.dbs() == sorted(client.dbs())
    (main,) = client.branches(db)
    assert main.branch == "main"
    assert main.protected is True
    assert main.checkpoints == ["init"]
    assert [c.name for c in main.checkpoints_v2] == ["init"]
    assert main.checkpoints_v2[0].txid == 1
    assert main.checkpoints_v2[0].created_at != ""
    assert main.shared is False
    assert main.state == "idle"


def test_branches_filters(client: Client, db: str) -> None:
    client.fork(db, "main", "f1")
    client.fork(db, "main", "f2")
    assert sorted(b.branch for b in client.branches(db, state="idle")) == ["f1", "f2", "main"]
    assert len(client.branches(db, state=["idle"], limit=2)) == 2
    assert client.branches(db, state=["dirty", "active"]) == []
    with client.open(db, "f1"):
        assert [b.branch for b in client.branches(db, state="active")] == ["f1"]


def test_session_flush_fork_and_isolation(client: Client, db: str) -> None:
    with client.open(db) as s:
        assert s.path.endswith(".db")
        write_rows(s.path, 1, 2)
        txid = s.flush("two-rows", {"run": "r1"})
        assert txid >= 2
        assert client.fork(db, "main", "child", ttl="1h", meta={"who": "test"}) == txid
        write_rows(s.path, 3)
    child = branch(client, db, "child")
    assert child.shared is True
    assert child.ttl == "1h0m0s"
    assert child.ttl_remaining not in ("", "expired")
    with client.open(db, "child") as c:
        assert read_rows(c.path) == [1, 2]
        write_rows(c.path, 99)
        c.flush()
    # Row 3 came after the fork, and the child's 99 never reaches main.
    assert read_rows(client.checkout(db, "main")) == [1, 2, 3]
    assert "two-rows" in branch(client, db, "main").checkpoints


def test_fork_from_checkpoint_rollback_promote_compact(client: Client, db: str) -> None:
    with client.open(db) as s:
        write_rows(s.path, 1)
        s.flush("one")
        write_rows(s.path, 2)
        s.flush("two")
    client.fork(db, "main", "b", from_checkpoint="one")
    assert read_rows(client.checkout(db, "b")) == [1]
    path = client.rollback(db, "main", "one")
    assert read_rows(path) == [1]
    assert "two" not in branch(client, db, "main").checkpoints
    with client.open(db, "b") as s:
        write_rows(s.path, 5)
        s.flush()
    txid = client.promote(db, "b", "main", force=True)
    assert branch(client, db, "main").head_txid == txid
    assert read_rows(client.checkout(db, "main")) == [1, 5]
    assert client.compact(db, "b") >= 1
    assert branch(client, db, "b").shared is False
    client.destroy(db, "b")
    assert [b.branch for b in client.branches(db)] == ["main", "main-pre-rollback"] or "b" not in [
        b.branch for b in client.branches(db)
    ]


def test_batch_fork_is_all_or_nothing(client: Client, db: str) -> None:
    with client.open(db) as s:
        write_rows(s.path, 1)
        s.flush("seed")
    names = [f"ep-{i}" for i in range(5)]
    txid = client.fork(db, "main", names, from_checkpoint="seed", ttl="1h")
    made = {b.branch: b for b in client.branches(db) if b.branch in names}
    assert sorted(made) == names
    assert {b.head_txid for b in made.values()} == {txid}
    assert {b.ttl for b in made.values()} == {"1h0m0s"}
    with pytest.raises(OffshootError) as taken:
        client.fork(db, "main", ["ep-new", "ep-2"])
    assert taken.value.code == "ALREADY_EXISTS"
    assert "ep-new" not in [b.branch for b in client.branches(db)]
    with client.open(db, "ep-3") as s:
        write_rows(s.path, 7)
    d = client.diff(f"{db}@main@seed", f"{db}@ep-3")
    (t,) = [t for t in d.tables if t.added]
    assert len(t.added) == 1


def test_touch_ttl_rules(client: Client, db: str) -> None:
    client.fork(db, "main", "t", ttl="2h")
    assert client.touch(db, "t").ttl == "2h0m0s"
    assert client.touch(db, "t", ttl="30m").ttl == "30m0s"
    assert branch(client, db, "t").ttl == "30m0s"
    cleared = client.touch(db, "t", ttl=0)
    assert cleared.ttl == "none"
    assert cleared.touched_at != ""
    assert branch(client, db, "t").ttl == ""
    with pytest.raises(TypeError):
        client.touch(db, "t", ttl=60)


def test_export_and_checkout_at(client: Client, db: str, tmp_path: Path) -> None:
    with client.open(db) as s:
        write_rows(s.path, 7)
        s.flush("seven")
        write_rows(s.path, 8)
        ro = client.checkout_at(db, "main", "seven")
        assert read_rows(ro) == [7]
        assert not os.access(ro, os.W_OK) or os.stat(ro).st_mode & 0o222 == 0
        assert client.checkout_at(db, "main", "seven") == ro
        s.flush()
    out = tmp_path / "head.db"
    assert client.export(db, "main", out) >= 2
    assert read_rows(str(out)) == [7, 8]
    with pytest.raises(OffshootError) as e:
        client.export(db, "main", out)
    assert e.value.code == "ALREADY_EXISTS"
    client.export(db, "main", out, checkpoint="seven", force=True)
    assert read_rows(str(out)) == [7]


def test_export_refuses_a_relative_path_before_asking_the_daemon(
    client: Client, db: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The earlier client refused it too: the daemon would resolve it against its own working directory.
    monkeypatch.chdir(tmp_path)
    with pytest.raises(OffshootError) as e:
        client.export(db, "main", "relative-out.db")
    assert e.value.code == "INVALID_ARGUMENT"
    assert "absolute" in str(e.value)
    assert os.listdir(tmp_path) == []
    assert client.dbs() is not None, "the connection is still usable: nothing was sent"


def test_events_from_a_client_that_only_has_a_socket_path(client: Client, db: str) -> None:
    # The earlier suites build a Client with Client.__new__ and set its public socket_path, then call events().
    bare = Client.__new__(Client)
    bare.socket_path = client.socket_path
    with bare.events(timeout=30) as stream:
        with client.open(db):
            pass
        ev = next(e for e in stream if e.db == db)
    assert ev.type == "session_opened"


def test_protect_unprotect(client: Client, db: str) -> None:
    client.fork(db, "main", "p")
    r = client.protect(db, "p")
    assert (r.protected, r.changed) == (True, True)
    assert client.protect(db, "p").changed is False
    with pytest.raises(OffshootError) as e:
        client.destroy(db, "p")
    assert e.value.code == "PROTECTED"
    assert e.value.hint
    assert client.unprotect(db, "p").protected is False
    client.destroy(db, "p")


def test_diff_rows_and_summary(client: Client, db: str) -> None:
    with client.open(db) as s:
        write_rows(s.path, 1)
        s.flush("a")
        write_rows(s.path, 2, 3)
        s.flush("b")
    d = client.diff(f"{db}@main@a", f"{db}@main@b")
    (t,) = d.tables
    assert t.table == "t"
    assert t.status == "changed"
    assert [r["x"] for r in t.added] == [2, 3]
    summary = client.diff(f"{db}@main@a", f"{db}@main", summary=True)
    assert summary.summary_only is True
    assert summary.tables[0].added == []
    assert (summary.tables[0].left_count, summary.tables[0].right_count) == (1, 3)
    first = client.diff(f"{db}@main@a", f"{db}@main@b", table="t", limit=1)
    (t,) = first.tables
    assert [r["x"] for r in t.added] == [2]
    assert t.counts == {"added": 2, "removed": 0, "changed": 0}


def test_gc(client: Client, db: str) -> None:
    client.fork(db, "main", "g")
    client.destroy(db, "g")
    r = client.gc(grace="1h")
    assert r.reap_errors == []
    assert r.deleted == 0
    assert isinstance(r.backlog, int)


def test_status_and_sessions(client: Client, db: str) -> None:
    with client.open(db) as s:
        raw = [x for x in client.status() if x["db"] == db]
        assert len(raw) == 1
        assert raw[0]["checkout"] == s.path
        (info,) = [x for x in client.sessions() if x.db == db]
        assert isinstance(info, SessionInfo)
        assert info.branch == "main"
        assert info.epoch >= 1
        assert "/" in info.holder
        assert branch(client, db, "main").state == "active"
    assert [x for x in client.sessions() if x.db == db] == []


def test_events_follow_a_session(client: Client, db: str) -> None:
    with client.events(timeout=30) as stream:
        with client.open(db) as s:
            write_rows(s.path, 1)
            txid = s.flush("e1")
        seen: list[Event] = []
        for ev in stream:
            if ev.db == db:
                seen.append(ev)
                if ev.type == "session_closed":
                    break
    assert [e.type for e in seen] == ["session_opened", "flushed", "session_closed"]
    opened, flushed, _ = seen
    assert opened.detail["epoch"] >= 1
    assert "/" in opened.detail["holder"]
    assert flushed.detail["kind"] == "manual"
    assert flushed.detail["txid"] == txid
    assert flushed.ts.endswith("Z")
    assert flushed.branch == "main"
    assert flushed.v == 1


def test_event_stream_times_out_instead_of_hanging(client: Client) -> None:
    # Nothing else runs on this worker's daemon meanwhile, so no event comes.
    with client.events(timeout=0.2) as stream, pytest.raises(OffshootError) as e:
        list(stream)
    assert e.value.code == "TIMEOUT"


@pytest.mark.parametrize(
    ("action", "code"),
    [
        (lambda c, db: c.create(db), "ALREADY_EXISTS"),
        (lambda c, db: c.branches("no-such-db"), "NOT_FOUND"),
        (lambda c, db: c.rollback(db, "main", "no-such-cp"), "NOT_FOUND"),
        (lambda c, db: c.fork(db, "main", "Bad Name!"), "INVALID_NAME"),
        (lambda c, db: c.fork(db, "main", "x", ttl="none"), "INVALID_ARGUMENT"),
        (lambda c, db: c.fork(db, "no-such-branch", "x"), "NOT_FOUND"),
        (lambda c, db: c.destroy(db, "main"), "PROTECTED"),
        (lambda c, db: c.promote(db, "main", "main"), "INVALID_ARGUMENT"),
        (lambda c, db: c.touch(db, "main", ttl="-5m"), "INVALID_ARGUMENT"),
        (lambda c, db: c.checkout_at(db, "main", "no-such-cp"), "NOT_FOUND"),
        (lambda c, db: c.diff(f"{db}@main", f"{db}@nope"), "NOT_FOUND"),
        (lambda c, db: c.gc(grace="soon"), "INVALID_ARGUMENT"),
    ],
)
def test_error_codes(client: Client, db: str, action: object, code: str) -> None:
    with pytest.raises(OffshootError) as e:
        action(client, db)  # type: ignore[operator]
    assert e.value.code == code, e.value
    assert e.value.message
    assert not e.value.message.startswith("daemon: ")


def test_session_guards(client: Client, db: str) -> None:
    client.fork(db, "main", "other")
    with client.open(db) as s:
        for action in (
            lambda: client.open(db),
            lambda: client.destroy(db, "main", force=True),
            lambda: client.rollback(db, "main", "init"),
            lambda: client.checkout(db, "main"),
            lambda: client.compact(db, "main"),
            lambda: client.promote(db, "other", "main", force=True),
        ):
            with pytest.raises(OffshootError) as e:
                action()
            assert e.value.code == "SESSION_OPEN", e.value
            assert "close the session" in e.value.message or "already open" in e.value.message
        with pytest.raises(OffshootError) as e:
            s.flush("", {"k": "v"})
        assert e.value.code == "INVALID_ARGUMENT"
        s.flush("once")
        with pytest.raises(OffshootError) as e:
            s.flush("once")
        assert e.value.code == "ALREADY_EXISTS"
    with pytest.raises(OffshootError) as e:
        s.flush()
    assert e.value.code == "NOT_FOUND"


def test_connection_failed_names_the_fix(tmp_path: Path) -> None:
    with pytest.raises(OffshootError) as e:
        connect(tmp_path / "nothing.sock")
    assert e.value.code == "CONNECTION_FAILED"
    assert e.value.retryable is True
    assert e.value.hint is not None
    assert "offshoot serve" in e.value.hint


def test_closed_client_refuses(client: Client) -> None:
    client.close()
    client.close()
    with pytest.raises(OffshootError) as e:
        client.dbs()
    assert e.value.code == "CONNECTION_CLOSED"


@pytest.fixture
def own_daemon() -> Iterator[DaemonHandle]:
    """A daemon of this test's own, for tests that stop it."""
    with tempfile.TemporaryDirectory(prefix="offshoot-py-") as d:
        handle = start_daemon(os.environ["OFFSHOOT_BIN"], Path(d))
        try:
            yield handle
        finally:
            handle.stop()


def test_shutdown_ends_streams_and_connections(own_daemon: DaemonHandle, tmp_path: Path) -> None:
    c = connect(own_daemon.sock)
    stream = c.events(timeout=30)
    c.create("app")
    s = c.open("app")
    write_rows(s.path, 1)
    c.shutdown()
    # The daemon drops its connections first, so the stream ends (it does not hang) ...
    types = [e.type for e in stream if e.db == "app"]
    assert types[0] == "session_opened"
    assert own_daemon.proc.wait(timeout=30) == 0
    # ... and then flushes the open session: the unflushed row is durable.
    out = tmp_path / "after-shutdown.db"
    Store(own_daemon.store).export("app", "main", out)
    assert read_rows(str(out)) == [1]
    with pytest.raises(OffshootError) as e:
        c.dbs()
    assert e.value.code == "CONNECTION_CLOSED"
    c.close()
    with pytest.raises(OffshootError) as e:
        c.events()
    assert e.value.code == "CONNECTION_FAILED"


def test_killed_daemon_is_connection_closed(own_daemon: DaemonHandle) -> None:
    with connect(own_daemon.sock) as c:
        c.create("app")
        own_daemon.proc.kill()
        own_daemon.proc.wait()
        with pytest.raises(OffshootError) as e:
            c.branches("app")
        assert e.value.code == "CONNECTION_CLOSED"
        assert e.value.hint


def test_malformed_response_is_bad_response(tmp_path: Path) -> None:
    path = str(tmp_path / "fake.sock")
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(1)

    def answer() -> None:
        conn, _ = server.accept()
        with conn:
            conn.recv(4096)
            conn.sendall(b"this is not json\n")
            conn.recv(4096)
            conn.sendall(b'{"no_ok": 1}\n')
            conn.recv(4096)

    t = threading.Thread(target=answer)
    t.start()
    try:
        with connect(path) as c:
            with pytest.raises(OffshootError) as e:
                c.dbs()
            assert e.value.code == "BAD_RESPONSE"
            with pytest.raises(OffshootError) as e:
                c.dbs()
            assert e.value.code == "BAD_RESPONSE"
    finally:
        t.join(timeout=10)
        server.close()


def test_open_carries_the_daemons_warnings(tmp_path: Path) -> None:
    # The wire's additive `warnings` (a reopened session whose unflushed writes were kept aside) reach the caller;
    # a daemon that sends none gives an empty tuple.
    path = str(tmp_path / "warn.sock")
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(1)
    kept = "writes app@main's checkout held but never flushed are kept as app@main-pre-reopen"

    def answer() -> None:
        conn, _ = server.accept()
        with conn:
            conn.recv(4096)
            conn.sendall(json.dumps({"ok": True, "checkout": "/x/main.db", "warnings": [kept]}).encode() + b"\n")
            conn.recv(4096)
            conn.sendall(b'{"ok": true, "checkout": "/x/b.db"}\n')
            conn.recv(4096)

    t = threading.Thread(target=answer)
    t.start()
    try:
        with connect(path) as c:
            assert c.open("app").warnings == (kept,)
            assert c.open("app", "b").warnings == ()
    finally:
        t.join(timeout=10)
        server.close()


def test_client_calls_from_threads_are_serialised(client: Client, db: str) -> None:
    errors: list[BaseException] = []

    def work(i: int) -> None:
        try:
            for _ in range(10):
                assert db in client.dbs()
                assert client.branches(db)[0].branch == "main"
        except BaseException as e:
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_writes_through_stock_sqlite_are_captured(client: Client, db: str) -> None:
    with client.open(db) as s:
        conn = sqlite3.connect(s.path)
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        conn.close()
        write_rows(s.path, *range(100))
        s.flush("hundred")
    assert read_rows(client.checkout_at(db, "main", "hundred")) == list(range(100))


def test_an_interrupted_call_never_leaves_its_answer_to_the_next(tmp_path: Path) -> None:
    path = str(tmp_path / "slow.sock")
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(1)

    def answer_late() -> None:
        conn, _ = server.accept()
        with conn, contextlib.suppress(OSError):
            conn.recv(4096)
            conn.recv(4096)  # the client gives up (and hangs up) before this answer
            conn.sendall(b'{"ok":true,"databases":["stale"]}\n')

    class Interrupted(Exception):
        pass

    def interrupt(signum: int, frame: object) -> None:
        raise Interrupted

    t = threading.Thread(target=answer_late)
    t.start()
    previous = signal.signal(signal.SIGALRM, interrupt)
    try:
        with connect(path) as c:
            signal.setitimer(signal.ITIMER_REAL, 0.3)
            with pytest.raises(Interrupted):
                c.dbs()
            with pytest.raises(OffshootError) as e:
                c.dbs()
            assert e.value.code == "CONNECTION_CLOSED"
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        t.join(timeout=10)
        server.close()


def test_an_agent_connection_gets_the_agent_rules(offshoot_daemon: DaemonHandle, client: Client, db: str) -> None:
    client.fork(db, "main", "work")
    with connect(offshoot_daemon.sock, actor="agent") as agent:
        with pytest.raises(OffshootError) as refused:
            agent.promote(db, "work", "main", force=True)
        assert refused.value.code == "PROTECTED"
        assert "allow_force" in (refused.value.hint or "")
        assert "-allow-force" not in (refused.value.hint or "")
    with connect(offshoot_daemon.sock, actor="agent", allow_force=True) as forcing:
        assert forcing.promote(db, "work", "main", force=True) >= 1


def test_checkout_keeps_uncheckpointed_writes_unless_discarded(client: Client, db: str) -> None:
    path = client.checkout(db)
    write_rows(path, 7)
    assert client.checkout(db) == path
    assert read_rows(path) == [7]
    client.checkout(db, discard=True)
    assert read_rows(path) == []


def _write_kv(path: str, sql: str) -> None:
    with contextlib.closing(sqlite3.connect(path)) as conn:
        conn.executescript(sql)


def test_merge_from_checkpoint_takes_that_point_not_the_head(client: Client, db: str) -> None:
    _write_kv(client.checkout(db, "main"), "CREATE TABLE kv(k TEXT PRIMARY KEY, v TEXT);")
    client.fork(db, "main", ["one", "two"])
    with client.open(db, "one") as s:
        _write_kv(s.path, "INSERT INTO kv VALUES ('a', '1');")
        s.flush("first")
        _write_kv(s.path, "INSERT INTO kv VALUES ('b', '1');")
    merged = client.merge(db, "one", "two", from_checkpoint="first")
    assert (merged.applied, merged.tables) == (True, [{"table": "kv", "inserted": 1, "updated": 0, "deleted": 0}])


def test_merge_lists_conflicts_then_prefer_resolves(client: Client, db: str) -> None:
    _write_kv(
        client.checkout(db, "main"), "CREATE TABLE kv(k TEXT PRIMARY KEY, v TEXT); INSERT INTO kv VALUES ('a', '0');"
    )
    client.fork(db, "main", "one")
    client.fork(db, "main", "two")
    _write_kv(client.checkout(db, "one"), "UPDATE kv SET v = '1' WHERE k = 'a'; INSERT INTO kv VALUES ('b', '1');")
    _write_kv(client.checkout(db, "two"), "UPDATE kv SET v = '2' WHERE k = 'a';")
    with pytest.raises(OffshootError) as refused:
        client.merge(db, "one", "main")
    assert refused.value.code == "PROTECTED"
    first = client.merge(db, "one", "main", force=True)
    assert (first.applied, first.base["kind"], first.backup, first.checkpoint) == (
        True,
        "fork",
        "main-pre-merge",
        "merge",
    )
    assert first.tables == [{"table": "kv", "inserted": 1, "updated": 1, "deleted": 0}]
    held = client.merge(db, "two", "main", force=True)
    assert held.applied is False
    assert [(c.kind, c.key, c.source, c.target) for c in held.conflicts] == [
        ("update/update", {"k": "a"}, {"k": "a", "v": "2"}, {"k": "a", "v": "1"})
    ]
    resolved = client.merge(db, "two", "main", force=True, prefer="source", name="took-two")
    assert (resolved.applied, resolved.prefer, resolved.checkpoint) == (True, "source", "took-two")


def test_merge_resolved_rows_settle_conflicts(client: Client, db: str) -> None:
    _write_kv(
        client.checkout(db, "main"),
        "CREATE TABLE kv(k TEXT PRIMARY KEY, v TEXT); INSERT INTO kv VALUES ('a', '0'), ('b', '0');",
    )
    client.fork(db, "main", ["one", "two"])
    _write_kv(client.checkout(db, "one"), "UPDATE kv SET v = '1'; INSERT INTO kv VALUES ('c', '1');")
    _write_kv(client.checkout(db, "two"), "DELETE FROM kv WHERE k = 'a'; UPDATE kv SET v = '2' WHERE k = 'b';")
    held = client.merge(db, "one", "two")
    assert [(c.kind, c.key) for c in held.conflicts] == [("update/delete", {"k": "a"}), ("update/update", {"k": "b"})]
    keep: Mapping[str, object] = {"table": "kv", "key": {"k": "a"}, "row": held.conflicts[0].source}
    with pytest.raises(OffshootError) as partial:
        client.merge(db, "one", "two", resolved=[keep])
    assert partial.value.code == "MERGE_CONFLICT"
    assert "resolved" in (partial.value.hint or "")
    with pytest.raises(OffshootError) as stray:
        client.merge(db, "one", "two", resolved=[keep, {"table": "nope", "key": {"k": "b"}, "row": None}])
    assert stray.value.code == "INVALID_ARGUMENT"
    both: list[Mapping[str, object]] = [keep, {"table": "kv", "key": {"k": "b"}, "row": {"k": "b", "v": "1+2"}}]
    merged = client.merge(db, "one", "two", resolved=both)
    assert (merged.applied, merged.resolved, merged.prefer) == (True, 2, None)
    with contextlib.closing(sqlite3.connect(client.checkout(db, "two"))) as conn:
        rows = conn.execute("SELECT k, v FROM kv ORDER BY k").fetchall()
    assert rows == [("a", "1"), ("b", "1+2"), ("c", "1")]
