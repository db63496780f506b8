"""The at-rest Store on a temp store: every verb through the CLI's --json, errors with the CLI's codes."""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest
from conftest import read_rows, write_rows

from offshoot import OffshootError, Store


@pytest.fixture
def store(tmp_path: Path) -> Store:
    s = Store(tmp_path / "store")
    s.init()
    return s


def test_lifecycle_at_rest(store: Store, tmp_path: Path) -> None:
    store.create("app")
    assert store.dbs() == ["app"]
    path = store.checkout("app")
    assert store.path("app") == path
    write_rows(path, 1, 2)
    one = store.checkpoint("app", "main", "two-rows", meta={"run": "r1"})
    assert one >= 2
    assert store.fork("app", "main", "b", ttl="1h", meta={"who": "t"}) == one
    b = next(x for x in store.branches("app") if x.branch == "b")
    assert (b.shared, b.ttl, b.protected) == (True, "1h0m0s", False)
    assert b.checkpoints == ["fork"]
    bpath = store.checkout("app", "b")
    assert read_rows(bpath) == [1, 2]
    write_rows(bpath, 3)
    store.checkpoint("app", "b", "three")
    write_rows(bpath, 4)
    assert read_rows(store.rollback("app", "b", "three")) == [1, 2, 3]
    assert "b-pre-rollback" in [x.branch for x in store.branches("app")]
    assert read_rows(store.checkout_at("app", "b", "three")) == [1, 2, 3]
    out = tmp_path / "out.db"
    assert store.export("app", "b", out, checkpoint="three") >= 1
    assert read_rows(str(out)) == [1, 2, 3]
    d = store.diff("app@main", "app@b")
    assert [r["x"] for r in d.tables[0].added] == [3]
    assert store.diff("app@main", "app@b", summary=True).tables[0].right_count == 3
    limited = store.diff("app@main", "app@b", table="t", limit=0)
    assert (limited.tables[0].added, limited.tables[0].counts) == ([], {"added": 1, "removed": 0, "changed": 0})


def test_promote_compact_touch_protect_destroy_at_rest(store: Store) -> None:
    store.create("app")
    write_rows(store.checkout("app"), 1)
    store.checkpoint("app", "main", "one")
    store.fork("app", "main", "b")
    write_rows(store.checkout("app", "b"), 2)
    store.checkpoint("app", "b", "two")
    with pytest.raises(OffshootError) as e:
        store.promote("app", "b", "main")
    assert e.value.code == "PROTECTED"
    txid = store.promote("app", "b", "main", force=True)
    assert next(x for x in store.branches("app") if x.branch == "main").head_txid == txid
    assert read_rows(store.checkout("app")) == [1, 2]
    assert store.compact("app", "b") >= 1
    assert store.touch("app", "b", ttl=0).ttl == "none"
    assert store.touch("app", "b", ttl="2h").ttl == "2h0m0s"
    assert store.protect("app", "b").protected is True
    with pytest.raises(OffshootError) as e:
        store.destroy("app", "b")
    assert e.value.code == "PROTECTED"
    assert store.unprotect("app", "b").changed is True
    store.destroy("app", "b")
    assert "b" not in [x.branch for x in store.branches("app")]
    assert store.gc(grace="0s").reap_errors == []
    assert "branches" in store.status()


def test_create_from_a_file(store: Store, tmp_path: Path) -> None:
    src = tmp_path / "seed.db"
    conn = sqlite3.connect(src)
    conn.execute("CREATE TABLE t(x INTEGER)")
    conn.execute("INSERT INTO t VALUES (41)")
    conn.commit()
    conn.close()
    store.create("imported", from_file=src)
    assert read_rows(store.checkout("imported")) == [41]


ERRORS: list[tuple[Callable[[Store], object], str]] = [
    (lambda s: s.create("app"), "ALREADY_EXISTS"),
    (lambda s: s.branches("nope"), "NOT_FOUND"),
    (lambda s: s.rollback("app", "main", "nope"), "NOT_FOUND"),
    (lambda s: s.fork("app", "main", "Bad Name"), "INVALID_NAME"),
    (lambda s: s.fork("app", "main", "x", ttl="none"), "INVALID_ARGUMENT"),
    (lambda s: s.destroy("app", "main"), "PROTECTED"),
    (lambda s: s.init(), "ALREADY_EXISTS"),
]


def test_errors_keep_the_cli_codes(store: Store) -> None:
    store.create("app")
    for action, code in ERRORS:
        with pytest.raises(OffshootError) as e:
            action(store)
        assert e.value.code == code, e.value
        assert e.value.hint


def test_an_agents_store_gets_the_agent_rules(store: Store) -> None:
    store.create("app")
    agent = Store(store.spec, actor="agent")
    with pytest.raises(OffshootError) as e:
        agent.touch("app", "main", ttl="1s")
    assert e.value.code == "PROTECTED", e.value
    with pytest.raises(OffshootError) as e:
        agent.fork("app", "main", "main-pre-promote")
    assert e.value.code == "INVALID_NAME", e.value
    agent.fork("app", "main", "attempt")
    with pytest.raises(OffshootError) as e:
        agent.destroy("app", "main", force=True)
    assert e.value.code == "PROTECTED", e.value
    forced = Store(store.spec, actor="agent", allow_force=True)
    forced.promote("app", "attempt", "main", force=True)
    with pytest.raises(ValueError, match="actor must be"):
        Store(store.spec, actor="robot")


