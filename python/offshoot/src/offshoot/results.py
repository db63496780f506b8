"""Typed results of the daemon ops and the at-rest verbs, built from their JSON."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .errors import BAD_RESPONSE, OffshootError

JsonObject = dict[str, Any]


def _str(d: JsonObject, key: str) -> str:
    v = d.get(key)
    return v if isinstance(v, str) else ""


def _int(d: JsonObject, key: str) -> int:
    v = d.get(key)
    return v if isinstance(v, int) and not isinstance(v, bool) else 0


def _strs(d: JsonObject, key: str) -> list[str]:
    v = d.get(key)
    return [x for x in v if isinstance(x, str)] if isinstance(v, list) else []


def _objs(d: JsonObject, key: str) -> list[JsonObject]:
    v = d.get(key)
    return [x for x in v if isinstance(x, dict)] if isinstance(v, list) else []


@dataclass
class CheckpointInfo:
    """One checkpoint of a branch; `created_at` is RFC 3339, empty for checkpoints older than creation times."""

    name: str
    txid: int
    created_at: str = ""

    @classmethod
    def from_json(cls, d: JsonObject) -> CheckpointInfo:
        """Builds one from its wire JSON."""
        return cls(name=_str(d, "name"), txid=_int(d, "txid"), created_at=_str(d, "created_at"))


@dataclass
class Branch:
    """One branch of a database as `branches` reports it. `ttl` reads back canonical (`1h0m0s`); `shared` is true
    while the branch still shares objects with the branch it was forked from; `state` is one of error, pending,
    active, dirty, detached, idle."""

    branch: str
    head_txid: int
    protected: bool = False
    ttl: str = ""
    ttl_remaining: str = ""
    lease_holder: str = ""
    checkpoints: list[str] = field(default_factory=list)
    touched_at: str = ""
    checkpoints_v2: list[CheckpointInfo] = field(default_factory=list)
    shared: bool = False
    state: str = ""
    reap_postponed: str = ""
    """Expired, but the reap waits while the checkout holds this (`uncheckpointed_writes`, `unverified_checkout`)."""
    ephemeral: bool = False
    """Held by the daemon until kept, gone with it (only that daemon lists it)."""

    @classmethod
    def from_json(cls, d: JsonObject) -> Branch:
        """Builds one from the daemon's BranchInfo JSON."""
        return cls(
            branch=_str(d, "branch"),
            head_txid=_int(d, "head_txid"),
            protected=d.get("protected") is True,
            ttl=_str(d, "ttl"),
            ttl_remaining=_str(d, "ttl_remaining"),
            lease_holder=_str(d, "lease_holder"),
            checkpoints=_strs(d, "checkpoints"),
            touched_at=_str(d, "touched_at"),
            checkpoints_v2=[CheckpointInfo.from_json(c) for c in _objs(d, "checkpoints_v2")],
            shared=d.get("shared") is True,
            state=_str(d, "state"),
            reap_postponed=_str(d, "reap_postponed"),
            ephemeral=d.get("ephemeral") is True,
        )

    @classmethod
    def from_status_json(cls, d: JsonObject) -> Branch:
        """Builds one from an entry of the CLI's `status --json` (which names some fields differently)."""
        return cls(
            branch=_str(d, "branch"),
            head_txid=_int(d, "txid"),
            protected=d.get("protected") is True,
            ttl=_str(d, "ttl"),
            ttl_remaining=_str(d, "remaining"),
            lease_holder=_str(d, "lease_holder"),
            checkpoints=_strs(d, "checkpoints"),
            touched_at=_str(d, "touched_at"),
            checkpoints_v2=[CheckpointInfo.from_json(c) for c in _objs(d, "checkpoints_v2")],
            shared=_str(d, "storage") == "shared",
            state=_str(d, "state"),
            reap_postponed=_str(d, "reap_postponed"),
        )


@dataclass
class SessionInfo:
    """One session open in the daemon. `error` is terminal (for example fenced); `flush_error` is the last
    background flush failure, cleared by a later success."""

    db: str
    branch: str
    checkout: str
    holder: str
    epoch: int
    durable_txid: int
    durable_age: str = ""
    last_flush_at: str = ""
    flush_error: str = ""
    capture_lag_bytes: int = 0
    error: str = ""
    ephemeral: bool = False
    """The session's branch is ephemeral: held by this daemon until kept, gone with it."""

    @classmethod
    def from_json(cls, d: JsonObject) -> SessionInfo:
        """Builds one from the daemon's SessionInfo JSON."""
        return cls(
            db=_str(d, "db"),
            branch=_str(d, "branch"),
            checkout=_str(d, "checkout"),
            holder=_str(d, "holder"),
            epoch=_int(d, "epoch"),
            durable_txid=_int(d, "durable_txid"),
            durable_age=_str(d, "durable_age"),
            last_flush_at=_str(d, "last_flush_at"),
            flush_error=_str(d, "flush_error"),
            capture_lag_bytes=_int(d, "capture_lag_bytes"),
            error=_str(d, "error"),
            ephemeral=d.get("ephemeral") is True,
        )


