"""`AsyncOffshootSaver`: LangGraph's stock `AsyncSqliteSaver` on an offshoot branch, for `ainvoke`/`astream` graphs."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Mapping
from types import TracebackType
from typing import Literal, TypeVar

import aiosqlite
from langgraph.checkpoint.serde.base import SerializerProtocol
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from offshoot import TTL, MergeResult, Store
from offshoot.at_rest_link import AtRestLink
from offshoot.branch_link import BranchLink
from offshoot.session_link import SessionLink

from . import thread_ops
from .core import SURFACE, SaverCore
from .opening import SaverOpening

T = TypeVar("T")


class AsyncOffshootSaver(SaverCore[AsyncSqliteSaver]):
    """The async twin of `OffshootSaver`: every checkpointer method is the stock `AsyncSqliteSaver`'s on the branch's
    checkout, and the branch verbs are coroutines. Made by `session()` or `at_rest()`."""

    def __init__(self, link: BranchLink, inner: AsyncSqliteSaver, *, serde: SerializerProtocol | None = None) -> None:
        """Wraps an open link and the stock saver on its checkout; use `session()` or `at_rest()` instead."""
        super().__init__(link, inner, serde)
        self._verbs = asyncio.Lock()

    @classmethod
    def session(
        cls,
        socket_path: str | os.PathLike[str],
        db: str,
        branch: str = "main",
        *,
        create: bool = True,
        serde: SerializerProtocol | None = None,
    ) -> SaverOpening[AsyncOffshootSaver]:
        """Opens a live daemon session on `db@branch`: `async with AsyncOffshootSaver.session(...) as saver:`, or
        `saver = await AsyncOffshootSaver.session(...)` and later `await saver.aclose()`."""
        sock = os.fspath(socket_path)
        return SaverOpening(
            lambda: cls._attach(lambda: SessionLink.open(sock, db, branch, create=create, surface=SURFACE), serde=serde)
        )

    @classmethod
    def at_rest(
        cls,
        store: Store | str | os.PathLike[str],
        db: str,
        branch: str = "main",
        *,
        create: bool = True,
        serde: SerializerProtocol | None = None,
    ) -> SaverOpening[AsyncOffshootSaver]:
        """Saves into the at-rest checkout of `db@branch` in `store`, no daemon needed; used like `session()`."""
        return SaverOpening(
            lambda: cls._attach(lambda: AtRestLink.open(store, db, branch, create=create, surface=SURFACE), serde=serde)
        )

    async def checkpoint(self, name: str = "", meta: Mapping[str, str] | None = None) -> int:
        """Makes everything written so far durable, as the named checkpoint `name`; returns its txid."""
        link = self._open_link()
        return await self._verb(lambda: link.flush(name, meta))

    async def fork_thread(
        self,
        new_branch: str,
        *,
        ttl: TTL = None,
        from_checkpoint: str | None = None,
        meta: Mapping[str, str] | None = None,
    ) -> AsyncOffshootSaver:
        """Forks this branch into `new_branch` (its head, or `from_checkpoint`) and returns a new saver on it."""
        link = self._open_link()
        forked = await self._verb(lambda: link.fork(new_branch, ttl=ttl, from_checkpoint=from_checkpoint, meta=meta))
        return await type(self)._attach(lambda: forked, serde=self._serde_arg)

    async def rollback(self, to: str) -> None:
        """Restores the branch to checkpoint `to`, discarding everything after it; the saver stays valid in place."""
        link = self._open_link()
        async with self._verbs:
            await self._att.inner.conn.close()
            try:
                await asyncio.to_thread(link.rollback, to)
            finally:
                inner = await _stock(link.path, self._serde_arg)
                self._att.replace(lambda: inner)

    async def promote(self, onto: str, force: bool = False) -> int:
        """Repoints branch `onto` at this branch's state; `force` if `onto` is protected. `onto` must not be open."""
        link = self._open_link()
        return await self._verb(lambda: link.promote(onto, force))

    async def merge(
        self, into: str, *, prefer: Literal["source", "target"] | None = None, force: bool = False
    ) -> MergeResult:
        """Merges this branch's row changes into `into`, three-way; rows both changed differently hold it (`applied`
        False, nothing changed) unless `prefer` picks a side. `force` if `into` is protected; `into` must be closed."""
        link = self._merging_link(into)
        return await self._verb(lambda: link.merge(into, force, prefer))

    async def destroy(self, force: bool = False) -> None:
        """Closes the saver and deletes its branch; a protected branch needs `force`. A no-op when closed."""
        if self._att.closed:
            return
        self._att.closed = True
        async with self._verbs:
            try:
                await self._att.inner.conn.close()
            finally:
                await asyncio.to_thread(self._att.link.destroy, force)

    async def close(self) -> None:
        """Closes the SQLite connection and releases the branch (a session is flushed and closed). Idempotent."""
        if self._att.closed:
            return
        self._att.closed = True
        async with self._verbs:
            try:
                await self._att.inner.conn.close()
            finally:
                await asyncio.to_thread(self._att.link.close)

    async def aclose(self) -> None:
        """Same as `close()`."""
        await self.close()

    async def __aenter__(self) -> AsyncOffshootSaver:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()

    async def setup(self) -> None:
        """The stock saver's: creates its tables in the checkout when missing (every method does so first)."""
        await self._inner.setup()

    def _run_plan(self, plan: thread_ops.Plan) -> None:
        # As the stock async saver's sync methods: the work runs on its loop, from another thread.
        inner = self._inner
        try:
            if asyncio.get_running_loop() is inner.loop:
                plan.close()
                raise asyncio.InvalidStateError(
                    "Synchronous calls to AsyncOffshootSaver are only allowed from a different thread. From the "
                    "main thread, use the async interface, e.g. `await checkpointer.acopy_thread(...)`."
                )
        except RuntimeError:
            pass
        asyncio.run_coroutine_threadsafe(self._arun_plan(plan), inner.loop).result()

    async def _arun_plan(self, plan: thread_ops.Plan) -> None:
        inner = self._inner
        await inner.setup()
        async with inner.lock, inner.conn.cursor() as cur:
            try:
                statement = next(plan)
                while True:
                    await cur.execute(*statement)
                    statement = plan.send([tuple(r) for r in await cur.fetchall()])
            except StopIteration:
                await inner.conn.commit()
            except BaseException:
                await inner.conn.rollback()
                raise

    @classmethod
    async def _attach(
        cls, open_link: Callable[[], BranchLink], *, serde: SerializerProtocol | None = None
    ) -> AsyncOffshootSaver:
        link = await asyncio.to_thread(open_link)
        try:
            inner = await _stock(link.path, serde)
        except BaseException:
            await asyncio.to_thread(link.close)
            raise
        return cls(link, inner, serde=serde)

    async def _verb(self, call: Callable[[], T]) -> T:
        # One branch verb at a time: the daemon client is one request, one response on one socket.
        async with self._verbs:
            return await asyncio.to_thread(call)


async def _stock(path: str, serde: SerializerProtocol | None) -> AsyncSqliteSaver:
    return AsyncSqliteSaver(await aiosqlite.connect(path), serde=serde)
