"""The documented semantics: durability explicit, fork flushes first, forks independent, promote needs the target's
session closed, destroy respects protection and is a no-op on a closed saver, with_allowlist shares the branch."""

from __future__ import annotations

import asyncio
import os
import sqlite3
import tempfile

import offshoot
import pytest
from daemon_process import Daemon
from graphs import counter_app, log_app, thread
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from offshoot import OffshootError, Store

from langgraph_checkpoint_offshoot import AsyncOffshootSaver, OffshootSaver

CONFIG = thread("t")


def durable_threads(daemon: Daemon, db: str, branch: str = "main") -> set[str]:
    """The thread ids in the branch's durable head, read from an export (never from the live checkout)."""
    out = os.path.join(tempfile.mkdtemp(prefix="lgo-x-"), "head.db")
    with offshoot.connect(daemon.socket) as c:
        c.export(db, branch, out)
    with sqlite3.connect(out) as conn:
        try:
            return {r[0] for r in conn.execute("SELECT DISTINCT thread_id FROM checkpoints")}
        except sqlite3.OperationalError:
            return set()  # not even the tables are durable yet


def test_durability_is_explicit(daemon: Daemon, db_name: str) -> None:
    with OffshootSaver.session(daemon.socket, db_name) as saver:
        counter_app(saver).invoke({"n": 0}, CONFIG)
        assert durable_threads(daemon, db_name) == set(), "a write is not durable before a checkpoint"
        txid = saver.checkpoint("first", {"why": "test"})
        assert txid > 1
        assert durable_threads(daemon, db_name) == {"t"}
        fork = saver.fork_thread("closing")
    counter_app(fork).invoke({"n": 0}, thread("on-fork"))
    assert durable_threads(daemon, db_name, "closing") == {"t"}
    fork.close()
    assert durable_threads(daemon, db_name, "closing") == {"t", "on-fork"}, "closing a session flushes it"


def test_a_head_fork_holds_everything_written_and_the_fork_is_independent(daemon: Daemon, db_name: str) -> None:
    with OffshootSaver.session(daemon.socket, db_name) as parent:
        counter_app(parent).invoke({"n": 0}, CONFIG)  # never checkpointed: the fork flushes it first
        with parent.fork_thread("child", ttl="1h", meta={"attempt": "1"}) as child:
            assert (child.db, child.branch) == (db_name, "child")
            assert child.path != parent.path
            assert counter_app(child).get_state(CONFIG).values == {"n": 1}
            counter_app(child).invoke({"n": 40}, CONFIG)
            counter_app(parent).invoke({"n": 7}, CONFIG)
            assert counter_app(child).get_state(CONFIG).values == {"n": 41}
            assert counter_app(parent).get_state(CONFIG).values == {"n": 8}
        ttl = {b.branch: b.ttl for b in offshoot.connect(daemon.socket).branches(db_name)}["child"]
        assert ttl == "1h0m0s"


def test_a_fork_from_a_checkpoint_starts_there(daemon: Daemon, db_name: str) -> None:
    with OffshootSaver.session(daemon.socket, db_name) as parent:
        app = counter_app(parent)
        app.invoke({"n": 0}, CONFIG)
        parent.checkpoint("one")
        app.invoke({"n": 10}, CONFIG)
        with parent.fork_thread("from-one", from_checkpoint="one") as child:
            assert counter_app(child).get_state(CONFIG).values == {"n": 1}


def test_promote_needs_the_target_session_closed(daemon: Daemon, db_name: str) -> None:
    main = OffshootSaver.session(daemon.socket, db_name)
    counter_app(main).invoke({"n": 0}, CONFIG)
    attempt = main.fork_thread("attempt")
    counter_app(attempt).invoke({"n": 100}, CONFIG)
    with pytest.raises(OffshootError) as err:
        attempt.promote("main", force=True)
    assert err.value.code == "SESSION_OPEN", err.value
    main.close()
    with pytest.raises(OffshootError) as protected:
        attempt.promote("main")
    assert protected.value.code == "PROTECTED"
    assert attempt.promote("main", force=True) > 0
    attempt.close()
    with OffshootSaver.session(daemon.socket, db_name) as again:
        assert counter_app(again).get_state(CONFIG).values == {"n": 101}


def test_destroy_respects_protection_and_always_leaves_the_saver_closed(daemon: Daemon, db_name: str) -> None:
    main = OffshootSaver.session(daemon.socket, db_name)
    with pytest.raises(OffshootError) as err:
        main.destroy()
    assert err.value.code == "PROTECTED"
    assert main.closed
    main.destroy()  # closed: a silent no-op, even without force
    with pytest.raises(OffshootError) as closed:
        main.get_tuple(CONFIG)
    assert closed.value.code == "CLOSED"
    with pytest.raises(OffshootError):
        main.checkpoint("late")
    assert db_name in offshoot.connect(daemon.socket).dbs()

    with OffshootSaver.session(daemon.socket, db_name) as reopened:  # the refused destroy released the session
        fork = reopened.fork_thread("gone")
    fork.destroy()
    assert "gone" not in {b.branch for b in offshoot.connect(daemon.socket).branches(db_name)}
    fork.close()  # idempotent after destroy