@dataclass
class Event:
    """One daemon event: session_opened, flushed, flush_failed, fenced, session_closed, session_evicted,
    session_reconnected, contract_broken, reaped, evicted or dropped_slow_consumer (always the last of a stream).
    `ts` is RFC 3339 UTC."""

    type: str
    ts: str = ""
    db: str = ""
    branch: str = ""
    detail: JsonObject = field(default_factory=dict)
    v: int = 1

    @classmethod
    def from_json(cls, d: JsonObject) -> Event:
        """Builds one from an event envelope; anything that is not one raises BAD_RESPONSE."""
        if d.get("v") != 1 or not isinstance(d.get("type"), str):
            raise OffshootError(f"malformed event from daemon: {d!r}", BAD_RESPONSE)
        detail = d.get("detail")
        return cls(
            type=_str(d, "type"),
            ts=_str(d, "ts"),
            db=_str(d, "db"),
            branch=_str(d, "branch"),
            detail=detail if isinstance(detail, dict) else {},
        )


@dataclass
class TouchResult:
    """What `touch` reports: the TTL now in force (a Go duration, or `none`) and the new activity time."""

    ttl: str
    touched_at: str

    @classmethod
    def from_json(cls, d: JsonObject) -> TouchResult:
        """Builds one from the daemon's or the CLI's JSON."""
        return cls(ttl=_str(d, "ttl") or "none", touched_at=_str(d, "touched_at"))


@dataclass
class LogRecord:
    """One record of a branch log: one change of the branch (`op`: create, flush, checkpoint, fork, rollback,
    promote, compact, touch, protect, unprotect, destroy, reap, merge), when (`at`, RFC 3339), the txids before and
    after, who asked (`actor`: human or agent), through what (`surface`: cli, daemon, mcp:<tool>,
    sdk:<adapter>/<framework>, janitor), and the actor's tags (`meta`). `fields` holds the whole record as sent (a
    flush's `pages` and `bytes`, a checkpoint's `name`, a fork's `from`)."""

    db: str
    branch: str
    seq: int
    op: str
    at: str
    actor: str
    surface: str
    txid_before: int
    txid_after: int
    meta: dict[str, str] = field(default_factory=dict)
    fields: JsonObject = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, d: JsonObject) -> LogRecord:
        """Builds one from its JSON (the daemon's `log` result, `offshoot log --json`)."""
        meta = d.get("meta")
        return cls(
            db=_str(d, "db"),
            branch=_str(d, "branch"),
            seq=_int(d, "seq"),
            op=_str(d, "op"),
            at=_str(d, "at"),
            actor=_str(d, "actor"),
            surface=_str(d, "surface"),
            txid_before=_int(d, "txid_before"),
            txid_after=_int(d, "txid_after"),
            meta={k: v for k, v in meta.items() if isinstance(v, str)} if isinstance(meta, dict) else {},
            fields=dict(d),
        )


@dataclass
class LogResult:
    """What `log` reports: the records, oldest first; `live` is false for a destroyed branch, whose log ends with
    `destroyed` (who destroyed it); `truncated` when the limit left older records out."""

    db: str
    branch: str
    live: bool
    truncated: bool
    records: list[LogRecord] = field(default_factory=list)
    destroyed: LogRecord | None = None
    log_id: str = ""

    @classmethod
    def from_json(cls, d: JsonObject) -> LogResult:
        """Builds one from the daemon's or the CLI's JSON."""
        destroyed = d.get("destroyed")
        return cls(
            db=_str(d, "db"),
            branch=_str(d, "branch"),
            live=d.get("live") is True,
            truncated=d.get("truncated") is True,
            records=[LogRecord.from_json(r) for r in _objs(d, "records")],
            destroyed=LogRecord.from_json(destroyed) if isinstance(destroyed, dict) else None,
            log_id=_str(d, "log_id"),
        )


@dataclass
class ProtectResult:
    """What `protect` and `unprotect` report; `changed` is false when the flag already had that value."""

    protected: bool
    changed: bool

    @classmethod
    def from_json(cls, d: JsonObject) -> ProtectResult:
        """Builds one from the daemon's or the CLI's JSON."""
        return cls(protected=d.get("protected") is True, changed=d.get("changed") is True)


@dataclass
class GcResult:
    """What a gc pass did: branches reaped (and those that failed), stale destroy claims cleared, objects
    tombstoned and deleted, and the tombstones still waiting out the grace period."""

    reaped: list[str]
    reap_errors: list[str]
    cleared_claims: list[str]
    tombstoned: int
    deleted: int
    backlog: int

    @classmethod
    def from_json(cls, d: JsonObject) -> GcResult:
        """Builds one from the daemon's or the CLI's JSON."""
        return cls(
            reaped=[str(x) for x in d.get("reaped") or []],
            reap_errors=[str(x) for x in d.get("reap_errors") or []],
            cleared_claims=[str(x) for x in d.get("cleared_claims") or []],
            tombstoned=_int(d, "tombstoned"),
            deleted=_int(d, "deleted"),
            backlog=_int(d, "backlog"),
        )


