"""The at-rest API: `Store(path_or_url)` runs the `offshoot` CLI with `--json`, no daemon needed."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any, Literal

from ._calls import DEFAULT_SURFACE, ResolvedRow, actor_fields, merge_argv, merge_fields
from .binary import require_binary
from .errors import BAD_RESPONSE, OffshootError
from .results import Branch, DiffResult, GcResult, JsonObject, LogResult, MergeResult, ProtectResult, TouchResult
from .ttl import TTL, duration_arg, ttl_arg


def _target(db: str, branch: str) -> str:
    return f"{db}@{branch}"


def _meta_args(meta: Mapping[str, str] | None) -> list[str]:
    out: list[str] = []
    for k, v in (meta or {}).items():
        out += ["--meta", f"{k}={v}"]
    return out


# The exit code of a merge held by its conflicts: its JSON document (the conflicts) is the answer.
_MERGE_CONFLICT_EXIT = 9


def _actor_meta(meta: Mapping[str, str] | None) -> str:
    """The actor's tags as OFFSHOOT_ACTOR_META (`k=v,k=v`); a tag that cannot be written so is refused."""
    for k, v in (meta or {}).items():
        if "=" in k or "," in k or "," in v:
            raise OffshootError(
                f"actor tag {k!r} cannot be passed to the CLI",
                "INVALID_ARGUMENT",
                'keep "=" and "," out of tag keys and "," out of values',
            )
    return ",".join(f"{k}={v}" for k, v in (meta or {}).items())


def _cli_error(argv: Sequence[str], returncode: int, stderr: str) -> OffshootError:
    for line in reversed(stderr.strip().splitlines()):
        try:
            doc = json.loads(line)
        except ValueError:
            continue
        err = doc.get("error") if isinstance(doc, dict) else None
        if isinstance(err, dict) and isinstance(err.get("message"), str):
            code, hint = err.get("code"), err.get("hint")
            return OffshootError(
                err["message"],
                code if isinstance(code, str) else "INTERNAL",
                hint if isinstance(hint, str) else None,
                err.get("retryable") is True,
            )
    shown = stderr.strip() or f"exit status {returncode}"
    return OffshootError(f"offshoot {' '.join(argv)}: {shown}", "INTERNAL")


