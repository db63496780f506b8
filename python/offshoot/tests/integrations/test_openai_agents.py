"""The OpenAI Agents SDK adapter against the real `openai-agents` package, driven by a scripted `Model`: the
session's items live on a branch (checkpoint, fork, roll back, promote), and ForkPerRun runs an agent in a fork of
the application database, a checkpoint after every tool call, kept or promoted by a verdict."""

from __future__ import annotations

import asyncio
import sqlite3
import uuid
from pathlib import Path
from typing import Any

import pytest
from agents import Agent, RunContextWrapper, RunHooks, Runner, Session, function_tool
from conftest import read_notes, read_rows, write_note
from scripted_model import ScriptedModel

from offshoot import Client, OffshootError, Store
from offshoot.daemon import DaemonHandle
from offshoot.integrations.openai_agents import ForkPerRun, OffshootSession, RunFork


def texts(items: list[Any]) -> list[str]:
    """The user inputs and assistant texts of a session's items, in order."""
    out = []
    for item in items:
        content = item.get("content")
        if isinstance(content, str):
            out.append(content)
        elif isinstance(content, list):
            out.extend(c["text"] for c in content if isinstance(c, dict) and "text" in c)
    return out


def chat_agent(*answers: str) -> Agent[Any]:
    return Agent(name="chat", model=ScriptedModel(list(answers)))


def stored_messages(store: Store, db: str, branch: str, checkpoint: str) -> int:
    """Rows of the SDK's own messages table in a durable checkpoint, read from a read-only file."""
    conn = sqlite3.connect(store.checkout_at(db, branch, checkpoint))
    try:
        return int(conn.execute("SELECT count(*) FROM agent_messages").fetchone()[0])
    finally:
        conn.close()


def test_the_session_keeps_its_items_on_a_branch_at_rest(store: Store) -> None:
    async def run() -> None:
        with OffshootSession.at_rest(store, "chat", session_id="user-1") as session:
            assert isinstance(session, Session)
            await Runner.run(chat_agent("hello"), "hi", session=session)
            await session.checkpoint("greeted")
            assert stored_messages(store, "chat", "main", "greeted") == 2
            await Runner.run(chat_agent("a joke"), "tell a joke", session=session)
            assert texts(await session.get_items()) == ["hi", "hello", "tell a joke", "a joke"]

            trial = await session.fork("trial", ttl="1h")
            await trial.add_items([{"role": "user", "content": "only on the fork"}])
            assert len(await trial.get_items()) == 5
            assert len(await session.get_items()) == 4

            await session.rollback("greeted")
            assert texts(await session.get_items()) == ["hi", "hello"]
            # The SDK keeps using this object: the next turn sees the rolled-back history.
            model = ScriptedModel(["again"])
            await Runner.run(Agent(name="chat", model=model), "once more", session=session)
            assert texts(model.inputs[0]) == ["hi", "hello", "once more"]

            await trial.checkpoint("done")
            trial.close()
        promoted = OffshootSession.at_rest(store, "chat", "trial", session_id="user-1")
        await promoted.promote("main", force=True)
        promoted.close()
        with OffshootSession.at_rest(store, "chat", session_id="user-1") as main:
            assert texts(await main.get_items())[-1] == "only on the fork"

    asyncio.run(run())


def test_the_session_in_a_daemon_session(offshoot_daemon: DaemonHandle, client: Client) -> None:
    db = f"chat-{uuid.uuid4().hex[:8]}"

    async def run() -> None:
        session = OffshootSession.session(offshoot_daemon.sock, db, session_id="s")
        await Runner.run(chat_agent("one"), "first", session=session)
        await session.checkpoint("one")
        await Runner.run(chat_agent("two"), "second", session=session)
        assert await session.pop_item() is not None
        await session.rollback("one")
        assert texts(await session.get_items()) == ["first", "one"]
        fork = await session.fork("f", ttl="30m")
        assert fork.branch == "f"
        assert fork.session_id == "s"
        await fork.clear_session()
        assert await fork.get_items() == []
        assert texts(await session.get_items()) == ["first", "one"]
        await fork.destroy()
        session.close()
        with pytest.raises(OffshootError) as closed:
            await session.get_items()
        assert closed.value.code == "CLOSED"

    asyncio.run(run())
    assert {b.branch for b in client.branches(db)} >= {"main"}
    assert "f" not in {b.branch for b in client.branches(db)}
    assert [s for s in client.sessions() if s.db == db] == []


def test_session_errors_keep_the_offshoot_code(store: Store) -> None:
    async def run() -> None:
        with OffshootSession.at_rest(store, "chat", session_id="x") as session:
            with pytest.raises(OffshootError) as e:
                await session.rollback("never-recorded")
            assert e.value.code == "NOT_FOUND"
            # Still usable after the failed verb.
            await session.add_items([{"role": "user", "content": "still here"}])
            assert len(await session.get_items()) == 1
            with pytest.raises(OffshootError) as e:
                await session.fork("main")
            assert e.value.code == "ALREADY_EXISTS"

    asyncio.run(run())