@dataclass
class TableDiff:
    """One table of a diff. `status` is same, changed, added or removed; rows are JSON-safe dicts (a BLOB is
    `{"$blob": hex}`, an integer beyond 2**53 `{"$int": "decimal"}`); `changed` holds key/before/after dicts."""

    table: str
    key: list[str]
    status: str
    added: list[JsonObject] = field(default_factory=list)
    removed: list[JsonObject] = field(default_factory=list)
    changed: list[JsonObject] = field(default_factory=list)
    left_count: int | None = None
    right_count: int | None = None
    counts: dict[str, int] | None = None
    """How many row changes of each kind (`added`, `removed`, `changed`) when a `limit` listed only the first."""

    @classmethod
    def from_json(cls, d: JsonObject) -> TableDiff:
        """Builds one from the diff JSON."""
        left, right = d.get("left_count"), d.get("right_count")
        counts = d.get("counts")
        return cls(
            table=_str(d, "table"),
            key=_strs(d, "key"),
            status=_str(d, "status"),
            added=_objs(d, "added"),
            removed=_objs(d, "removed"),
            changed=_objs(d, "changed"),
            left_count=left if isinstance(left, int) else None,
            right_count=right if isinstance(right, int) else None,
            counts={k: v for k, v in counts.items() if isinstance(v, int)} if isinstance(counts, dict) else None,
        )


@dataclass
class DiffResult:
    """A row-level diff of two durable states (`summary_only`: counts without rows)."""

    tables: list[TableDiff]
    schema: list[JsonObject]
    stats: JsonObject
    summary_only: bool

    @classmethod
    def from_json(cls, d: JsonObject) -> DiffResult:
        """Builds one from the diff JSON."""
        stats = d.get("stats")
        return cls(
            tables=[TableDiff.from_json(t) for t in _objs(d, "tables")],
            schema=_objs(d, "schema"),
            stats=stats if isinstance(stats, dict) else {},
            summary_only=d.get("summary_only") is True,
        )


def _row(d: JsonObject, key: str) -> JsonObject | None:
    v = d.get(key)
    return v if isinstance(v, dict) else None


@dataclass
class MergeConflict:
    """A row both sides of a merge changed differently since their common state. `kind` is update/update,
    update/delete, delete/update or insert/insert (source change / target change); `source` or `target` is None on
    the side that deleted the row, `base` None for insert/insert. Rows are JSON-safe dicts, as a diff's."""

    table: str
    kind: str
    key: JsonObject
    base: JsonObject | None
    source: JsonObject | None
    target: JsonObject | None

    @classmethod
    def from_json(cls, d: JsonObject) -> MergeConflict:
        """Builds one from the merge JSON."""
        return cls(
            table=_str(d, "table"),
            kind=_str(d, "kind"),
            key=_row(d, "key") or {},
            base=_row(d, "base"),
            source=_row(d, "source"),
            target=_row(d, "target"),
        )


@dataclass
class MergeResult:
    """What `merge` did: `applied` is false when conflicts no `prefer` resolved stopped it (nothing changed, the
    conflicts listed) or there was nothing to merge; `base` says which common state the changes were taken from
    (`kind`: merge, fork or siblings; `at`: branch@txid); `backup` is the undo point (`<target>-pre-merge`)."""

    db: str
    source: str
    target: str
    base: JsonObject
    applied: bool
    txid: int
    tables: list[JsonObject]
    conflicts: list[MergeConflict]
    prefer: str | None = None
    checkpoint: str | None = None
    backup: str | None = None
    earlier_backup: str | None = None
    resolved: int | None = None
    """How many conflicts the caller's `resolved` rows settled, when any did."""

    @classmethod
    def from_json(cls, d: JsonObject) -> MergeResult:
        """Builds one from the daemon's or the CLI's JSON."""
        return cls(
            db=_str(d, "db"),
            source=_str(d, "source"),
            target=_str(d, "target"),
            base=_row(d, "base") or {},
            applied=d.get("applied") is True,
            txid=_int(d, "txid"),
            tables=_objs(d, "tables"),
            conflicts=[MergeConflict.from_json(c) for c in _objs(d, "conflicts")],
            prefer=_str(d, "prefer") or None,
            checkpoint=_str(d, "checkpoint") or None,
            backup=_str(d, "backup") or None,
            earlier_backup=_str(d, "earlier_backup") or None,
            resolved=_int(d, "resolved") if isinstance(d.get("resolved"), int) else None,
        )
