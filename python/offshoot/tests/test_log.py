"""The branch log and moments from Python: `Client.log`, `AsyncClient.log` and `Store.log`, with the surface and tags
a caller names, against the session's real daemon and a store at rest."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from conftest import read_rows, write_rows

from offshoot import Client, Store, connect, connect_async
from offshoot.daemon import DaemonHandle
from offshoot.errors import OffshootError


def test_client_log_names_the_surface_and_tags(offshoot_daemon: DaemonHandle, db: str, client: Client) -> None:
    with connect(offshoot_daemon.sock, actor="agent", surface="sdk:test/pytest", meta={"run": "r-3"}) as agent:
        agent.fork(db, "main", "a1", ttl="1h")
        with agent.open(db, "a1") as s:
            write_rows(s.path, 1, 2)
            txid = s.flush()
    log = client.log(db, "a1")
    assert log.live
    assert [(r.op, r.actor, r.surface) for r in log.records] == [
        ("fork", "agent", "sdk:test/pytest"),
        ("flush", "agent", "sdk:test/pytest"),
    ]
    flush = log.records[1]
    assert flush.meta == {"run": "r-3"}
    assert flush.txid_after == txid
    assert flush.fields["pages"] > 0
    assert [r.op for r in client.log(db, "a1", actor="human").records] == []
    client.destroy(db, "a1")
    gone = client.log(db, "a1")
    assert not gone.live
    assert gone.destroyed is not None
    assert (gone.destroyed.op, gone.destroyed.actor, gone.destroyed.surface) == ("destroy", "human", "sdk:python")


def test_async_client_log(offshoot_daemon: DaemonHandle, db: str) -> None:
    async def main() -> list[str]:
        c = await connect_async(offshoot_daemon.sock)
        try:
            await c.fork(db, "main", "b1")
            return [r.op for r in (await c.log(db, "b1")).records]
        finally:
            await c.aclose()

    assert asyncio.run(main()) == ["fork"]


def test_store_log_and_moments_at_rest(tmp_path: Path) -> None:
    store = Store(tmp_path / "s", surface="sdk:test/at-rest", meta={"agent": "tester"})
    store.init()
    store.create("app")
    path = store.checkout("app", "main")
    write_rows(path, 1)
    one = store.checkpoint("app", "main", "one")
    write_rows(path, 2)
    store.checkpoint("app", "main", "two")
    log = store.log("app")
    assert [(r.op, r.surface, r.meta.get("agent")) for r in log.records] == [
        ("create", "sdk:test/at-rest", "tester"),
        ("checkpoint", "sdk:test/at-rest", "tester"),
        ("checkpoint", "sdk:test/at-rest", "tester"),
    ]
    out = tmp_path / "one.db"
    assert store.export("app", "main", out, checkpoint=f"tx:{one}") == one
    assert read_rows(str(out)) == [1]
    at = log.records[1].at
    assert read_rows(store.checkout_at("app", "main", f"at:{at}")) == [1]
    with pytest.raises(OffshootError) as refused:
        store.export("app", "main", tmp_path / "x.db", checkpoint="tx:999")
    assert refused.value.code == "NOT_FOUND"