@function_tool
def add_note(ctx: RunContextWrapper[RunFork], body: str) -> str:
    """Stores a note in the application database."""
    write_note(ctx.context.path, body)
    return "stored"


def note_agent() -> Agent[RunFork]:
    script = ScriptedModel([[("add_note", {"body": "first"})], [("add_note", {"body": "second"})], "two notes"])
    return Agent(name="notes", model=script, tools=[add_note])


def test_fork_per_run_promotes_on_a_good_verdict(store: Store) -> None:
    store.create("app")
    seen: list[RunFork] = []

    def verdict(result: Any, fork: RunFork) -> Any:
        seen.append(fork)
        assert result.final_output == "two notes"
        assert read_notes(fork.path) == ["first", "second"]
        assert read_notes(store.checkout("app")) == []
        return "promote"

    runs = ForkPerRun.at_rest(store, "app", force=True)
    done = runs.run_sync(note_agent(), "take two notes", verdict=verdict)
    assert done.verdict == "promote"
    assert done.promoted_txid is not None
    assert done.fork.checkpoints == ["start", "tool-1-add_note", "tool-2-add_note"]
    assert read_notes(store.checkout("app")) == ["first", "second"]
    assert done.fork.branch not in {b.branch for b in store.branches("app")}


def test_each_action_can_be_rolled_back_before_the_verdict(offshoot_daemon: DaemonHandle, client: Client) -> None:
    db = f"app-{uuid.uuid4().hex[:8]}"
    client.create(db)

    async def keep_the_first_note(result: Any, fork: RunFork) -> Any:
        fork.rollback("tool-1-add_note")
        assert read_notes(fork.path) == ["first"]
        return "promote"

    runs = ForkPerRun.session(offshoot_daemon.sock, db, force=True, ttl="10m")
    done = asyncio.run(runs.run(note_agent(), "notes", verdict=keep_the_first_note))
    assert done.fork.checkpoints == ["start", "tool-1-add_note"]
    assert read_notes(client.checkout(db)) == ["first"]
    assert [s for s in client.sessions() if s.db == db] == []


def test_an_ephemeral_run_writes_nothing_it_does_not_keep(offshoot_daemon: DaemonHandle, client: Client) -> None:
    db = f"app-{uuid.uuid4().hex[:8]}"
    client.create(db)
    during: list[bool] = []

    def discard(result: Any, fork: RunFork) -> Any:
        during.append({b.branch: b.ephemeral for b in client.branches(db)}[fork.branch])
        fork.rollback("start")
        assert read_notes(fork.path) == []
        return "discard"

    runs = ForkPerRun.session(offshoot_daemon.sock, db, ephemeral=True, ttl="10m")
    gone = asyncio.run(runs.run(note_agent(), "notes", verdict=discard))
    assert during == [True], "the run's fork is ephemeral"
    assert gone.fork.checkpoints == ["start"], "an ephemeral run checkpoints nothing on its way"
    assert gone.fork.branch not in {b.branch for b in client.branches(db)}
    kept = asyncio.run(runs.run(note_agent(), "notes", verdict=lambda r, f: "keep"))
    info = {b.branch: b for b in client.branches(db)}[kept.fork.branch]
    assert info.ephemeral is False
    assert "kept" in info.checkpoints
    assert read_notes(client.checkout_at(db, kept.fork.branch, "kept")) == ["first", "second"]
    with pytest.raises(OffshootError) as e:
        ForkPerRun.at_rest(Store(Path("unused")), db, ephemeral=True).run_sync(
            note_agent(), "x", verdict=lambda r, f: "discard"
        )
    assert e.value.code == "UNSUPPORTED"


def test_keep_discard_a_failed_run_and_the_callers_hooks(store: Store) -> None:
    store.create("app")
    kept = ForkPerRun.at_rest(store, "app", prefix="keep-").run_sync(note_agent(), "x", verdict=lambda r, f: "keep")
    info = {b.branch: b for b in store.branches("app")}
    assert kept.fork.branch in info
    assert info[kept.fork.branch].ttl == "1h0m0s"
    assert "tool-2-add_note" in info[kept.fork.branch].checkpoints
    assert read_notes(store.checkout("app")) == []

    class Counting(RunHooks[Any]):
        tools = 0

        async def on_tool_end(self, context: Any, agent: Any, tool: Any, result: object) -> None:
            Counting.tools += 1

    gone = ForkPerRun.at_rest(store, "app").run_sync(
        note_agent(), "x", verdict=lambda r, f: "discard", hooks=Counting()
    )
    assert Counting.tools == 2
    assert gone.fork.branch not in {b.branch for b in store.branches("app")}

    broken = Agent(name="broken", model=ScriptedModel([[("add_note", {"body": "half"})]]), tools=[add_note])
    before = {b.branch for b in store.branches("app")}
    with pytest.raises(IndexError):
        ForkPerRun.at_rest(store, "app").run_sync(broken, "x", verdict=lambda r, f: "promote")
    left = {b.branch for b in store.branches("app")} - before
    assert len(left) == 1, "a run that raises keeps its fork for inspection"
    (branch,) = left
    assert read_notes(store.checkout("app", branch)) == ["half"]


