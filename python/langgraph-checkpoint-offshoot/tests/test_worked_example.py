"""The documented worked example (seed a thread, fork per attempt, keep the winner) verbatim in session mode, its
rollback snippet, and the same loop at rest and async."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any, TypedDict

import pytest
from daemon_process import Daemon, run_cli, start_daemon
from graphs import counter_app, thread
from langgraph.graph import END, START, StateGraph
from offshoot import Store

from langgraph_checkpoint_offshoot import AsyncOffshootSaver, OffshootSaver


@pytest.fixture
def seed_daemon(workdir: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[Daemon]:
    """The documented set-up, as written: `offshoot -store ./store init`, then `serve -socket ./offshoot.sock`."""
    monkeypatch.chdir(workdir)
    run_cli("./store", "init")
    d = start_daemon("./store", "./offshoot.sock", cwd=workdir)
    yield d
    d.stop()


def test_the_worked_example_runs_verbatim(seed_daemon: Daemon) -> None:
    class State(TypedDict):
        n: int

    def build_app(saver: OffshootSaver) -> Any:
        def step(state: State) -> dict[str, int]:
            return {"n": state["n"] + 1}

        g = StateGraph(State)
        g.add_node("step", step)
        g.add_edge(START, "step")
        g.add_edge("step", END)
        return g.compile(checkpointer=saver)

    config: Any = {"configurable": {"thread_id": "eval-thread"}}

    # 1. Seed the thread on main and make the seed durable.
    seed = OffshootSaver.session("./offshoot.sock", "evals")  # db "evals", branch "main"
    build_app(seed).invoke({"n": 0}, config)
    seed.checkpoint("seeded")

    # 2. Fork one branch per attempt.
    attempts = [seed.fork_thread(f"attempt-{i}", ttl="1h") for i in range(3)]
    seed.close()  # promote repoints main's checkout; main's session must be closed

    # 3. Run the graph independently on every attempt.
    results = []
    for saver in attempts:
        out = build_app(saver).invoke({"n": 1}, config)
        results.append((out["n"], saver))

    # 4. Keep the winner: promote its state onto main. The losers just expire (TTL), or destroy them now.
    best, winner = max(results, key=lambda r: r[0])
    winner.promote("main", force=True)  # main is protected by default
    for _, saver in results:
        saver.destroy() if saver is not winner else saver.close()

    # main now holds the winning attempt's full LangGraph thread state.
    with OffshootSaver.session("./offshoot.sock", "evals") as main:
        tup = main.get_tuple(config)
        assert tup.checkpoint["channel_values"]["n"] == best  # type: ignore[union-attr]

        # Beyond the example's own assertion: the thread's whole history came along, seed run and attempt run.
        assert best == 2
        history = list(main.list(config))
        assert [h.checkpoint["channel_values"].get("n") for h in history] == [2, 1, 1, 1, 0, None]

    branches = {b.branch for b in Store("./store").branches("evals")}
    assert "attempt-0" in branches
    assert not {"attempt-1", "attempt-2"} & branches, "the losers were destroyed"


def test_the_rollback_snippet_restores_the_thread(daemon: Daemon, db_name: str) -> None:
    config: Any = thread("t")
    with OffshootSaver.session(daemon.socket, db_name) as saver:
        app = counter_app(saver)
        app.invoke({"n": 10}, config)
        risky_input = {"n": 1000}
        before = saver.get_tuple(config)

        saver.checkpoint("before-risky-step")
        app.invoke(risky_input, config)
        it_went_badly = app.get_state(config).values["n"] > 100
        if it_went_badly:
            saver.rollback("before-risky-step")  # thread state exactly restored

        assert it_went_badly
        assert saver.get_tuple(config) == before
        assert app.get_state(config).values == {"n": 11}, "the compiled graph is still valid after the rollback"
        app.invoke({"n": 20}, config)
        assert app.get_state(config).values == {"n": 21}


def keep_the_winner_at_rest(store: str) -> None:
    config = thread("eval-thread")
    seed = OffshootSaver.at_rest(store, "evals", "main")
    counter_app(seed).invoke({"n": 0}, config)
    seed.checkpoint("seeded")
    attempts = [seed.fork_thread(f"attempt-{i}", ttl="1h") for i in range(3)]
    seed.close()

    results = []
    for i, saver in enumerate(attempts):
        out = counter_app(saver).invoke({"n": i}, config)  # attempt i scores i + 1
        results.append((out["n"], saver))
    best, winner = max(results, key=lambda r: r[0])
    winner.promote("main", force=True)
    for _, saver in results:
        saver.destroy() if saver is not winner else saver.close()

    with OffshootSaver.at_rest(store, "evals", "main") as main:
        tup = main.get_tuple(config)
        assert tup is not None
        assert tup.checkpoint["channel_values"]["n"] == best == 3


def test_the_same_loop_at_rest_needs_no_daemon(store: str) -> None:
    keep_the_winner_at_rest(store)
    names = {b.branch for b in Store(store).branches("evals")}
    assert "attempt-2" in names
    assert not {"attempt-0", "attempt-1"} & names


def test_the_same_loop_async_in_session_mode(daemon: Daemon, db_name: str) -> None:
    async def loop() -> None:
        config = thread("eval-thread")
        seed = await AsyncOffshootSaver.session(daemon.socket, db_name)
        await counter_app(seed).ainvoke({"n": 0}, config)
        await seed.checkpoint("seeded")
        attempts = [await seed.fork_thread(f"attempt-{i}", ttl="1h") for i in range(3)]
        await seed.aclose()

        outs = await asyncio.gather(*(counter_app(s).ainvoke({"n": i * 10}, config) for i, s in enumerate(attempts)))
        results = [(out["n"], s) for out, s in zip(outs, attempts, strict=True)]
        best, winner = max(results, key=lambda r: r[0])
        await winner.promote("main", force=True)
        for _, saver in results:
            await (saver.destroy() if saver is not winner else saver.close())

        async with AsyncOffshootSaver.session(daemon.socket, db_name) as main:
            tup = await main.aget_tuple(config)
            assert tup is not None
            assert tup.checkpoint["channel_values"]["n"] == best == 21

    asyncio.run(loop())


def test_the_same_loop_async_at_rest(store: str) -> None:
    async def loop() -> None:
        config = thread("eval-thread")
        async with AsyncOffshootSaver.at_rest(store, "evals") as seed:
            await counter_app(seed).ainvoke({"n": 0}, config)
            await seed.checkpoint("seeded")
            attempts = [await seed.fork_thread(f"attempt-{i}", ttl="1h") for i in range(2)]
        results = [((await counter_app(s).ainvoke({"n": 5 - i}, config))["n"], s) for i, s in enumerate(attempts)]
        best, winner = max(results, key=lambda r: r[0])
        await winner.promote("main", force=True)
        for _, saver in results:
            await (saver.destroy() if saver is not winner else saver.close())
        async with AsyncOffshootSaver.at_rest(store, "evals") as main:
            tup = await main.aget_tuple(config)
            assert tup is not None
            assert tup.checkpoint["channel_values"]["n"] == best == 6

    asyncio.run(loop())
