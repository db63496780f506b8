"""Every op as a request plus the parser of its answer, shared by the blocking and the asyncio client."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Generic, TypeVar

from .errors import OffshootError
from .results import (
    Branch,
    DiffResult,
    GcResult,
    JsonObject,
    LogResult,
    MergeResult,
    ProtectResult,
    SessionInfo,
    TouchResult,
)
from .ttl import TTL, duration_arg, ttl_arg
from .wire import bad_response

T = TypeVar("T")


@dataclass(frozen=True)
class Call(Generic[T]):
    """One op: its name, its request fields and how its ok response becomes the method's result."""

    op: str
    fields: dict[str, Any]
    parse: Callable[[JsonObject], T]


def _none(_: JsonObject) -> None:
    return None


def _txid(op: str) -> Callable[[JsonObject], int]:
    def parse(res: JsonObject) -> int:
        v = res.get("txid")
        if not isinstance(v, int) or isinstance(v, bool):
            raise bad_response(f"{op} returned no txid", json.dumps(res))
        return v

    return parse


def _checkout(op: str) -> Callable[[JsonObject], str]:
    def parse(res: JsonObject) -> str:
        v = res.get("checkout")
        if not isinstance(v, str) or v == "":
            raise bad_response(f"{op} returned no checkout path", json.dumps(res))
        return v

    return parse


def _result(op: str) -> Callable[[JsonObject], JsonObject]:
    def parse(res: JsonObject) -> JsonObject:
        v = res.get("result")
        if not isinstance(v, dict):
            raise bad_response(f"{op} returned no result", json.dumps(res))
        return v

    return parse


def _list(op: str, key: str) -> Callable[[JsonObject], list[Any]]:
    def parse(res: JsonObject) -> list[Any]:
        v = res.get(key)
        if v is None:
            return []
        if not isinstance(v, list):
            raise bad_response(f"{op} returned a non-list {key}", json.dumps(res))
        return v

    return parse


def split_target(text: str) -> tuple[str, str, str]:
    """`db[@branch[@checkpoint]]` as (db, branch, checkpoint); branch defaults to main, checkpoint to "" (head)."""
    parts = text.split("@")
    if len(parts) > 3:
        parts = [*parts[:2], "@".join(parts[2:])]
    db = parts[0]
    branch = parts[1] if len(parts) > 1 and parts[1] else "main"
    checkpoint = parts[2] if len(parts) > 2 else ""
    return db, branch, checkpoint


def create(db: str) -> Call[None]:
    return Call("create", {"db": db}, _none)


def _opened(res: JsonObject) -> tuple[str, tuple[str, ...]]:
    # `warnings` is additive: what the daemon kept aside on open (writes a killed daemon never flushed).
    w = res.get("warnings")
    warnings = tuple(x for x in w if isinstance(x, str)) if isinstance(w, list) else ()
    return _checkout("open")(res), warnings


def open_(db: str, branch: str) -> Call[tuple[str, tuple[str, ...]]]:
    return Call("open", {"db": db, "branch": branch}, _opened)


def flush(db: str, branch: str, name: str, meta: dict[str, str] | None) -> Call[int]:
    return Call("flush", {"db": db, "branch": branch, "name": name, "meta": meta}, _txid("flush"))


def close(db: str, branch: str) -> Call[None]:
    return Call("close", {"db": db, "branch": branch}, _none)


def checkout(db: str, branch: str, discard: bool = False) -> Call[str]:
    fields: dict[str, Any] = {"db": db, "branch": branch}
    if discard:
        fields["discard"] = True
    return Call("checkout", fields, _checkout("checkout"))


def actor_fields(actor: str | None, allow_force: bool) -> dict[str, Any]:
    """The request fields that say who asks: none for a human; `actor: "agent"` (and `allow_force`) for an agent."""
    if actor is None or actor == "human":
        return {}
    if actor != "agent":
        raise ValueError(f"actor must be 'human' or 'agent', not {actor!r}")
    return {"actor": "agent", **({"allow_force": True} if allow_force else {})}


DEFAULT_SURFACE = "sdk:python"
"""The surface a client that names none says it is, in the branch log."""


def origin_fields(surface: str | None, meta: Mapping[str, str] | None) -> dict[str, Any]:
    """The `origin` request field: through what the calls come (`sdk:<adapter>/<framework>`, `sdk:python` when
    None) and the actor's tags (run id, agent name), for the records of the branch log."""
    origin: dict[str, Any] = {"surface": surface or DEFAULT_SURFACE}
    if meta:
        origin["meta"] = dict(meta)
    return {"origin": origin}


def log(db: str, branch: str, since: str | datetime | None, actor: str | None, limit: int | None) -> Call[LogResult]:
    fields: dict[str, Any] = {"db": db, "branch": branch}
    if since is not None:
        fields["since"] = since.isoformat() if isinstance(since, datetime) else since
    if actor is not None:
        if actor not in ("human", "agent"):
            raise ValueError(f"actor must be 'human' or 'agent', not {actor!r}")
        fields["by"] = actor
    if limit is not None:
        fields["limit"] = limit
    parse = _result("log")
    return Call("log", fields, lambda r: LogResult.from_json(parse(r)))


