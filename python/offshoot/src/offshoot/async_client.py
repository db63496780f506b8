"""The asyncio client of the offshoot daemon: the same methods as `Client`, awaited."""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from types import TracebackType
from typing import Literal, TypeVar

from . import _calls as calls
from .client import closed_error
from .episode import AsyncEpisode, EpisodeOptions
from .errors import CONNECTION_CLOSED, CONNECTION_FAILED, OffshootError
from .results import (
    Branch,
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

T = TypeVar("T")

_CONNECT_HINT = "start the daemon with 'offshoot serve', or point at its socket (-socket / OFFSHOOT_SOCKET)"


async def _dial(path: str, timeout: float | None) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    try:
        return await asyncio.wait_for(asyncio.open_unix_connection(path, limit=MAX_RESPONSE_BYTES + 1), timeout)
    except (OSError, asyncio.TimeoutError) as e:
        why = "no answer in time" if isinstance(e, asyncio.TimeoutError) else (e.strerror or str(e))
        raise OffshootError(f"daemon connection failed: {path}: {why}", CONNECTION_FAILED, _CONNECT_HINT, True) from e


async def _read_line(reader: asyncio.StreamReader) -> bytes:
    try:
        line = await reader.readline()
    except ValueError:
        raise bad_response("response line too long", b"") from None
    if not line.endswith(b"\n"):
        raise closed_error()
    return line


class AsyncClient:
    """An asyncio connection to one offshoot daemon: `async with await AsyncClient.connect(sock) as c:`. Calls from
    several tasks are serialised on the one connection."""

    def __init__(
        self,
        socket_path: str,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        timeout: float | None,
        actor: dict[str, object] | None = None,
    ) -> None:
        self.socket_path = socket_path
        # Who asks, on every request (see `connect`).
        self._actor = actor or {}
        self._reader = reader
        self._writer = writer
        self._connect_timeout = timeout
        self._lock = asyncio.Lock()
        self._closed = False

    @classmethod
    async def connect(
        cls,
        socket_path: str | os.PathLike[str],
        *,
        timeout: float | None = 5.0,
        actor: str | None = None,
        allow_force: bool = False,
        surface: str | None = None,
        meta: Mapping[str, str] | None = None,
    ) -> AsyncClient:
        """Connects to the daemon listening on `socket_path`; `actor="agent"` makes every request an agent's (force
        only with `allow_force`); `surface` and `meta` say, in the branch log, through what the calls come (the
        default `sdk:python`) and the actor's tags."""
        path = os.fspath(socket_path)
        fields = {**calls.actor_fields(actor, allow_force), **calls.origin_fields(surface, meta)}
        reader, writer = await _dial(path, timeout)
        return cls(path, reader, writer, timeout, fields)

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    async def _call(self, call: calls.Call[T]) -> T:
        async with self._lock:
            if self._closed:
                raise OffshootError("the connection to the daemon is closed", CONNECTION_CLOSED, "connect again")
            answered = False
            try:
                self._writer.write(encode_request(call.op, {**self._actor, **call.fields}))
                await self._writer.drain()
                line = await _read_line(self._reader)
                answered = True
            except OSError as e:
                raise closed_error(e) from e
            finally:
                # Cancelled (a timeout around the call) or broken between request and answer: the answer would be
                # read as the next call's, so the connection is done for.
                if not answered:
                    self._closed = True
                    self._writer.close()
        return call.parse(decode_response(line))

    async def create(self, db: str) -> None:
        """Creates an empty database whose protected `main` branch has the checkpoint `init`."""
        await self._call(calls.create(db))

    async def open(self, db: str, branch: str = "main") -> AsyncSession:
        """Opens a live session: leases the branch, checks it out and captures every commit until it closes."""
        path, warnings = await self._call(calls.open_(db, branch))
        return AsyncSession(self, db, branch, path, warnings)

    async def checkout(self, db: str, branch: str = "main", discard: bool = False) -> str:
        """Returns the branch's writable checkout (no session), materializing the head unless the file is current.
        Uncheckpointed writes in a current checkout are kept; `discard` drops them and re-materializes the head."""
        return await self._call(calls.checkout(db, branch, discard))

    async def fork(
        self,
        db: str,
        source: str,
        new: str | Sequence[str],
        from_checkpoint: str | None = None,
        ttl: TTL = None,
        meta: dict[str, str] | None = None,
        ephemeral: bool = False,
    ) -> int:
        """Forks `source` (its head, or `from_checkpoint`) into the new branch `new`; returns the fork's txid.
        Given a list of names, forks them all at one fork point, all or nothing; `ephemeral=True` makes forks the
        daemon holds, gone with it unless kept (see `Client.fork`)."""
        return await self._call(calls.fork(db, source, new, from_checkpoint, ttl, meta, ephemeral))

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
    ) -> AsyncEpisode:
        """An episode (see `Client.episode`): `async with client.episode(db, from_checkpoint="seed") as ep:` forks and
        opens it; leaving the block ends it, with `ep.result`."""
        return AsyncEpisode(self, db, source, name, from_checkpoint, EpisodeOptions(ttl, meta, ephemeral))

    async def destroy(self, db: str, branch: str, force: bool = False) -> None:
        """Deletes a branch; `force` overrides protection (never a live lease: close that session first)."""
        await self._call(calls.destroy(db, branch, force))

    async def rollback(self, db: str, branch: str, to: str) -> str:
        """Repoints the branch to checkpoint `to`, dropping later checkpoints; returns the refreshed checkout."""
        return await self._call(calls.rollback(db, branch, to))

    async def promote(self, db: str, source: str, onto: str, force: bool = False, *, if_head: int | None = None) -> int:
        """Replaces branch `onto` with a copy of `source`'s head (`force` if `onto` is protected); returns the txid.
        With `if_head`, only while `onto` is still at that head txid (else `BASE_MOVED`, nothing changed)."""
        return await self._call(calls.promote(db, source, onto, force, if_head))

    async def merge(
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
        return await self._call(calls.merge(db, source, into, force, prefer, name, from_checkpoint, resolved))

    async def compact(self, db: str, branch: str = "main") -> int:
        """Makes a shared branch self-contained; returns its head txid."""
        return await self._call(calls.compact(db, branch))

    async def touch(self, db: str, branch: str, ttl: TTL = None) -> TouchResult:
        """Restarts the branch's TTL clock; `ttl` None keeps the TTL, `"none"`/0 clears it, a duration sets it."""
        return await self._call(calls.touch(db, branch, ttl))

    async def branches(self, db: str, state: Sequence[str] | None = None, limit: int | None = None) -> list[Branch]:
        """Lists the branches of a database with their state, checkpoints and TTL; `state` keeps only those in one of
        these states (a name or a list), `limit` at most that many."""
        return await self._call(calls.branches(db, state, limit))

    async def dbs(self) -> list[str]:
        """Lists the databases, sorted."""
        return await self._call(calls.dbs())

    async def log(
        self,
        db: str,
        branch: str = "main",
        *,
        since: str | datetime | None = None,
        actor: str | None = None,
        limit: int | None = None,
    ) -> LogResult:
        """The history of a branch, oldest first (see `Client.log`)."""
        return await self._call(calls.log(db, branch, since, actor, limit))

    async def export(
        self,
        db: str,
        branch: str,
        out_path: str | os.PathLike[str],
        checkpoint: str | None = None,
        force: bool = False,
    ) -> int:
        """Writes the branch's durable state (head, or `checkpoint`) to `out_path` on the daemon host."""
        return await self._call(calls.export(db, branch, out_path, checkpoint, force))

    async def checkout_at(self, db: str, branch: str, checkpoint: str, force: bool = False) -> str:
        """Materializes a named checkpoint as a read-only file (cached; `force` rebuilds it); returns its path."""
        return await self._call(calls.checkout_at(db, branch, checkpoint, force))

    async def status(self) -> list[JsonObject]:
        """The sessions open in the daemon, as the raw dicts of the wire."""
        return await self._call(calls.status())

    async def sessions(self) -> list[SessionInfo]:
        """The sessions open in the daemon."""
        return await self._call(calls.sessions())

    async def protect(self, db: str, branch: str) -> ProtectResult:
        """Marks a branch protected: destroying it or promoting onto it then needs `force`."""
        return await self._call(calls.protect(db, branch, True))

    async def unprotect(self, db: str, branch: str) -> ProtectResult:
        """Clears a branch's protected flag."""
        return await self._call(calls.protect(db, branch, False))

    async def diff(
        self, left: str, right: str, summary: bool = False, table: str | None = None, limit: int | None = None
    ) -> DiffResult:
        """Row-level diff of two durable states named `db[@branch[@checkpoint]]` (`summary`: counts only; `table`:
        that table only; `limit`: at most that many row changes of each kind per table, `counts` giving them all)."""
        return await self._call(calls.diff(left, right, summary, table, limit))

    async def gc(self, grace: str | timedelta | None = None) -> GcResult:
        """Reaps expired branches, clears stale destroy claims and deletes garbage older than `grace`."""
        return await self._call(calls.gc(grace))

    async def shutdown(self) -> None:
        """Asks the daemon to shut down; it answers first, then flushes and closes its sessions and exits."""
        await self._call(calls.shutdown())

    async def events(self, timeout: float | None = None) -> AsyncEventStream:
        """Subscribes (on a connection of its own) and returns the stream of events published from now on."""
        return await AsyncEventStream.open(self.socket_path, self._connect_timeout, timeout)

    async def aclose(self) -> None:
        """Closes the connection. Sessions opened on it stay open in the daemon until closed there."""
        async with self._lock:
            if self._closed:
                return
            self._closed = True
            self._writer.close()
            with contextlib.suppress(OSError):
                await self._writer.wait_closed()

    close = aclose


class AsyncSession:
    """A live session on one branch: writes to `path` are captured until `close()`; `async with` closes it."""

    def __init__(self, client: AsyncClient, db: str, branch: str, path: str, warnings: tuple[str, ...] = ()) -> None:
        self.client = client
        self.db = db
        self.branch = branch
        self.path = path
        #: What the daemon said on open that the caller must know, e.g. writes kept as `<branch>-pre-reopen`.
        self.warnings = warnings

    async def __aenter__(self) -> AsyncSession:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()

    async def flush(self, name: str = "", meta: dict[str, str] | None = None) -> int:
        """Makes everything committed so far durable, optionally as a named checkpoint; returns the txid."""
        return await self.client._call(calls.flush(self.db, self.branch, name, meta))

    async def close(self) -> None:
        """Flushes what is pending, stops capture and releases the lease."""
        await self.client._call(calls.close(self.db, self.branch))


class AsyncEventStream:
    """Daemon events from a subscription already live when `await client.events()` returns: `async for` over it,
    and `await close()` it (or `async with` it). Ends after `dropped_slow_consumer` or when the daemon goes away."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, timeout: float | None) -> None:
        self.timeout = timeout
        self._reader = reader
        self._writer = writer
        self._done = False

    @classmethod
    async def open(cls, socket_path: str, connect_timeout: float | None, timeout: float | None) -> AsyncEventStream:
        """Subscribes on a fresh connection and returns once the daemon acknowledged."""
        reader, writer = await _dial(socket_path, connect_timeout)
        stream = cls(reader, writer, timeout)
        try:
            writer.write(encode_request("subscribe", {}))
            await writer.drain()
            decode_response(await asyncio.wait_for(_read_line(reader), connect_timeout))
        except OSError as e:
            await stream.close()
            raise closed_error(e) from e
        except BaseException:
            await stream.close()
            raise
        return stream

    def __aiter__(self) -> AsyncEventStream:
        return self

    async def __anext__(self) -> Event:
        if self._done:
            raise StopAsyncIteration
        try:
            line = await asyncio.wait_for(_read_line(self._reader), self.timeout)
        except asyncio.TimeoutError:
            raise OffshootError(
                f"no daemon event within {self.timeout} s", "TIMEOUT", "pass a longer events(timeout=...)"
            ) from None
        except (OffshootError, OSError) as e:
            await self.close()
            if isinstance(e, OffshootError) and e.code != CONNECTION_CLOSED:
                raise
            raise StopAsyncIteration from None
        event = Event.from_json(parse_object(line))
        if event.type == "dropped_slow_consumer":
            await self.close()
        return event

    async def __aenter__(self) -> AsyncEventStream:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()

    async def close(self) -> None:
        """Ends the subscription and closes its connection."""
        if self._done:
            return
        self._done = True
        self._writer.close()
        with contextlib.suppress(OSError):
            await self._writer.wait_closed()


async def connect_async(
    socket_path: str | os.PathLike[str],
    *,
    timeout: float | None = 5.0,
    actor: str | None = None,
    allow_force: bool = False,
    surface: str | None = None,
    meta: Mapping[str, str] | None = None,
) -> AsyncClient:
    """Connects an `AsyncClient` to the daemon listening on `socket_path`."""
    return await AsyncClient.connect(
        socket_path, timeout=timeout, actor=actor, allow_force=allow_force, surface=surface, meta=meta
    )
