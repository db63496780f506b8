"""`copy_thread`, `delete_for_runs` and `prune` on the stock SQLite saver's own tables, which it leaves unimplemented.

Each operation is written once, as a plan: a generator that yields SQL statements and is sent each one's rows. The
sync saver runs a plan on the stock `SqliteSaver`'s connection, the async saver on `AsyncSqliteSaver`'s, each under
that saver's own lock and in one transaction, so both savers share one implementation of every operation.
"""

from __future__ import annotations

import json
from collections.abc import Generator, Sequence
from typing import Any

from offshoot import OffshootError

Row = tuple[Any, ...]
Statement = tuple[str, tuple[Any, ...]]
Plan = Generator[Statement, list[Row], None]

STRATEGIES = ("keep_latest", "delete")

_CHECKPOINT_COLUMNS = "checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata"
_WRITE_COLUMNS = "checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, value"
# Writes whose checkpoint is gone: the stock schema has no foreign key to cascade them.
_ORPHAN_WRITES = (
    "DELETE FROM writes WHERE thread_id IN (SELECT value FROM json_each(?)) "
    "AND NOT EXISTS (SELECT 1 FROM checkpoints c WHERE c.thread_id = writes.thread_id "
    "AND c.checkpoint_ns = writes.checkpoint_ns AND c.checkpoint_id = writes.checkpoint_id)"
)


def copy_thread(source_thread_id: str, target_thread_id: str) -> Plan:
    """Every checkpoint of the source thread, in every namespace, with its metadata and pending writes, copied to
    the target thread (whose rows with the same ids are replaced); the source is left as it was."""
    src, dst = str(source_thread_id), str(target_thread_id)
    yield (
        f"INSERT OR REPLACE INTO checkpoints (thread_id, {_CHECKPOINT_COLUMNS}) "
        f"SELECT ?, {_CHECKPOINT_COLUMNS} FROM checkpoints WHERE thread_id = ?",
        (dst, src),
    )
    yield (
        f"INSERT OR REPLACE INTO writes (thread_id, {_WRITE_COLUMNS}) "
        f"SELECT ?, {_WRITE_COLUMNS} FROM writes WHERE thread_id = ?",
        (dst, src),
    )


def delete_for_runs(run_ids: Sequence[str]) -> Plan:
    """Every checkpoint whose metadata names one of `run_ids` (the `run_id` LangGraph records), in every thread and
    namespace, and the writes pending on them."""
    runs = json.dumps([str(r) for r in run_ids])
    rows = yield (
        "SELECT DISTINCT thread_id FROM checkpoints "
        "WHERE json_extract(CAST(metadata AS TEXT), '$.run_id') IN (SELECT value FROM json_each(?))",
        (runs,),
    )
    yield (
        "DELETE FROM checkpoints "
        "WHERE json_extract(CAST(metadata AS TEXT), '$.run_id') IN (SELECT value FROM json_each(?))",
        (runs,),
    )
    yield (_ORPHAN_WRITES, (json.dumps([r[0] for r in rows]),))


def prune(thread_ids: Sequence[str], strategy: str) -> Plan:
    """`delete`: every checkpoint and write of the threads. `keep_latest`: per thread and namespace the latest
    checkpoint, with the ancestors its delta channels still need (the metadata's `counters_since_delta_snapshot`
    says how many supersteps back their last snapshot is), and their pending writes; everything else goes."""
    if strategy not in STRATEGIES:
        raise OffshootError(
            f"prune: unknown strategy {strategy!r}",
            "INVALID_ARGUMENT",
            f"use one of {', '.join(STRATEGIES)}",
        )
    threads = json.dumps([str(t) for t in thread_ids])
    if strategy == "delete":
        yield ("DELETE FROM checkpoints WHERE thread_id IN (SELECT value FROM json_each(?))", (threads,))
        yield ("DELETE FROM writes WHERE thread_id IN (SELECT value FROM json_each(?))", (threads,))
        return
    rows = yield (
        "SELECT thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, "
        "json_extract(CAST(metadata AS TEXT), '$.counters_since_delta_snapshot') "
        "FROM checkpoints WHERE thread_id IN (SELECT value FROM json_each(?))",
        (threads,),
    )
    for (thread, ns), ids in _kept(rows).items():
        yield (
            "DELETE FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ? "
            "AND checkpoint_id NOT IN (SELECT value FROM json_each(?))",
            (thread, ns, json.dumps(sorted(ids))),
        )
    yield (_ORPHAN_WRITES, (threads,))


def _kept(rows: list[Row]) -> dict[tuple[str, str], set[str]]:
    """Per (thread, namespace): the latest checkpoint id and the parent chain its delta channels reach back over."""
    parent: dict[tuple[str, str, str], str | None] = {}
    latest: dict[tuple[str, str], tuple[str, int]] = {}
    for thread, ns, checkpoint_id, parent_id, counters in rows:
        parent[(thread, ns, checkpoint_id)] = parent_id
        if (thread, ns) not in latest or checkpoint_id > latest[(thread, ns)][0]:
            latest[(thread, ns)] = (checkpoint_id, _supersteps_since_snapshot(counters))
    kept: dict[tuple[str, str], set[str]] = {}
    for (thread, ns), (checkpoint_id, depth) in latest.items():
        ids = kept.setdefault((thread, ns), set())
        current: str | None = checkpoint_id
        # The snapshot sits `depth` supersteps back; one more ancestor keeps the walk's stopping point too.
        for _ in range(depth + 2):
            if current is None or current in ids:
                break
            ids.add(current)
            current = parent.get((thread, ns, current))
    return kept


def _supersteps_since_snapshot(counters: object) -> int:
    # JSON {channel: [updates, supersteps]} when the graph has delta channels; absent (NULL) otherwise.
    if not isinstance(counters, str):
        return -1
    try:
        parsed = json.loads(counters)
    except ValueError:
        return -1
    steps = [c[1] for c in parsed.values() if isinstance(c, list) and len(c) == 2 and isinstance(c[1], int)]
    return max(steps, default=-1)
