"""An eval loop on offshoot: seed a database once, fork it per attempt, score each attempt, keep the winner.

    python examples/python-eval/eval_loop.py                 # starts a throwaway daemon on a temp store
    python examples/python-eval/eval_loop.py --socket S      # uses the daemon already serving on S

Each attempt is an "agent" cleaning up an orders table in its own copy-on-write fork of the seed, written with the
stock sqlite3 module. A plain function scores the result; the best attempt is promoted onto main and the others are
destroyed (their TTL would reap them anyway).
"""

from __future__ import annotations

import argparse
import sqlite3
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import offshoot
from offshoot.binary import require_binary
from offshoot.daemon import start_daemon

SEED = """
CREATE TABLE orders(id INTEGER PRIMARY KEY, customer TEXT NOT NULL, total_cents INTEGER NOT NULL, status TEXT);
INSERT INTO orders(customer, total_cents, status) VALUES
  ('ada', 1200, 'paid'), ('ada', 1200, 'paid'), ('bob', 500, NULL),
  ('cy', 9900, 'refunded'), ('dee', 300, 'paid'), ('bob', 500, NULL);
"""
"""Two exact duplicate orders, two orders with no status: the task is to dedupe and mark them 'pending'."""

Attempt = Callable[[sqlite3.Connection], None]


def careless(db: sqlite3.Connection) -> None:
    """Deletes every order without a status instead of fixing it."""
    db.execute("DELETE FROM orders WHERE status IS NULL")


def thorough(db: sqlite3.Connection) -> None:
    """Removes exact duplicates, then marks the rest pending."""
    db.execute("DELETE FROM orders WHERE id NOT IN (SELECT min(id) FROM orders GROUP BY customer, total_cents, status)")
    db.execute("UPDATE orders SET status = 'pending' WHERE status IS NULL")


def half_done(db: sqlite3.Connection) -> None:
    """Marks orders pending but leaves the duplicates."""
    db.execute("UPDATE orders SET status = 'pending' WHERE status IS NULL")


ATTEMPTS: dict[str, Attempt] = {"careless": careless, "thorough": thorough, "half-done": half_done}


def score(path: str) -> float:
    """1.0 for a clean table: no duplicates, no missing status, every customer's distinct orders kept."""
    conn = sqlite3.connect(path)
    try:
        rows = conn.execute("SELECT customer, total_cents, status FROM orders").fetchall()
    finally:
        conn.close()
    wanted = {("ada", 1200, "paid"), ("bob", 500, "pending"), ("cy", 9900, "refunded"), ("dee", 300, "paid")}
    kept = len(wanted & set(rows)) / len(wanted)
    duplicates = len(rows) - len(set(rows))
    missing_status = sum(1 for r in rows if r[2] is None)
    return max(0.0, kept - 0.25 * duplicates - 0.25 * missing_status)


@dataclass
class Outcome:
    """Each attempt's score, the winning attempt and the branch it was promoted onto."""

    scores: dict[str, float]
    winner: str
    promoted_txid: int


def run_eval(client: offshoot.Client, db: str = "shop") -> Outcome:
    """Seeds `db`, runs every attempt in its own fork of the seed, promotes the best onto main."""
    client.create(db)
    with client.open(db) as seed:
        conn = sqlite3.connect(seed.path)
        conn.executescript(f"BEGIN;{SEED}COMMIT;")
        conn.close()
        seed.flush("seed")

    scores: dict[str, float] = {}
    for name, attempt in ATTEMPTS.items():
        branch = f"attempt-{name}"
        client.fork(db, "main", branch, from_checkpoint="seed", ttl="1h", meta={"attempt": name})
        with client.open(db, branch) as session:
            conn = sqlite3.connect(session.path)
            with conn:
                attempt(conn)
            conn.close()
            scores[name] = score(session.path)
            session.flush("scored", meta={"score": f"{scores[name]:.2f}"})

    winner = max(scores, key=lambda n: scores[n])
    # main is protected, so keeping the winner is a deliberate, forced promote.
    txid = client.promote(db, f"attempt-{winner}", "main", force=True)
    for name in ATTEMPTS:
        client.destroy(db, f"attempt-{name}", force=True)
    return Outcome(scores, winner, txid)


def main() -> None:
    """Runs the eval against --socket, or against a throwaway daemon of its own."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--socket", help="the socket of a running `offshoot serve`")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="offshoot-eval-") as tmp:
        daemon = None if args.socket else start_daemon(require_binary(), Path(tmp))
        try:
            with offshoot.connect(args.socket if daemon is None else daemon.sock) as client:
                outcome = run_eval(client)
        finally:
            if daemon is not None:
                daemon.stop()
    for name, s in outcome.scores.items():
        print(f"{name:10} score={s:.2f}{'  <- promoted onto main' if name == outcome.winner else ''}")


if __name__ == "__main__":
    main()