def heads_holding(store: Store, db: str, note: str, tmp: Path) -> list[str]:
    """The branches of `db` whose durable head holds the note `note`."""
    out = []
    for b in store.branches(db):
        path = tmp / f"head-{b.branch}.db"
        store.export(db, b.branch, path, force=True)
        if note in read_notes(str(path)):
            out.append(b.branch)
    return out


def test_two_runs_promote_only_onto_the_head_they_forked(store: Store, tmp_path: Path) -> None:
    """Two runs fork the same head of the base; a human checkpoints the base while they run. Neither promote may
    replace the human's state: each finds the base moved since its fork, says so (base_moved) and keeps its fork."""
    store.create("app")
    runs = ForkPerRun.at_rest(store, "app", force=True)
    inner: list[Any] = []

    def first_verdict(result: Any, fork: RunFork) -> Any:
        def second_verdict(result: Any, fork: RunFork) -> Any:
            write_note(store.checkout("app"), "human")
            store.checkpoint("app", "main", "human")
            return "promote"

        inner.append(runs.run_sync(note_agent(), "x", verdict=second_verdict))
        return "promote"

    outer = runs.run_sync(note_agent(), "x", verdict=first_verdict)
    assert "main" in heads_holding(store, "app", "human", tmp_path), "the human's checkpoint is still the base's head"
    for done in (inner[0], outer):
        assert done.verdict == "promote"
        assert done.promoted_txid is None
        assert done.base_moved
        assert done.promote_error is not None
        assert done.promote_error.code == "BASE_MOVED"
        assert f"app@{done.fork.branch} is kept" in done.promote_error.message
        assert done.fork.branch in {b.branch for b in store.branches("app")}, "the run's fork is kept"


def test_a_run_promotes_onto_an_unmoved_base_and_a_later_one_finds_it_moved(store: Store) -> None:
    store.create("app")
    runs = ForkPerRun.at_rest(store, "app", force=True)
    inner: list[Any] = []

    def first_verdict(result: Any, fork: RunFork) -> Any:
        inner.append(runs.run_sync(note_agent(), "x", verdict=lambda r, f: "promote"))
        return "promote"

    outer = runs.run_sync(note_agent(), "x", verdict=first_verdict)
    assert inner[0].promoted_txid is not None
    assert not inner[0].base_moved
    assert inner[0].fork.branch not in {b.branch for b in store.branches("app")}
    assert outer.promoted_txid is None
    assert outer.base_moved
    assert outer.fork.branch in {b.branch for b in store.branches("app")}
    assert read_notes(store.checkout("app")) == ["first", "second"]


def test_a_promote_refused_lease_held_says_the_fork_is_kept(store: Store) -> None:
    store.create("app")

    def verdict(result: Any, fork: RunFork) -> Any:
        store.run("lease", "acquire", "app@main", "--ttl", "10m")
        return "promote"

    done = ForkPerRun.at_rest(store, "app", force=True).run_sync(note_agent(), "x", verdict=verdict)
    assert done.promoted_txid is None
    assert not done.base_moved
    assert done.promote_error is not None
    assert done.promote_error.code == "LEASE_HELD"
    assert "not promoted" in done.promote_error.message
    assert done.fork.branch in {b.branch for b in store.branches("app")}


def test_promoting_onto_protected_main_needs_force(store: Store) -> None:
    store.create("app")
    with pytest.raises(OffshootError) as e:
        ForkPerRun.at_rest(store, "app").run_sync(note_agent(), "x", verdict=lambda r, f: "promote")
    assert e.value.code == "PROTECTED"
    assert read_notes(store.checkout("app")) == []
    with pytest.raises(OffshootError) as e:
        ForkPerRun.at_rest(store, "app").run_sync(note_agent(), "x", verdict=lambda r, f: "ship it")  # type: ignore[arg-type,return-value]
    assert e.value.code == "INVALID_ARGUMENT"


def test_the_tools_read_an_own_context_built_from_the_fork(store: Store) -> None:
    store.create("app")

    @function_tool
    def where(ctx: RunContextWrapper[dict[str, str]]) -> str:
        """Says which database the run writes."""
        return ctx.context["db"]

    model = ScriptedModel([[("where", {})], "done"])
    agent: Agent[dict[str, str]] = Agent(name="where", model=model, tools=[where])
    done = ForkPerRun.at_rest(store, "app").run_sync(
        agent, "x", verdict=lambda r, f: "discard", context=lambda fork: {"db": fork.path}
    )
    tool_output = next(i for i in model.inputs[1] if isinstance(i, dict) and i.get("type") == "function_call_output")
    assert tool_output["output"] == done.fork.path
    assert read_rows(store.checkout("app")) == []