def test_uninitialized_store(tmp_path: Path) -> None:
    with pytest.raises(OffshootError) as e:
        Store(tmp_path / "nothing").create("app")
    assert e.value.code == "NOT_INITIALIZED"


def test_binary_lookup(tmp_path: Path) -> None:
    bin_ = os.environ["OFFSHOOT_BIN"]
    assert Store(tmp_path, env={"OFFSHOOT_BIN": bin_, "PATH": ""}).bin == bin_
    with pytest.raises(OffshootError) as e:
        Store(tmp_path, env={"PATH": str(tmp_path)})
    assert e.value.code == "BINARY_NOT_FOUND"
    with pytest.raises(OffshootError) as e:
        Store(tmp_path, env={"OFFSHOOT_BIN": str(tmp_path / "missing")})
    assert e.value.code == "USAGE"
    link_dir = tmp_path / "bin"
    link_dir.mkdir()
    (link_dir / "offshoot").symlink_to(bin_)
    found = Store(tmp_path, env={"PATH": str(link_dir)})
    assert found.bin == str(link_dir / "offshoot")


def test_merge_at_rest_from_checkpoint(store: Store) -> None:
    store.create("app")

    def write(branch: str, sql: str) -> None:
        with contextlib.closing(sqlite3.connect(store.checkout("app", branch))) as conn:
            conn.executescript(sql)

    write("main", "CREATE TABLE kv(k TEXT PRIMARY KEY, v TEXT);")
    store.fork("app", "main", "one")
    store.fork("app", "main", "two")
    write("one", "INSERT INTO kv VALUES ('a', '1');")
    store.checkpoint("app", "one", "first")
    write("one", "INSERT INTO kv VALUES ('b', '1');")
    merged = store.merge("app", "one", "two", from_checkpoint="first")
    assert (merged.applied, merged.tables) == (True, [{"table": "kv", "inserted": 1, "updated": 0, "deleted": 0}])


def test_merge_at_rest_resolved_rows(store: Store) -> None:
    store.create("app")
    path = store.checkout("app", "main")
    _write(path, "CREATE TABLE kv(k TEXT PRIMARY KEY, v BLOB); INSERT INTO kv VALUES ('a', x'00'), ('b', x'00');")
    store.fork("app", "main", "one")
    store.fork("app", "main", "two")
    _write(store.checkout("app", "one"), "UPDATE kv SET v = x'01'; ")
    _write(store.checkout("app", "two"), "UPDATE kv SET v = x'02'; ")
    held = store.merge("app", "one", "two")
    assert [(c.key, c.source) for c in held.conflicts] == [
        ({"k": "a"}, {"k": "a", "v": {"$blob": "01"}}),
        ({"k": "b"}, {"k": "b", "v": {"$blob": "01"}}),
    ]
    # A row as the conflict gives it, or with Python values (bytes encoded as the conflicts encode a BLOB).
    mine: list[Mapping[str, object]] = [
        {"table": "kv", "key": held.conflicts[0].key, "row": {"k": "a", "v": b"\x0a\x0b"}}
    ]
    with pytest.raises(OffshootError) as partial:
        store.merge("app", "one", "two", resolved=mine)
    assert partial.value.code == "MERGE_CONFLICT"
    stray: list[Mapping[str, object]] = [*mine, {"table": "kv", "key": {"k": "zz"}, "row": None}]
    with pytest.raises(OffshootError) as refused:
        store.merge("app", "one", "two", resolved=stray, prefer="target")
    assert refused.value.code == "INVALID_ARGUMENT"
    merged = store.merge("app", "one", "two", resolved=mine, prefer="target")
    assert (merged.applied, merged.resolved, merged.prefer) == (True, 1, "target")
    with contextlib.closing(sqlite3.connect(store.checkout("app", "two"))) as conn:
        assert conn.execute("SELECT k, hex(v) FROM kv ORDER BY k").fetchall() == [("a", "0A0B"), ("b", "02")]


def _write(path: str, sql: str) -> None:
    with contextlib.closing(sqlite3.connect(path)) as conn:
        conn.executescript(sql)


def test_merge_at_rest_conflicts_are_an_answer(store: Store) -> None:
    store.create("app")

    def write(branch: str, sql: str) -> None:
        conn = sqlite3.connect(store.checkout("app", branch))
        try:
            conn.executescript(sql)
        finally:
            conn.close()

    write("main", "CREATE TABLE kv(k TEXT PRIMARY KEY, v TEXT); INSERT INTO kv VALUES ('a', '0');")
    store.fork("app", "main", "one")
    store.fork("app", "main", "two")
    write("one", "UPDATE kv SET v = '1' WHERE k = 'a';")
    write("two", "UPDATE kv SET v = '2' WHERE k = 'a'; INSERT INTO kv VALUES ('b', '2');")
    held = store.merge("app", "one", "two")
    assert held.applied is False
    assert [(c.kind, c.key) for c in held.conflicts] == [("update/update", {"k": "a"})]
    merged = store.merge("app", "one", "two", prefer="source", name="took-one")
    assert (merged.applied, merged.checkpoint, merged.backup) == (True, "took-one", "two-pre-merge")
    with pytest.raises(OffshootError) as refused:
        store.merge("app", "one", "main")
    assert refused.value.code == "PROTECTED"
