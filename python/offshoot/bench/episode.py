"""The eval loop through the Python SDK: fork a checkpoint of a seed, open a session on the fork, write ten rows,
close the session (a flush), diff against the seed, destroy; and a JSON reload of the same data as the baseline.

    .venv-py/bin/python python/offshoot/bench/episode.py SOCKET DB CHECKPOINT TABLE N [JSON_FILE]

`make bench` runs it from packages/offshoot/bench/episode-bench.ts against the daemon that bench starts, and reads
the one JSON line it prints: every episode's time and each step's, in milliseconds, and (with JSON_FILE) the times
of reloading that file.
"""

from __future__ import annotations

import json
import sqlite3
import sys
import time

import offshoot

WARMUP = 3


def write_rows(path: str, table: str, n: int) -> None:
    """Ten single-row inserts in one transaction, as an agent's tool call would write them."""
    con = sqlite3.connect(path, timeout=5.0, isolation_level=None)
    try:
        con.execute("BEGIN")
        for i in range(n):
            con.execute(f'INSERT INTO "{table}"(k, body) VALUES (?, ?)', (f"episode-{i}", b"\x01" * 200))
        con.execute("COMMIT")
    finally:
        con.close()


def episode(client: offshoot.Client, db: str, checkpoint: str, table: str, name: str) -> dict[str, float]:
    """One episode, each step timed (ms)."""
    steps: dict[str, float] = {}
    t = time.perf_counter()

    def lap(step: str) -> None:
        nonlocal t
        now = time.perf_counter()
        steps[step] = (now - t) * 1000
        t = now

    client.fork(db, "main", name, from_checkpoint=checkpoint, ttl="1h")
    lap("fork")
    session = client.open(db, name)
    lap("open")
    write_rows(session.path, table, 10)
    lap("write")
    session.close()  # flushes what was written; the diff then reads the fork's clean checkout in place
    lap("close")
    d = client.diff(f"{db}@main@{checkpoint}", f"{db}@{name}")
    lap("diff")
    added = sum(len(tb.added) for tb in d.tables)
    if added != 10:
        raise SystemExit(f"episode {name}: the diff shows {added} added rows, not 10")
    client.destroy(db, name)
    lap("destroy")
    steps["episode"] = sum(steps.values())
    return steps


def json_reload(path: str, n: int) -> list[float]:
    """Reloading the same data from JSON, as a benchmark that resets by reading its database file does."""
    out = []
    for _ in range(n):
        t = time.perf_counter()
        with open(path, encoding="utf-8") as f:
            json.load(f)
        out.append((time.perf_counter() - t) * 1000)
    return out


def main() -> None:
    """Runs N episodes after a short warm-up and prints one JSON line."""
    sock, db, checkpoint, table, n = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
    json_file = sys.argv[6] if len(sys.argv) > 6 else None
    result: dict[str, object] = {}
    with offshoot.connect(sock, timeout=600.0) as client:
        for i in range(WARMUP):
            episode(client, db, checkpoint, table, f"py-warm-{i}")
        runs = [episode(client, db, checkpoint, table, f"py-ep-{i}") for i in range(n)]
    result["steps"] = {k: [r[k] for r in runs] for k in runs[0]}
    if json_file is not None:
        json_reload(json_file, WARMUP)
        result["json_reload"] = json_reload(json_file, n)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
