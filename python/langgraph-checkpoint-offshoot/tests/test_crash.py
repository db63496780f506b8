"""kill -9 of the daemon after a checkpoint(): the checkpointed thread round-trips through a new daemon exactly, and
the writes made after it are never half there: the reopened branch holds exactly the checkpoint, and the new daemon
keeps the unflushed writes aside as the undo branch `main-pre-reopen`, saying so."""

from __future__ import annotations

import sqlite3
import time

from daemon_process import init_store, start_daemon
from graphs import log_app, thread
from offshoot import OffshootError, connect

from langgraph_checkpoint_offshoot import OffshootSaver

# A short lease, so the new daemon can take the branch over from the killed one soon after its lease runs out.
LEASE = {"OFFSHOOT_LEASE_TTL_MS": "500"}


def reopen(socket: str, db: str) -> OffshootSaver:
    """Opens the branch once the dead daemon's lease has run out (the one condition worth waiting for here)."""
    deadline = time.monotonic() + 20
    while True:
        try:
            return OffshootSaver.session(socket, db)
        except OffshootError as e:
            if e.code != "LEASE_HELD" or time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def test_a_checkpoint_survives_kill_9_and_later_writes_are_kept_aside(workdir: str) -> None:
    store = init_store(workdir)
    first = start_daemon(store, f"{workdir}/a.sock", env=LEASE)
    config = thread("t")
    try:
        saver = OffshootSaver.session(first.socket, "app")
        app = log_app(saver)
        app.invoke({"log": [], "total": 0}, config)
        app.invoke({"log": [], "total": 10}, config)
        saver.checkpoint("kept")
        kept_tuple = saver.get_tuple(config)
        kept_history = list(saver.list(config))

        app.invoke({"log": [], "total": 100}, config)  # committed to the checkout, never flushed
        assert app.get_state(config).values["total"] == 101
        first.kill9()
    finally:
        first.stop()

    second = start_daemon(store, f"{workdir}/b.sock", env=LEASE)
    try:
        with reopen(second.socket, "app") as back:
            assert back.get_tuple(config) == kept_tuple
            assert list(back.list(config)) == kept_history
            assert log_app(back).get_state(config).values == {"log": ["plan 0", "act", "plan 10", "act"], "total": 11}
            with sqlite3.connect(back.path) as db:
                assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
                n_checkpoints = db.execute("SELECT count(*) FROM checkpoints").fetchone()[0]
                assert n_checkpoints == len(kept_history), "no checkpoint of the lost run is half there"
            log_app(back).invoke({"log": [], "total": 7}, config)
            back.checkpoint("after-crash")
        assert "main-pre-reopen" in second.stderr_tail(50), second.stderr_tail(50)
        with connect(second.socket) as client:
            assert "main-pre-reopen" in [b.branch for b in client.branches("app")]
    finally:
        second.stop()