def test_create_false_does_not_create(daemon: Daemon, db_name: str) -> None:
    with pytest.raises(OffshootError) as err:
        OffshootSaver.session(daemon.socket, db_name, create=False)
    assert err.value.code == "NOT_FOUND"
    assert db_name not in offshoot.connect(daemon.socket).dbs()


def test_with_allowlist_is_a_clone_sharing_the_branch(daemon: Daemon, db_name: str) -> None:
    with OffshootSaver.session(daemon.socket, db_name) as permissive:
        assert permissive.with_allowlist([("my_module", "MyClass")]) is permissive, "nothing to derive: as the stock"
    strict = JsonPlusSerializer(allowed_msgpack_modules=None)
    with OffshootSaver.session(daemon.socket, db_name, serde=strict) as saver:
        assert saver.serde is strict
        clone = saver.with_allowlist([("my_module", "MyClass")])
        assert clone is not saver
        assert clone.serde is not saver.serde
        assert clone.path == saver.path
        counter_app(clone).invoke({"n": 0}, CONFIG)
        saver.checkpoint("c")
        assert saver.get_tuple(CONFIG) == clone.get_tuple(CONFIG)
        counter_app(saver).invoke({"n": 5}, CONFIG)
        saver.rollback("c")
        assert counter_app(clone).get_state(CONFIG).values == {"n": 1}, "the clone follows the rollback"
    assert clone.closed, "closing either closes the shared branch"


def test_an_at_rest_checkpoint_needs_a_name_and_lands_in_the_store(store: str) -> None:
    with OffshootSaver.at_rest(store, "app") as saver:
        log_app(saver).invoke({"log": [], "total": 0}, CONFIG)
        with pytest.raises(OffshootError) as err:
            saver.checkpoint()
        assert err.value.code == "INVALID_ARGUMENT"
        saver.checkpoint("named", {"score": "1"})
    names = {c for b in Store(store).branches("app") for c in b.checkpoints}
    assert "named" in names


def test_the_async_saver_is_awaitable_and_closes_explicitly(daemon: Daemon, db_name: str) -> None:
    async def run() -> None:
        saver = await AsyncOffshootSaver.session(daemon.socket, db_name)
        chunks = [c async for c in log_app(saver).astream({"log": [], "total": 0}, thread("streamed"))]
        assert [next(iter(c)) for c in chunks] == ["plan", "act"]
        assert (await log_app(saver).aget_state(thread("streamed"))).values["total"] == 1
        await counter_app(saver).ainvoke({"n": 0}, CONFIG)
        child = await saver.fork_thread("child")
        await saver.aclose()
        assert saver.closed
        await saver.destroy()  # closed: no-op
        assert (await counter_app(child).aget_state(CONFIG)).values == {"n": 1}
        # The stock async saver's sync methods work from a worker thread.
        tup = await asyncio.to_thread(child.get_tuple, CONFIG)
        assert tup is not None
        await child.destroy()
        assert child.closed

    asyncio.run(run())
    assert "child" not in {b.branch for b in offshoot.connect(daemon.socket).branches(db_name)}


def test_the_sync_saver_keeps_the_stock_answer_to_async_calls(daemon: Daemon, db_name: str) -> None:
    with OffshootSaver.session(daemon.socket, db_name) as saver, pytest.raises(NotImplementedError):
        asyncio.run(saver.aget_tuple(CONFIG))


def test_an_at_rest_head_fork_holds_the_uncheckpointed_writes(store: str) -> None:
    with OffshootSaver.at_rest(store, "app") as parent:
        counter_app(parent).invoke({"n": 0}, CONFIG)  # the CLI's fork checkpoints the dirty checkout first
        with parent.fork_thread("child", ttl="1h", meta={"attempt": "1"}) as child:
            assert child.path != parent.path
            assert counter_app(child).get_state(CONFIG).values == {"n": 1}
            counter_app(child).invoke({"n": 10}, CONFIG)
            assert counter_app(parent).get_state(CONFIG).values == {"n": 1}
    assert {b.branch: b.ttl for b in Store(store).branches("app")}["child"] == "1h0m0s"


def test_an_at_rest_saver_reopened_keeps_the_uncheckpointed_writes(store: str) -> None:
    with OffshootSaver.at_rest(store, "app") as first:
        counter_app(first).invoke({"n": 0}, CONFIG)
        first.checkpoint("one")
        counter_app(first).invoke({"n": 10}, CONFIG)  # not checkpointed
    with OffshootSaver.at_rest(store, "app") as again:
        assert counter_app(again).get_state(CONFIG).values == {"n": 11}, "the dirty checkout is not re-materialized"
        again.checkpoint("two")
        again.rollback("one")
        assert counter_app(again).get_state(CONFIG).values == {"n": 1}
    with OffshootSaver.at_rest(store, "app") as third:
        assert counter_app(third).get_state(CONFIG).values == {"n": 1}, "a clean checkout is reused as well"
