"""The blocking client of the offshoot daemon: `connect(sock)` → `Client`, one method per op."""

from __future__ import annotations

import os
import socket
import threading
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from types import TracebackType
from typing import BinaryIO, Literal, TypeVar

from . import _calls as calls
from .episode import Episode, EpisodeOptions, start_episode
from .errors import CONNECTION_CLOSED, CONNECTION_FAILED, OffshootError
from .results import (
    Branch,
    CheckpointInfo,
    DiffResult,
    Event,
    GcResult,
    JsonObject,
    LogResult,
    MergeResult,
    ProtectResult,
    SessionInfo,
    TouchResult,
)
from .ttl import TTL
from .wire import MAX_RESPONSE_BYTES, bad_response, decode_response, encode_request, parse_object

__all__ = [
    "TTL",
    "Branch",
    "CheckpointInfo",
    "Client",
    "Event",
    "EventStream",
    "OffshootError",
    "Session",
    "SessionInfo",
    "connect",
]

T = TypeVar("T")

_CONNECT_HINT = "start the daemon with 'offshoot serve', or point at its socket (-socket / OFFSHOOT_SOCKET)"


def dial(socket_path: str | os.PathLike[str], timeout: float | None) -> socket.socket:
    """Connects to the daemon's unix socket; CONNECTION_FAILED (retryable) when nothing answers."""
    path = os.fspath(socket_path)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.settimeout(timeout)
        sock.connect(path)
    except OSError as e:
        sock.close()
        raise OffshootError(
            f"daemon connection failed: {path}: {e.strerror or e}", CONNECTION_FAILED, _CONNECT_HINT, True
        ) from e
    sock.settimeout(None)
    return sock


def closed_error(cause: BaseException | None = None) -> OffshootError:
    """CONNECTION_CLOSED: the daemon hung up (or the connection broke) before answering."""
    why = "" if cause is None else f": {cause}"
    return OffshootError(
        f"daemon closed the connection{why}", CONNECTION_CLOSED, "check that the daemon is still running; reconnect"
    )


def read_line(reader: BinaryIO) -> bytes:
    """One response line, or CONNECTION_CLOSED at end of stream; BAD_RESPONSE when it is too long."""
    line = reader.readline(MAX_RESPONSE_BYTES + 1)
    if not line:
        raise closed_error()
    if not line.endswith(b"\n"):
        if len(line) > MAX_RESPONSE_BYTES:
            raise bad_response("response line too long", line[:200])
        raise closed_error()
    return line