class Store:
    """A store (a directory, `file:///abs`, or `s3://bucket[/prefix]`) used at rest, through the `offshoot` CLI
    found at `bin`, else `$OFFSHOOT_BIN`, else on PATH. Every method raises OffshootError with the CLI's code.
    `actor="agent"` makes every command an agent's (`--actor agent`: no force, undo points of protected branches
    left alone), unless `allow_force` says its human allowed it to force, as `Client` does over the daemon."""

    def __init__(
        self,
        path_or_url: str | os.PathLike[str],
        *,
        bin: str | os.PathLike[str] | None = None,
        env: Mapping[str, str] | None = None,
        actor: str | None = None,
        allow_force: bool = False,
        surface: str | None = None,
        meta: Mapping[str, str] | None = None,
    ) -> None:
        self.spec = os.fspath(path_or_url)
        self._env = dict(os.environ if env is None else env)
        # Who asks, for the branch log: the CLI reads them from its environment.
        self._env["OFFSHOOT_SURFACE"] = surface or DEFAULT_SURFACE
        self._env["OFFSHOOT_ACTOR_META"] = _actor_meta(meta)
        self.bin = os.fspath(bin) if bin is not None else require_binary(self._env)
        fields = actor_fields(actor, allow_force)
        self._actor = (["--actor", "agent"] if fields else []) + (["--allow-force"] if "allow_force" in fields else [])

    def run(self, *args: str, answers: Sequence[int] = (), stdin: str | None = None) -> Any:
        """Runs one CLI command with `--json` on this store and returns its parsed JSON document. An exit code in
        `answers` still answers with the document it printed (a merge held by its conflicts exits 9); `stdin` is
        what it reads on standard input (a merge's `--resolve -`)."""
        return self._run([*args, *self._actor], answers, stdin)

    def _run(self, args: Sequence[str], answers: Sequence[int] = (), stdin: str | None = None) -> Any:
        argv = ["-store", self.spec, *args, "--json", "--quiet"]
        # Standard input is empty unless there is something to read: no command waits on it.
        proc = subprocess.run(
            [self.bin, *argv],
            capture_output=True,
            text=True,
            env=self._env,
            check=False,
            input=stdin if stdin is not None else "",
        )
        if proc.returncode != 0 and not (proc.returncode in answers and proc.stdout):
            raise _cli_error(argv, proc.returncode, proc.stderr)
        try:
            return json.loads(proc.stdout)
        except ValueError:
            raise OffshootError(
                f"offshoot {' '.join(argv)} printed no JSON: {proc.stdout[:200]!r}", BAD_RESPONSE
            ) from None

    def _obj(self, *args: str) -> JsonObject:
        doc = self.run(*args)
        if not isinstance(doc, dict):
            raise OffshootError(f"offshoot {args[0]} printed {doc!r}, not a JSON object", BAD_RESPONSE)
        return doc

    def _int(self, key: str, *args: str) -> int:
        v = self._obj(*args).get(key)
        if not isinstance(v, int):
            raise OffshootError(f"offshoot {args[0]} reported no {key}", BAD_RESPONSE)
        return v

    def _path(self, *args: str) -> str:
        v = self._obj(*args).get("path")
        if not isinstance(v, str):
            raise OffshootError(f"offshoot {args[0]} reported no path", BAD_RESPONSE)
        return v

    def init(self) -> None:
        """Initializes an empty store (ALREADY_EXISTS when it already is one)."""
        self.run("init")

    def create(self, db: str, from_file: str | os.PathLike[str] | None = None) -> None:
        """Creates a database, empty or imported from the SQLite file `from_file` (which is left untouched)."""
        self.run("create", db, *(["--from", os.fspath(from_file)] if from_file is not None else []))

    def checkout(self, db: str, branch: str = "main", discard: bool = False) -> str:
        """Returns the branch's writable checkout, materializing the head unless the file is current. Uncheckpointed
        writes in a current checkout are kept; `discard` drops them and re-materializes the head."""
        return self._path("checkout", _target(db, branch), *(["--discard"] if discard else []))

    def checkout_at(self, db: str, branch: str, checkpoint: str, force: bool = False) -> str:
        """Materializes a named checkpoint as a read-only file (cached; `force` rebuilds it); returns its path."""
        return self._path(
            "checkout", _target(db, branch), "--at", checkpoint, "--read-only", *(["--force"] if force else [])
        )

    def path(self, db: str, branch: str = "main") -> str:
        """The writable checkout path of a branch, without materializing it."""
        return self._path("path", _target(db, branch))

    def checkpoint(self, db: str, branch: str, name: str, meta: Mapping[str, str] | None = None) -> int:
        """Quiesces the checkout and records its state as checkpoint `name` (with `meta`); returns the txid."""
        return self._int("txid", "checkpoint", _target(db, branch), name, *_meta_args(meta))

    def fork(
        self,
        db: str,
        source: str,
        new: str,
        from_checkpoint: str | None = None,
        ttl: TTL = None,
        meta: Mapping[str, str] | None = None,
    ) -> int:
        """Forks `source` (its head, or `from_checkpoint`) into the new branch `new`; returns the fork's txid."""
        args = ["fork", _target(db, source), new, *_meta_args(meta)]
        if from_checkpoint:
            args += ["--at", from_checkpoint]
        wire_ttl = ttl_arg(ttl)
        if wire_ttl:
            args += ["--ttl", wire_ttl]
        return self._int("txid", *args)

    def destroy(self, db: str, branch: str, force: bool = False) -> None:
        """Deletes a branch; `force` overrides protection (never a live lease: close that session first)."""
        self.run("destroy", _target(db, branch), *(["--force"] if force else []))

    def rollback(self, db: str, branch: str, to: str) -> str:
        """Repoints the branch to checkpoint `to` (keeping `<branch>-pre-rollback`); returns the checkout path."""
        return self._path("rollback", _target(db, branch), "--to", to)

    def promote(self, db: str, source: str, onto: str, force: bool = False, *, if_head: int | None = None) -> int:
        """Replaces branch `onto` with a copy of `source`'s head (`force` if `onto` is protected); returns the txid.
        With `if_head`, only while `onto` is still at that head txid (else `BASE_MOVED`, nothing changed)."""
        return self._int(
            "txid",
            "promote",
            _target(db, source),
            "--onto",
            onto,
            *(["--force"] if force else []),
            *(["--if-head", str(if_head)] if if_head is not None else []),
        )

    def merge(
        self,
        db: str,
        source: str,
        into: str,
        force: bool = False,
        *,
        prefer: Literal["source", "target"] | None = None,
        name: str | None = None,
        from_checkpoint: str | None = None,
        resolved: Sequence[ResolvedRow] | None = None,
    ) -> MergeResult:
        """Merges the row changes `source` (its head, or `from_checkpoint`: a checkpoint or a moment, `tx:42`) made
        since its common state with `into` into `into`, three-way; returns the result, with `applied` False and the
        `conflicts` listed (nothing changed) when rows conflict and neither `resolved` nor `prefer` resolves them.
        `resolved` is your own row for conflicts: `{"table", "key", "row"}`, table and key as a conflict gives them,
        the full row to write (bytes for a BLOB, or as the conflict encodes it) or None to delete it; `prefer`
        settles the rest. `force` if `into` is protected; raises MERGE_CONFLICT when both changed the schema or
        `resolved` leaves a conflict with no `prefer`, INVALID_ARGUMENT when a resolved row names no conflict."""
        fields = merge_fields(db, source, into, force, prefer, name, from_checkpoint, resolved)
        argv, stdin = merge_argv(fields)
        doc = self.run(*argv, answers=(_MERGE_CONFLICT_EXIT,), stdin=stdin)
        if not isinstance(doc, dict):
            raise OffshootError(f"offshoot merge printed {doc!r}, not a JSON object", BAD_RESPONSE)
        return MergeResult.from_json(doc)

    def compact(self, db: str, branch: str = "main") -> int:
        """Makes a shared branch self-contained; returns its head txid."""
        return self._int("txid", "compact", _target(db, branch))

    def touch(self, db: str, branch: str, ttl: TTL = None) -> TouchResult:
        """Restarts the branch's TTL clock; `ttl` None keeps the TTL, `"none"`/0 clears it, a duration sets it."""
        wire_ttl = ttl_arg(ttl)
        return TouchResult.from_json(
            self._obj("touch", _target(db, branch), *(["--ttl", wire_ttl] if wire_ttl else []))
        )

    def export(
        self,
        db: str,
        branch: str,
        out_path: str | os.PathLike[str],
        checkpoint: str | None = None,
        force: bool = False,
    ) -> int:
        """Writes the branch's durable state (head, or `checkpoint`) to `out_path`; returns the exported txid."""
        target = _target(db, branch) + (f"@{checkpoint}" if checkpoint else "")
        return self._int("txid", "export", target, os.path.abspath(out_path), *(["--force"] if force else []))

    def protect(self, db: str, branch: str) -> ProtectResult:
        """Marks a branch protected: destroying it or promoting onto it then needs `force`."""
        return ProtectResult.from_json(self._obj("protect", _target(db, branch)))

    def unprotect(self, db: str, branch: str) -> ProtectResult:
        """Clears a branch's protected flag."""
        return ProtectResult.from_json(self._obj("unprotect", _target(db, branch)))

    def diff(
        self, left: str, right: str, summary: bool = False, table: str | None = None, limit: int | None = None
    ) -> DiffResult:
        """Row-level diff of two durable states named `db[@branch[@checkpoint]]` (`summary`: counts only; `table`:
        that table only; `limit`: at most that many row changes of each kind per table, `counts` giving them all)."""
        flags = ["--summary"] if summary else []
        if table is not None:
            flags += ["--table", table]
        if limit is not None:
            flags += ["--limit", str(limit)]
        return DiffResult.from_json(self._obj("diff", left, right, *flags))

    def gc(self, grace: str | timedelta | None = None) -> GcResult:
        """Reaps expired branches, clears stale destroy claims and deletes garbage older than `grace` (CLI: 1h)."""
        g = duration_arg(grace)
        return GcResult.from_json(self._obj("gc", *(["--grace", g] if g else [])))

    def status(self) -> JsonObject:
        """The whole-store status document: every branch (`branches`) and the read-only cache (`ro_cache`)."""
        return self._obj("status")

    def branches(self, db: str) -> list[Branch]:
        """Lists the branches of a database (NOT_FOUND when it has none)."""
        found = [
            Branch.from_status_json(b)
            for b in self.status().get("branches") or []
            if isinstance(b, dict) and b.get("db") == db
        ]
        if not found:
            raise OffshootError(f"database {db} not found", "NOT_FOUND", "list databases with Store.dbs()")
        return found

    def dbs(self) -> list[str]:
        """Lists the databases, sorted."""
        return sorted({str(b.get("db")) for b in self.status().get("branches") or [] if isinstance(b, dict)})

    def log(
        self,
        db: str,
        branch: str = "main",
        *,
        since: str | datetime | None = None,
        actor: str | None = None,
        limit: int | None = None,
    ) -> LogResult:
        """The history of a branch, oldest first (`offshoot log --json`): every change, who asked for it and through
        what; `since` (RFC 3339, a datetime, or a duration such as "2h"), `actor` ("human" or "agent") and `limit`
        (the newest N; 0 for all, 100 by default) filter it."""
        args = ["log", _target(db, branch)]
        if since is not None:
            args += ["--since", since.isoformat() if isinstance(since, datetime) else since]
        if actor is not None:
            args += ["--actor", actor]
        if limit is not None:
            args += ["--limit", str(limit)]
        # On log, --actor filters: this store's own actor flags are not sent.
        doc = self._run(args)
        if not isinstance(doc, dict):
            raise OffshootError("offshoot log printed no JSON object", BAD_RESPONSE)
        return LogResult.from_json(doc)