def fork(
    db: str,
    source: str,
    new: str | Sequence[str],
    from_checkpoint: str | None,
    ttl: TTL,
    meta: dict[str, str] | None,
    ephemeral: bool = False,
) -> Call[int]:
    names: dict[str, object] = {"name": new} if isinstance(new, str) else {"names": list(new)}
    fields = {"db": db, "branch": source, **names, "from": from_checkpoint, "ttl": ttl_arg(ttl), "meta": meta}
    if not ephemeral:
        return Call("fork", fields, _txid("fork"))
    fields["ephemeral"] = True
    txid = _txid("fork")
    made = [new] if isinstance(new, str) else list(new)

    def parse(res: JsonObject) -> int:
        # A daemon that does not know ephemeral made durable forks: say so rather than report ephemeral ones.
        if res.get("ephemeral") is not True:
            raise OffshootError(
                "the daemon made durable forks, not ephemeral ones: it is too old to know ephemeral "
                f"({', '.join(f'{db}@{n}' for n in made)} are in the store)",
                "UNSUPPORTED",
                "restart 'offshoot serve' with this version of offshoot, and destroy the forks it made",
            )
        return txid(res)

    return Call("fork", fields, parse)


def destroy(db: str, branch: str, force: bool) -> Call[None]:
    return Call("destroy", {"db": db, "branch": branch, "force": force}, _none)


def rollback(db: str, branch: str, to: str) -> Call[str]:
    return Call("rollback", {"db": db, "branch": branch, "name": to}, _checkout("rollback"))


def promote(db: str, source: str, onto: str, force: bool, if_head: int | None = None) -> Call[int]:
    fields: dict[str, Any] = {"db": db, "branch": source, "name": onto, "force": force}
    if if_head is None:
        return Call("promote", fields, _txid("promote"))
    fields["if_head"] = if_head
    txid = _txid("promote")

    def parse(res: JsonObject) -> int:
        # A daemon that does not know if_head promotes without the check: say so rather than report a checked promote.
        result = res.get("result")
        if not isinstance(result, dict) or result.get("if_head") != if_head:
            backup = result.get("backup") if isinstance(result, dict) else None
            kept = f" (its previous head is kept as {backup})" if isinstance(backup, str) else ""
            raise OffshootError(
                f"the daemon promoted without checking if_head: it is too old to know it{kept}",
                "UNSUPPORTED",
                "restart 'offshoot serve' with this version of offshoot before promoting with if_head",
            )
        return txid(res)

    return Call("promote", fields, parse)


ResolvedRow = Mapping[str, Any]
"""A conflict resolved by the caller: `{"table": ..., "key": ..., "row": ...}`, the table and key as the merge's
conflicts give them and the full row to write there (None deletes it)."""


def _json_value(v: object) -> object:
    # A value as the conflicts encode it: bytes as {"$blob": hex}, an int past 2**53 as {"$int": ...}, and the rest
    # (str, None, a float, an already encoded dict) as it is.
    if isinstance(v, (bytes, bytearray, memoryview)):
        return {"$blob": bytes(v).hex()}
    if isinstance(v, int) and not isinstance(v, bool) and abs(v) > 2**53 - 1:
        return {"$int": str(v)}
    if isinstance(v, float) and v in (float("inf"), float("-inf")):
        return {"$real": "Infinity" if v > 0 else "-Infinity"}
    return v


def _json_row(row: object, what: str) -> dict[str, object]:
    if not isinstance(row, Mapping):
        raise ValueError(f"{what} must be a mapping of column to value, not {row!r}")
    return {str(k): _json_value(v) for k, v in row.items()}


def resolved_arg(resolved: Sequence[ResolvedRow]) -> list[dict[str, object]]:
    """`resolved` as the wire and the CLI take it: a list of {"table", "key", "row"}, Python values (bytes, big
    ints) encoded as the merge's conflicts encode them. Raises ValueError for an entry out of that shape."""
    out: list[dict[str, object]] = []
    for i, r in enumerate(resolved):
        if not isinstance(r, Mapping) or not isinstance(r.get("table"), str) or "key" not in r or "row" not in r:
            shape = '{"table": str, "key": {...}, "row": {...} or None}'
            raise ValueError(f"resolved[{i}] must be {shape}, not {r!r}")
        row = r["row"]
        out.append(
            {
                "table": r["table"],
                "key": _json_row(r["key"], f"resolved[{i}]['key']"),
                "row": None if row is None else _json_row(row, f"resolved[{i}]['row']"),
            }
        )
    return out