class Client:
    """A connection to one offshoot daemon. Use it as a context manager (or call `close()`). Calls from several
    threads are serialised on the one connection, since the protocol is strictly request then response.

    `socket_path` is public, as it was in the earlier client: `events()` dials it for its own connection, so a
    `Client` its suites made with `Client.__new__` and only a `socket_path` streams events too."""

    socket_path: str
    # The class default is what `events()` uses on a client made without __init__.
    _connect_timeout: float | None = 5.0

    def __init__(
        self,
        socket_path: str | os.PathLike[str],
        *,
        timeout: float | None = 5.0,
        actor: str | None = None,
        allow_force: bool = False,
        surface: str | None = None,
        meta: Mapping[str, str] | None = None,
    ) -> None:
        self.socket_path = os.fspath(socket_path)
        # Who asks, on every request: `actor="agent"` gets the agent rules (force only with `allow_force`); the
        # surface (`sdk:<adapter>/<framework>`, `sdk:python` by default) and `meta` are what the branch log records.
        self._actor = {**calls.actor_fields(actor, allow_force), **calls.origin_fields(surface, meta)}
        self.surface = surface
        """The surface these calls say they come through, as given (None: `sdk:python`)."""
        self._connect_timeout = timeout
        self._sock = dial(self.socket_path, timeout)
        self._reader: BinaryIO = self._sock.makefile("rb")
        self._lock = threading.Lock()
        self._closed = False

    def __enter__(self) -> Client:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def _call(self, call: calls.Call[T]) -> T:
        with self._lock:
            if self._closed:
                raise OffshootError("the connection to the daemon is closed", CONNECTION_CLOSED, "connect again")
            answered = False
            try:
                self._sock.sendall(encode_request(call.op, {**self._actor, **call.fields}))
                line = read_line(self._reader)
                answered = True
            except OSError as e:
                raise closed_error(e) from e
            finally:
                # Interrupted between request and answer (Ctrl-C, a broken pipe): the answer would be read as the
                # next call's, so the connection is done for.
                if not answered:
                    self._abandon()
        return call.parse(decode_response(line))

    def _abandon(self) -> None:
        self._closed = True
        self._reader.close()
        self._sock.close()

    def create(self, db: str) -> None:
        """Creates an empty database whose protected `main` branch has the checkpoint `init`."""
        self._call(calls.create(db))

    def open(self, db: str, branch: str = "main") -> Session:
        """Opens a live session: leases the branch, checks it out and captures every commit until it closes."""
        path, warnings = self._call(calls.open_(db, branch))
        return Session(self, db, branch, path, warnings)

    def checkout(self, db: str, branch: str = "main", discard: bool = False) -> str:
        """Returns the branch's writable checkout (no session), materializing the head unless the file is current.
        Uncheckpointed writes in a current checkout are kept; `discard` drops them and re-materializes the head."""
        return self._call(calls.checkout(db, branch, discard))

    def fork(
        self,
        db: str,
        source: str,
        new: str | Sequence[str],
        from_checkpoint: str | None = None,
        ttl: TTL = None,
        meta: dict[str, str] | None = None,
        ephemeral: bool = False,
    ) -> int:
        """Forks `source` (its head, or `from_checkpoint`) into the new branch `new`; returns the fork's txid. An
        open session on `source` is flushed first, so the fork holds everything written before the call. Given a
        list of names, forks them all at one fork point in one request, all or nothing: every name is checked
        before any fork is written, and if one fails the forks already made are withdrawn. `ephemeral=True` makes
        forks the daemon holds and never writes to the store until kept (a named checkpoint or flush, a promote):
        gone with the daemon, and no other daemon or CLI sees them."""
        return self._call(calls.fork(db, source, new, from_checkpoint, ttl, meta, ephemeral))

    def episode(
        self,
        db: str,
        from_checkpoint: str | None = None,
        *,
        source: str = "main",
        name: str | None = None,
        ttl: TTL = None,
        meta: dict[str, str] | None = None,
        ephemeral: bool = True,
    ) -> Episode:
        """Starts an episode: an ephemeral fork of `source` at `from_checkpoint` (else its head) with a live session
        on it. `with client.episode(db, from_checkpoint="seed") as ep:` write to `ep.path` (`ep` is a path-like);
        leaving the block closes the session, sets `ep.result` (the summary diff against where it started) and
        destroys the fork unless `ep.keep(name)` made it a durable branch. `ephemeral=False` forks a durable one."""
        return start_episode(self, db, source, name, from_checkpoint, EpisodeOptions(ttl, meta, ephemeral))

    def destroy(self, db: str, branch: str, force: bool = False) -> None:
        """Deletes a branch; `force` overrides protection (never a live lease: close that session first)."""
        self._call(calls.destroy(db, branch, force))

    def rollback(self, db: str, branch: str, to: str) -> str:
        """Repoints the branch to checkpoint `to`, dropping later checkpoints; returns the refreshed checkout."""
        return self._call(calls.rollback(db, branch, to))

    def promote(self, db: str, source: str, onto: str, force: bool = False, *, if_head: int | None = None) -> int:
        """Replaces branch `onto` with a copy of `source`'s head (`force` if `onto` is protected); returns the txid.
        With `if_head`, only while `onto` is still at that head txid (else `BASE_MOVED`, nothing changed)."""
        return self._call(calls.promote(db, source, onto, force, if_head))

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
        resolved: Sequence[calls.ResolvedRow] | None = None,
    ) -> MergeResult:
        """Merges the row changes `source` (its head, or `from_checkpoint`: a checkpoint or a moment, `tx:42`) made
        since its common state with `into` into `into`, three-way; returns the result, with `applied` False and the
        `conflicts` listed (nothing changed) when rows conflict and neither `resolved` nor `prefer` resolves them.
        `resolved` is your own row for conflicts: `{"table", "key", "row"}`, table and key as a conflict gives them,
        the full row to write (bytes for a BLOB, or as the conflict encodes it) or None to delete it; `prefer`
        settles the rest. `force` if `into` is protected; raises MERGE_CONFLICT when both changed the schema or
        `resolved` leaves a conflict with no `prefer`, INVALID_ARGUMENT when a resolved row names no conflict."""
        return self._call(calls.merge(db, source, into, force, prefer, name, from_checkpoint, resolved))

    def compact(self, db: str, branch: str = "main") -> int:
        """Makes a shared branch self-contained; returns its head txid."""
        return self._call(calls.compact(db, branch))

    def touch(self, db: str, branch: str, ttl: TTL = None) -> TouchResult:
        """Restarts the branch's TTL clock; `ttl` None keeps the TTL, `"none"`/0 clears it, a duration sets it."""
        return self._call(calls.touch(db, branch, ttl))

    def branches(self, db: str, state: Sequence[str] | None = None, limit: int | None = None) -> list[Branch]:
        """Lists the branches of a database with their state, checkpoints and TTL; `state` keeps only those in one of
        these states (a name or a list), `limit` at most that many."""
        return self._call(calls.branches(db, state, limit))

    def dbs(self) -> list[str]:
        """Lists the databases, sorted."""
        return self._call(calls.dbs())

    def log(
        self,
        db: str,
        branch: str = "main",
        *,
        since: str | datetime | None = None,
        actor: str | None = None,
        limit: int | None = None,
    ) -> LogResult:
        """The history of a branch, oldest first: every change, who asked for it (`actor`) and through what
        (`surface`); `since` (RFC 3339 or a datetime), `actor` ("human" or "agent") and `limit` (the newest N; 0 for
        all, 100 by default) filter it. A destroyed branch's last log ends with who destroyed it."""
        return self._call(calls.log(db, branch, since, actor, limit))

    def export(
        self,
        db: str,
        branch: str,
        out_path: str | os.PathLike[str],
        checkpoint: str | None = None,
        force: bool = False,
    ) -> int:
        """Writes the branch's durable state (head, or `checkpoint`) to `out_path` on the daemon host, which must be
        absolute (INVALID_ARGUMENT before anything is sent otherwise: the daemon runs in a directory of its own).
        Unflushed writes of an open session are not in it. Returns the exported txid."""
        return self._call(calls.export(db, branch, out_path, checkpoint, force))

    def checkout_at(self, db: str, branch: str, checkpoint: str, force: bool = False) -> str:
        """Materializes a named checkpoint as a read-only file (cached; `force` rebuilds it); returns its path."""
        return self._call(calls.checkout_at(db, branch, checkpoint, force))

    def status(self) -> list[JsonObject]:
        """The sessions open in the daemon, as the raw dicts of the wire (see `sessions()` for dataclasses)."""
        return self._call(calls.status())

    def sessions(self) -> list[SessionInfo]:
        """The sessions open in the daemon."""
        return self._call(calls.sessions())

    def protect(self, db: str, branch: str) -> ProtectResult:
        """Marks a branch protected: destroying it or promoting onto it then needs `force`."""
        return self._call(calls.protect(db, branch, True))

    def unprotect(self, db: str, branch: str) -> ProtectResult:
        """Clears a branch's protected flag."""
        return self._call(calls.protect(db, branch, False))

    def diff(
        self, left: str, right: str, summary: bool = False, table: str | None = None, limit: int | None = None
    ) -> DiffResult:
        """Row-level diff of two durable states named `db[@branch[@checkpoint]]` (`summary`: counts only; `table`:
        that table only; `limit`: at most that many row changes of each kind per table, `counts` giving them all)."""
        return self._call(calls.diff(left, right, summary, table, limit))

    def gc(self, grace: str | timedelta | None = None) -> GcResult:
        """Reaps expired branches, clears stale destroy claims and deletes garbage older than `grace`."""
        return self._call(calls.gc(grace))

    def shutdown(self) -> None:
        """Asks the daemon to shut down; it answers first, then flushes and closes its sessions and exits."""
        self._call(calls.shutdown())

    def events(self, timeout: float | None = None) -> EventStream:
        """Subscribes (on a connection of its own) and returns the stream of events published from now on; see
        EventStream. `timeout` bounds each wait for the next event."""
        return EventStream(self.socket_path, self._connect_timeout, timeout)

    def close(self) -> None:
        """Closes the connection. Sessions opened on it stay open in the daemon until closed there."""
        with self._lock:
            if not self._closed:
                self._abandon()


