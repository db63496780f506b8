"""The eval example runs end to end against a real daemon and keeps the best attempt."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

import offshoot
from offshoot.daemon import start_daemon

from eval_loop import ATTEMPTS, run_eval

HERE = Path(__file__).resolve().parent


def test_three_attempts_scored_and_the_winner_kept() -> None:
    with tempfile.TemporaryDirectory(prefix="offshoot-eval-test-") as tmp:
        daemon = start_daemon(os.environ["OFFSHOOT_BIN"], Path(tmp))
        try:
            with offshoot.connect(daemon.sock) as client:
                outcome = run_eval(client)
                assert set(outcome.scores) == set(ATTEMPTS)
                assert outcome.winner == "thorough"
                assert outcome.scores["thorough"] == 1.0
                assert max(s for n, s in outcome.scores.items() if n != "thorough") < 1.0
                branches = {b.branch: b for b in client.branches("shop")}
                # The losers are gone; promote kept main's previous head as a safety fork.
                assert set(branches) == {"main", "main-pre-promote"}
                assert branches["main"].head_txid == outcome.promoted_txid
                conn = sqlite3.connect(client.checkout_at("shop", "main", "promote"))
                statuses = sorted(r[0] for r in conn.execute("SELECT status FROM orders"))
                conn.close()
                assert statuses == ["paid", "paid", "pending", "refunded"]
        finally:
            daemon.stop()


def test_the_script_runs_with_its_own_daemon() -> None:
    proc = subprocess.run(
        [sys.executable, str(HERE / "eval_loop.py")], capture_output=True, text=True, check=False, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    assert "thorough   score=1.00  <- promoted onto main" in proc.stdout
