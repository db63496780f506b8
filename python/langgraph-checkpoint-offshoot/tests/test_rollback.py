"""rollback(to) restores one thread's state exactly (get_tuple and the whole history), in place, in every mode."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from daemon_process import Daemon
from graphs import log_app, thread
from offshoot import OffshootError

from langgraph_checkpoint_offshoot import AsyncOffshootSaver, OffshootSaver


def exercise_rollback(saver: OffshootSaver) -> None:
    config = thread("t")
    other = thread("other")
    app = log_app(saver)
    app.invoke({"log": [], "total": 0}, config)
    app.invoke({"log": [], "total": 3}, other)
    saver.checkpoint("good")
    good_tuple = saver.get_tuple(config)
    good_history = list(saver.list(config))
    good_other = list(saver.list(other))

    app.invoke({"log": [], "total": 50}, config)  # checkpointed below, then rolled back over
    saver.checkpoint("bad")
    app.invoke({"log": [], "total": 90}, config)  # never flushed
    saver.delete_thread("other")
    assert len(list(saver.list(config))) > len(good_history)

    saver.rollback("good")
    assert saver.get_tuple(config) == good_tuple
    assert list(saver.list(config)) == good_history
    assert list(saver.list(other)) == good_other, "every thread in the file goes back, not only one"

    # The graph compiled before the rollback keeps working on the restored state.
    assert app.invoke({"log": [], "total": 1}, config)["total"] == 2
    assert len(list(saver.list(config))) == len(good_history) + len(good_history)


def test_rollback_in_session_mode(daemon: Daemon, db_name: str) -> None:
    with OffshootSaver.session(daemon.socket, db_name) as saver:
        exercise_rollback(saver)


def test_rollback_at_rest(store: str) -> None:
    with OffshootSaver.at_rest(store, "app") as saver:
        exercise_rollback(saver)


def test_rollback_async(daemon: Daemon, db_name: str) -> None:
    async def run() -> None:
        config = thread("t")
        async with AsyncOffshootSaver.session(daemon.socket, db_name) as saver:
            app = log_app(saver)
            await app.ainvoke({"log": [], "total": 0}, config)
            await saver.checkpoint("good")
            good_tuple = await saver.aget_tuple(config)
            good_history = [t async for t in saver.alist(config)]
            await app.ainvoke({"log": [], "total": 40}, config)
            await saver.rollback("good")
            assert await saver.aget_tuple(config) == good_tuple
            assert [t async for t in saver.alist(config)] == good_history
            assert (await app.ainvoke({"log": [], "total": 4}, config))["total"] == 5

    asyncio.run(run())


@pytest.mark.parametrize("mode", ["session", "at_rest"])
def test_a_failed_rollback_leaves_the_saver_working_on_unchanged_state(
    mode: str, daemon: Daemon, store: str, db_name: str
) -> None:
    opener: Any = OffshootSaver.session if mode == "session" else OffshootSaver.at_rest
    with opener(daemon.socket if mode == "session" else store, db_name) as saver:
        config = thread("t")
        app = log_app(saver)
        app.invoke({"log": [], "total": 0}, config)
        saver.checkpoint("one")
        before = saver.get_tuple(config)
        with pytest.raises(OffshootError) as err:
            saver.rollback("no-such-checkpoint")
        assert err.value.code == "NOT_FOUND"
        assert saver.get_tuple(config) == before
        assert app.invoke({"log": [], "total": 1}, config)["total"] == 2