class Session:
    """A live session on one branch: writes to `path` (any SQLite client, WAL mode) are captured until `close()`."""

    def __init__(self, client: Client, db: str, branch: str, path: str, warnings: tuple[str, ...] = ()) -> None:
        self.client = client
        self.db = db
        self.branch = branch
        self.path = path
        #: What the daemon said on open that the caller must know, e.g. writes kept as `<branch>-pre-reopen`.
        self.warnings = warnings

    def __enter__(self) -> Session:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def flush(self, name: str = "", meta: dict[str, str] | None = None) -> int:
        """Makes everything committed so far durable, optionally as the named checkpoint `name` carrying `meta`;
        returns the txid."""
        return self.client._call(calls.flush(self.db, self.branch, name, meta))

    def close(self) -> None:
        """Flushes what is pending, stops capture and releases the lease."""
        self.client._call(calls.close(self.db, self.branch))


class EventStream:
    """Daemon events from a subscription already live when this object exists: iterate it (or `next()` it), and
    `close()` it or use it as a context manager. It ends after `dropped_slow_consumer` or when the daemon goes away;
    `timeout` bounds each wait for the next event (TIMEOUT when it passes)."""

    def __init__(self, socket_path: str, connect_timeout: float | None, timeout: float | None) -> None:
        self.timeout = timeout
        self._sock = dial(socket_path, connect_timeout)
        self._reader: BinaryIO = self._sock.makefile("rb")
        self._done = False
        try:
            self._sock.settimeout(connect_timeout)
            self._sock.sendall(encode_request("subscribe", {}))
            decode_response(read_line(self._reader))
            self._sock.settimeout(timeout)
        except OSError as e:
            self.close()
            raise closed_error(e) from e
        except BaseException:
            self.close()
            raise

    def __iter__(self) -> EventStream:
        return self

    def __next__(self) -> Event:
        if self._done:
            raise StopIteration
        try:
            line = read_line(self._reader)
        except OffshootError as e:
            self.close()
            if e.code == CONNECTION_CLOSED:
                raise StopIteration from None
            raise
        except TimeoutError:
            raise OffshootError(
                f"no daemon event within {self.timeout} s", "TIMEOUT", "pass a longer events(timeout=...)"
            ) from None
        except OSError:
            self.close()
            raise StopIteration from None
        event = Event.from_json(parse_object(line))
        if event.type == "dropped_slow_consumer":
            self.close()
        return event

    def __enter__(self) -> EventStream:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        """Ends the subscription and closes its connection."""
        if self._done:
            return
        self._done = True
        self._reader.close()
        self._sock.close()


def connect(
    socket_path: str | os.PathLike[str],
    *,
    timeout: float | None = 5.0,
    actor: str | None = None,
    allow_force: bool = False,
    surface: str | None = None,
    meta: Mapping[str, str] | None = None,
) -> Client:
    """Connects to the daemon listening on `socket_path` (`timeout` bounds the connect); `actor="agent"` makes every
    request an agent's; `surface` and `meta` say, in the branch log, through what the calls come and the actor's
    tags."""
    return Client(socket_path, timeout=timeout, actor=actor, allow_force=allow_force, surface=surface, meta=meta)
