"""The LlamaIndex recipe against the real `llama-index-core` workflows (no model: plain steps): the database is
checkpointed with each workflow checkpoint, and a run restored from one continues in a fork of the database."""

from __future__ import annotations

import asyncio
import sqlite3
import uuid
from typing import Any

import pytest
from llama_index.core.workflow import Context, StartEvent, StopEvent, Workflow, step
from workflows.events import HumanResponseEvent, InputRequiredEvent, StepStateChanged

from offshoot import Client, OffshootError, Store
from offshoot.daemon import DaemonHandle
from offshoot.integrations.llama_index import WorkflowForks


class Ask(InputRequiredEvent):
    question: str


class Answer(HumanResponseEvent):
    text: str


class Signup(Workflow):
    """Writes a pending signup, asks for a name, then writes it: its steps write the database at `db_path`."""

    def __init__(self, db_path: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.db_path = db_path

    def write(self, sql: str, *args: str) -> None:
        conn = sqlite3.connect(self.db_path)
        try:
            # A primary key, so a fork's rows can be merged back (merge refuses a table without one).
            conn.execute("CREATE TABLE IF NOT EXISTS log(id INTEGER PRIMARY KEY, entry TEXT)")
            conn.execute(sql, args)
            conn.commit()
        finally:
            conn.close()

    @step
    async def start(self, ctx: Context, ev: StartEvent) -> Ask:
        self.write("INSERT INTO log(entry) VALUES ('pending')")
        return Ask(question="name?")

    @step
    async def finish(self, ctx: Context, ev: Answer) -> StopEvent:
        self.write("INSERT INTO log(entry) VALUES (?)", f"name {ev.text}")
        return StopEvent(result=f"hello {ev.text}")


def log(path: str) -> list[str]:
    conn = sqlite3.connect(path)
    try:
        return [r[0] for r in conn.execute("SELECT entry FROM log ORDER BY rowid")]
    finally:
        conn.close()


async def answer_with(forks: WorkflowForks, handler: Any, name: str) -> Any:
    async for event in forks.stream(handler):
        if isinstance(event, Ask):
            handler.ctx.send_event(Answer(text=name))
    return await handler


async def finish(forks: WorkflowForks, at: Any, name: str) -> None:
    """Resumes the run at the checkpoint `at` in `forks` (a fork made there) and answers it with `name`."""
    workflow = Signup(forks.path, timeout=30)
    handler = workflow.run(ctx=at.context(workflow))
    handler.ctx.send_event(Answer(text=name))
    _ = [e async for e in forks.stream(handler)]
    assert await handler == f"hello {name}"


def run_recipe(forks: WorkflowForks) -> None:
    async def run() -> None:
        workflow = Signup(forks.path, timeout=30)
        assert await answer_with(forks, workflow.run(), "ada") == "hello ada"
        assert [c.name for c in forks.checkpoints] == ["idle-1", "stop"]
        assert log(forks.path) == ["pending", "name ada"]

        asked = forks.checkpoints[0]
        retry = await forks.fork_at(asked, "retry", ttl="1h")
        assert log(retry.path) == ["pending"], "the fork holds the database as it was at that workflow checkpoint"
        again = Signup(retry.path, timeout=30)
        handler = again.run(ctx=asked.context(again))
        # The restored run is waiting for the answer, exactly where the checkpoint left it: no step runs again.
        handler.ctx.send_event(Answer(text="grace"))
        events = [e async for e in retry.stream(handler)]
        assert await handler == "hello grace"
        assert [e.name for e in events if isinstance(e, StepStateChanged)] == ["finish", "finish"]
        assert log(retry.path) == ["pending", "name grace"]
        assert log(forks.path) == ["pending", "name ada"]

        await forks.rollback(asked)
        assert log(forks.path) == ["pending"]
        assert [c.name for c in forks.checkpoints] == ["idle-1"]
        retry.close()

    asyncio.run(run())


def test_checkpoints_and_run_from_at_rest(store: Store) -> None:
    with WorkflowForks.at_rest(store, "signup") as forks:
        run_recipe(forks)
    assert {b.branch for b in store.branches("signup")} >= {"main", "retry"}


def test_checkpoints_and_run_from_in_a_daemon_session(offshoot_daemon: DaemonHandle, client: Client) -> None:
    db = f"signup-{uuid.uuid4().hex[:8]}"
    with WorkflowForks.session(offshoot_daemon.sock, db) as forks:
        run_recipe(forks)
    assert [s for s in client.sessions() if s.db == db] == []


def test_forking_at_a_name_taken_keeps_the_offshoot_code(store: Store) -> None:
    async def run() -> None:
        with WorkflowForks.at_rest(store, "signup") as forks:
            await answer_with(forks, Signup(forks.path, timeout=30).run(), "ada")
            with pytest.raises(OffshootError) as e:
                await forks.fork_at(forks.checkpoints[0], "main")
            assert e.value.code == "ALREADY_EXISTS"

    asyncio.run(run())


def test_a_fork_promotes_only_onto_the_head_it_was_forked_from(store: Store) -> None:
    """Two forks of one workflow checkpoint both finish; the first promote lands, the second finds the base moved
    since its fork (BASE_MOVED) and changes nothing."""

    async def run() -> None:
        with WorkflowForks.at_rest(store, "signup") as forks:
            await answer_with(forks, Signup(forks.path, timeout=30).run(), "ada")
            asked = forks.checkpoints[0]
            first = await forks.fork_at(asked, "first", ttl="1h")
            second = await forks.fork_at(asked, "second", ttl="1h")
            await finish(first, asked, "grace")
            await finish(second, asked, "alan")
            await first.promote(force=True)
            assert log(forks.path) == ["pending", "name grace"]
            with pytest.raises(OffshootError) as e:
                await second.promote(force=True)
            assert e.value.code == "BASE_MOVED"
            assert log(forks.path) == ["pending", "name grace"], "the refused promote changed nothing"
            with pytest.raises(OffshootError) as e:
                await forks.promote()
            assert e.value.code == "INVALID_ARGUMENT"

    asyncio.run(run())


def test_a_fork_merges_row_by_row_into_the_branch_it_was_forked_from(store: Store) -> None:
    """A retry of the asked checkpoint answers otherwise than the run on main did: the same row written both ways
    (insert/insert) is listed and nothing merged until `prefer` picks a side. A second run, forked at the stop before
    that merge, adds rows of its own: they merge in beside it, where its promote finds the base moved."""

    async def run() -> None:
        with WorkflowForks.at_rest(store, "signup") as forks:
            await answer_with(forks, Signup(forks.path, timeout=30).run(), "ada")
            asked, stopped = forks.checkpoints
            retry = await forks.fork_at(asked, "retry", ttl="1h")
            again = await forks.fork_at(stopped, "again", ttl="1h")
            await finish(retry, asked, "grace")
            await answer_with(again, Signup(again.path, timeout=30).run(), "alan")

            held = await retry.merge(force=True)
            assert not held.applied
            assert [(c.table, c.kind, c.key, c.source, c.target) for c in held.conflicts] == [
                ("log", "insert/insert", {"id": 2}, {"id": 2, "entry": "name grace"}, {"id": 2, "entry": "name ada"})
            ]
            assert log(forks.path) == ["pending", "name ada"], "a merge held by its conflicts changed nothing"
            merged = await retry.merge(prefer="source", force=True)
            assert merged.applied
            assert merged.backup == "main-pre-merge"
            assert log(forks.path) == ["pending", "name grace"]

            with pytest.raises(OffshootError) as e:
                await again.promote(force=True)
            assert e.value.code == "BASE_MOVED"
            beside = await again.merge(force=True)
            assert beside.applied
            assert beside.conflicts == []
            assert log(forks.path) == ["pending", "name grace", "pending", "name alan"]
            with pytest.raises(OffshootError) as e:
                await forks.merge()
            assert e.value.code == "INVALID_ARGUMENT"

    asyncio.run(run())


def test_a_fork_merges_into_its_base_through_a_daemon(offshoot_daemon: DaemonHandle) -> None:
    """The same merge through a daemon: the base's own session closed first, the fork's captured writes merged."""
    db = f"signup-{uuid.uuid4().hex[:8]}"

    async def run() -> None:
        with WorkflowForks.session(offshoot_daemon.sock, db) as forks:
            await answer_with(forks, Signup(forks.path, timeout=30).run(), "ada")
            asked = forks.checkpoints[0]
            retry = await forks.fork_at(asked, "retry", ttl="1h")
        with retry:
            await finish(retry, asked, "grace")
            held = await retry.merge(force=True)
            assert [c.kind for c in held.conflicts] == ["insert/insert"]
            assert (await retry.merge(prefer="source", force=True)).applied
        with WorkflowForks.session(offshoot_daemon.sock, db, create=False) as merged:
            assert log(merged.path) == ["pending", "name grace"]

    asyncio.run(run())