def merge_fields(
    db: str,
    source: str,
    into: str,
    force: bool,
    prefer: str | None = None,
    name: str | None = None,
    from_checkpoint: str | None = None,
    resolved: Sequence[ResolvedRow] | None = None,
) -> dict[str, Any]:
    """A merge's request fields, checked once for the daemon's clients and for `Store` (see merge_argv)."""
    if prefer is not None and prefer not in ("source", "target"):
        raise ValueError(f"prefer must be 'source' or 'target', not {prefer!r}")
    fields: dict[str, Any] = {"db": db, "branch": source, "into": into, "force": force}
    if from_checkpoint is not None:
        fields["from"] = from_checkpoint
    if prefer is not None:
        fields["prefer"] = prefer
    if resolved is not None:
        fields["resolved"] = resolved_arg(resolved)
    if name is not None:
        fields["name"] = name
    return fields


def merge_argv(fields: Mapping[str, Any]) -> tuple[list[str], str | None]:
    """A merge's request fields (merge_fields) as `offshoot merge` arguments, and what it reads on standard input
    (the resolved rows, for `--resolve -`)."""
    src = f"{fields['db']}@{fields['branch']}" + (f"@{fields['from']}" if "from" in fields else "")
    argv = ["merge", src, "--into", fields["into"]]
    if "prefer" in fields:
        argv += ["--prefer", fields["prefer"]]
    if "name" in fields:
        argv += ["--name", fields["name"]]
    if fields["force"]:
        argv.append("--force")
    if "resolved" not in fields:
        return argv, None
    return [*argv, "--resolve", "-"], json.dumps(fields["resolved"])


def merge(
    db: str,
    source: str,
    into: str,
    force: bool,
    prefer: str | None = None,
    name: str | None = None,
    from_checkpoint: str | None = None,
    resolved: Sequence[ResolvedRow] | None = None,
) -> Call[MergeResult]:
    fields = merge_fields(db, source, into, force, prefer, name, from_checkpoint, resolved)
    parse = _result("merge")
    return Call("merge", fields, lambda r: MergeResult.from_json(parse(r)))


def compact(db: str, branch: str) -> Call[int]:
    return Call("compact", {"db": db, "branch": branch}, _txid("compact"))


def touch(db: str, branch: str, ttl: TTL) -> Call[TouchResult]:
    parse = _result("touch")
    return Call("touch", {"db": db, "branch": branch, "ttl": ttl_arg(ttl)}, lambda r: TouchResult.from_json(parse(r)))


def branches(db: str, state: Sequence[str] | None = None, limit: int | None = None) -> Call[list[Branch]]:
    parse = _list("branches", "branches")
    fields: dict[str, Any] = {"db": db}
    if state is not None:
        fields["state"] = [state] if isinstance(state, str) else list(state)
    if limit is not None:
        fields["limit"] = limit
    return Call("branches", fields, lambda r: [Branch.from_json(b) for b in parse(r) if isinstance(b, dict)])


def dbs() -> Call[list[str]]:
    parse = _list("dbs", "databases")
    return Call("dbs", {}, lambda r: [str(d) for d in parse(r)])


def export(db: str, branch: str, out_path: str | os.PathLike[str], checkpoint: str | None, force: bool) -> Call[int]:
    path = os.fspath(out_path)
    if not os.path.isabs(path):
        # The daemon would resolve it against its own working directory, not the caller's.
        raise OffshootError(
            f"export: output path {path!r} is not absolute",
            "INVALID_ARGUMENT",
            "pass an absolute path, e.g. os.path.abspath(out_path)",
        )
    fields = {"db": db, "branch": branch, "name": checkpoint, "path": path, "force": force}
    return Call("export", fields, _txid("export"))


def checkout_at(db: str, branch: str, checkpoint: str, force: bool) -> Call[str]:
    fields = {"db": db, "branch": branch, "name": checkpoint, "force": force}
    return Call("checkout-at", fields, _checkout("checkout-at"))


def status() -> Call[list[JsonObject]]:
    parse = _list("status", "sessions")
    return Call("status", {}, lambda r: [s for s in parse(r) if isinstance(s, dict)])


def sessions() -> Call[list[SessionInfo]]:
    parse = _list("status", "sessions")
    return Call("status", {}, lambda r: [SessionInfo.from_json(s) for s in parse(r) if isinstance(s, dict)])


def protect(db: str, branch: str, value: bool) -> Call[ProtectResult]:
    op = "protect" if value else "unprotect"
    parse = _result(op)
    return Call(op, {"db": db, "branch": branch}, lambda r: ProtectResult.from_json(parse(r)))


def diff(left: str, right: str, summary: bool, table: str | None = None, limit: int | None = None) -> Call[DiffResult]:
    db, branch, checkpoint = split_target(left)
    parse = _result("diff")
    fields = {"db": db, "branch": branch, "name": checkpoint, "to": right, "summary": summary, "table": table}
    if limit is not None:
        fields["limit"] = limit
    return Call("diff", fields, lambda r: DiffResult.from_json(parse(r)))


def gc(grace: str | timedelta | None) -> Call[GcResult]:
    parse = _result("gc")
    return Call("gc", {"grace": duration_arg(grace)}, lambda r: GcResult.from_json(parse(r)))


def shutdown() -> Call[None]:
    return Call("shutdown", {}, _none)
