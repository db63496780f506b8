"""Ephemeral forks and episodes against a real daemon, blocking and asyncio: an episode reads like any branch while it
runs, ends with its diff against where it started, and is discarded unless kept."""

from __future__ import annotations

import asyncio
import os
import sqlite3

import pytest
from conftest import read_rows, write_rows

from offshoot import AsyncClient, Client, EpisodeResult, OffshootError
from offshoot.daemon import DaemonHandle


def seed(client: Client, db: str) -> None:
    """`main` of db with rows 1 and 2, flushed as the checkpoint `seed`."""
    with client.open(db) as s:
        write_rows(s.path, 1, 2)
        s.flush("seed")


def branches(client: Client, db: str) -> list[str]:
    return sorted(b.branch for b in client.branches(db))


def test_ephemeral_fork_is_listed_as_one_and_kept_by_a_named_flush(client: Client, db: str) -> None:
    seed(client, db)
    assert client.fork(db, "main", "e1", from_checkpoint="seed", ephemeral=True) > 0
    listed = {b.branch: b for b in client.branches(db)}
    assert listed["e1"].ephemeral is True
    assert listed["main"].ephemeral is False
    with client.open(db, "e1") as s:
        assert [x.ephemeral for x in client.sessions() if x.branch == "e1"] == [True]
        write_rows(s.path, 3)
        s.flush("kept")
    assert {b.branch: b for b in client.branches(db)}["e1"].ephemeral is False
    assert read_rows(client.checkout_at(db, "e1", "kept")) == [1, 2, 3]


def test_episode_with_block_diffs_and_discards(client: Client, db: str) -> None:
    seed(client, db)
    with client.episode(db, from_checkpoint="seed") as ep:
        assert ep.branch.startswith("ep-")
        assert os.fspath(ep) == ep.path
        assert {b.branch: b.ephemeral for b in client.branches(db)}[ep.branch] is True
        with sqlite3.connect(ep) as conn:
            conn.execute("INSERT INTO t VALUES (3)")
    assert isinstance(ep.result, EpisodeResult)
    t = ep.result.diff.tables[0]
    assert (t.status, t.left_count, t.right_count) == ("changed", 2, 3)
    assert ep.result.kept is None
    assert branches(client, db) == ["main"]


def test_episode_keep_leaves_a_durable_branch(client: Client, db: str) -> None:
    seed(client, db)
    with client.episode(db, from_checkpoint="seed", name="keeper") as ep:
        write_rows(ep.path, 4)
        ep.keep("good", {"score": "1"})
    assert ep.result is not None
    assert ep.result.kept == "good"
    keeper = {b.branch: b for b in client.branches(db)}["keeper"]
    assert keeper.ephemeral is False
    assert "good" in keeper.checkpoints
    assert read_rows(client.checkout_at(db, "keeper", "good")) == [1, 2, 4]


def test_an_episode_whose_block_raises_is_discarded(client: Client, db: str) -> None:
    seed(client, db)
    with pytest.raises(RuntimeError, match="the run failed"), client.episode(db, from_checkpoint="seed"):
        raise RuntimeError("the run failed")
    assert branches(client, db) == ["main"]


def test_async_episode_and_ephemeral_fork(offshoot_daemon: DaemonHandle, client: Client, db: str) -> None:
    seed(client, db)

    async def main() -> EpisodeResult | None:
        async with await AsyncClient.connect(offshoot_daemon.sock) as c:
            assert await c.fork(db, "main", "ae", from_checkpoint="seed", ephemeral=True) > 0
            assert {b.branch: b.ephemeral for b in await c.branches(db)}["ae"] is True
            await c.destroy(db, "ae")
            async with c.episode(db, from_checkpoint="seed") as ep:
                write_rows(ep.path, 5)
            kept = await c.episode(db, from_checkpoint="seed", name="akept")
            write_rows(kept.path, 6)
            await kept.keep("done")
            assert (await kept.close()).kept == "done"
            return ep.result

    result = asyncio.run(main())
    assert result is not None
    assert result.diff.tables[0].status == "changed"
    assert branches(client, db) == ["akept", "main"]


def test_an_ephemeral_fork_of_a_missing_checkpoint_fails_as_any_fork(client: Client, db: str) -> None:
    with pytest.raises(OffshootError) as e:
        client.fork(db, "main", "x", ephemeral=True, from_checkpoint="no-such")
    assert e.value.code == "NOT_FOUND"
    assert branches(client, db) == ["main"]
