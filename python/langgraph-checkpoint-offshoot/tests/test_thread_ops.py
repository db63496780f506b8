"""`copy_thread`, `delete_for_runs` and `prune` on real graphs, past what the conformance suite checks: a pruned
thread whose graph uses a `DeltaChannel` still reads back whole, a copied thread resumes on its own, the plan is
atomic, and the sync and the async saver share it."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Sequence
from typing import Annotated, Any, TypedDict

import pytest
from graphs import log_app, thread
from langgraph.channels.delta import DeltaChannel
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from offshoot import OffshootError

from langgraph_checkpoint_offshoot import AsyncOffshootSaver, OffshootSaver


def _extend(state: list[str], writes: Sequence[list[str]]) -> list[str]:
    return [*state, *(item for batch in writes for item in batch)]


class Notes(TypedDict):
    notes: Annotated[list[str], DeltaChannel(_extend, snapshot_frequency=3)]


def notes_app(saver: BaseCheckpointSaver[Any]) -> CompiledStateGraph[Any, Any, Any, Any]:
    """START -> note -> END: every run appends one note to a delta channel (a snapshot every third update)."""

    def note(state: Notes) -> dict[str, Any]:
        return {"notes": [f"note {len(state['notes'])}"]}

    g = StateGraph(Notes)
    g.add_node("note", note)
    g.add_edge(START, "note")
    g.add_edge("note", END)
    return g.compile(checkpointer=saver)


def checkpoint_count(saver: OffshootSaver, thread_id: str) -> int:
    return len(list(saver.list(thread(thread_id))))


def test_prune_keeps_what_a_delta_channel_needs(store: str) -> None:
    with OffshootSaver.at_rest(store, "delta") as saver:
        app = notes_app(saver)
        for _ in range(5):
            app.invoke({"notes": []}, thread("t"))
        want = app.get_state(thread("t")).values["notes"]
        assert len(want) == 5
        before = checkpoint_count(saver, "t")
        saver.prune(["t"])
        after = checkpoint_count(saver, "t")
        # Fewer checkpoints, yet the delta channel still reconstructs from the ones kept.
        assert 1 < after < before
        assert app.get_state(thread("t")).values["notes"] == want
        app.invoke({"notes": []}, thread("t"))
        assert app.get_state(thread("t")).values["notes"] == [*want, "note 5"]


def test_prune_keeps_only_the_latest_without_delta_channels(store: str) -> None:
    with OffshootSaver.at_rest(store, "plain") as saver:
        app = log_app(saver)
        for _ in range(3):
            app.invoke({"log": [], "total": 0}, thread("t"))
        app.invoke({"log": [], "total": 0}, thread("other"))
        latest = app.get_state(thread("t"))
        saver.prune(["t"])
        assert checkpoint_count(saver, "t") == 1
        assert app.get_state(thread("t")).values == latest.values
        assert checkpoint_count(saver, "other") > 1
        saver.prune(["t", "other"], strategy="delete")
        assert checkpoint_count(saver, "t") == checkpoint_count(saver, "other") == 0
        with saver.cursor() as cur:
            assert cur.execute("SELECT count(*) FROM writes").fetchone() == (0,)


def test_copy_thread_resumes_on_its_own_and_delete_for_runs_takes_one_run(store: str) -> None:
    with OffshootSaver.at_rest(store, "copy") as saver:
        app = log_app(saver)
        app.invoke({"log": [], "total": 0}, thread("src"))
        saver.copy_thread("src", "dst")
        assert app.get_state(thread("dst")).values == app.get_state(thread("src")).values
        # LangGraph records a configurable `run_id` in each checkpoint's metadata.
        app.invoke({"log": [], "total": 5}, {"configurable": {"thread_id": "dst", "run_id": "run-b"}})
        assert app.get_state(thread("src")).values["total"] == 1
        assert app.get_state(thread("dst")).values["total"] == 6
        copied = checkpoint_count(saver, "src")
        assert {t.metadata.get("run_id") for t in saver.list(thread("dst"))} == {None, "run-b"}
        saver.delete_for_runs(["run-b"])
        assert {t.metadata.get("run_id") for t in saver.list(thread("dst"))} == {None}
        assert checkpoint_count(saver, "dst") == copied
        assert app.get_state(thread("dst")).values["total"] == 1


def test_an_unknown_strategy_changes_nothing(store: str) -> None:
    with OffshootSaver.at_rest(store, "strategy") as saver:
        log_app(saver).invoke({"log": [], "total": 0}, thread("t"))
        before = checkpoint_count(saver, "t")
        with pytest.raises(OffshootError) as e:
            saver.prune(["t"], strategy="keep_oldest")
        assert e.value.code == "INVALID_ARGUMENT"
        assert checkpoint_count(saver, "t") == before


def test_a_failing_plan_is_rolled_back_whole(store: str) -> None:
    with OffshootSaver.at_rest(store, "atomic") as saver:
        log_app(saver).invoke({"log": [], "total": 0}, thread("src"))
        with saver.cursor() as cur:
            # Copying the writes fails after the checkpoints were copied: the copy must not half-land.
            cur.execute("CREATE TRIGGER no_writes BEFORE INSERT ON writes BEGIN SELECT RAISE(ABORT, 'no'); END")
        with pytest.raises(sqlite3.IntegrityError):
            saver.copy_thread("src", "dst")
        assert checkpoint_count(saver, "dst") == 0


def test_the_async_saver_runs_the_same_plans(store: str) -> None:
    async def run() -> None:
        async with AsyncOffshootSaver.at_rest(store, "async-ops") as saver:
            app = notes_app(saver)
            for _ in range(4):
                await app.ainvoke({"notes": []}, thread("t"))
            await saver.acopy_thread("t", "u")
            await saver.aprune(["t", "u"])
            for t in ("t", "u"):
                assert len((await app.aget_state(thread(t))).values["notes"]) == 4
            # The sync methods work from another thread, as the stock async saver's do.
            await asyncio.to_thread(saver.prune, ["u"], strategy="delete")
            assert [x async for x in saver.alist(thread("u"))] == []
            with pytest.raises(asyncio.InvalidStateError):
                saver.copy_thread("t", "v")

    asyncio.run(run())
