"""`AsyncOffshootSaver`: LangGraph's stock `AsyncSqliteSaver` on an offshoot branch, for `ainvoke`/`astream` graphs."""

from __future__ import annotations

import asyncio
import copy
import os
from collections.abc import AsyncIterator, Callable, Collection, Iterator, Mapping, Sequence
from types import TracebackType
from typing import Any, TypeVar

import aiosqlite
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    DeltaChannelHistory,
)
from langgraph.checkpoint.serde.base import SerializerProtocol
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from offshoot import TTL, Store

from .at_rest_link import AtRestLink
from .attachment import Allowlist, Attachment, derive
from .branch_link import BranchLink
from .opening import SaverOpening
from .session_link import SessionLink

T = TypeVar("T")


class AsyncOffshootSaver(BaseCheckpointSaver[str]):
    """The async twin of `OffshootSaver`: every checkpointer method is the stock `AsyncSqliteSaver`'s on the branch's
    checkout, and the branch verbs are coroutines. Made by `session()` or `at_rest()`."""

    def __init__(self, link: BranchLink, inner: AsyncSqliteSaver, *, serde: SerializerProtocol | None = None) -> None:
        """Wraps an open link and the stock saver on its checkout; use `session()` or `at_rest()` instead."""
        super().__init__(serde=inner.serde)
        self._serde_arg = serde
        self._att: Attachment[AsyncSqliteSaver] = Attachment(link, inner)
        self._allowlist: Allowlist = ()
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
        return SaverOpening(lambda: cls._attach(lambda: SessionLink.open(sock, db, branch, create=create), serde=serde))

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
        return SaverOpening(lambda: cls._attach(lambda: AtRestLink.open(store, db, branch, create=create), serde=serde))

    @property
    def db(self) -> str:
        """The database."""
        return self._att.link.db

    @property
    def branch(self) -> str:
        """The branch this saver writes."""
        return self._att.link.branch

    @property
    def path(self) -> str:
        """The checkout the stock saver writes."""
        return self._att.link.path

    @property
    def closed(self) -> bool:
        """Whether `close()`/`aclose()` or `destroy()` ran."""
        return self._att.closed

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

    def with_allowlist(self, extra_allowlist: Collection[tuple[str, ...]]) -> AsyncOffshootSaver:
        """A clone sharing this saver's branch and connection whose stock saver has the extra msgpack allowlist."""
        current = self._inner
        if derive(current, extra_allowlist).serde is current.serde:
            return self
        clone = copy.copy(self)
        clone._allowlist = (*self._allowlist, tuple(extra_allowlist))
        clone.serde = clone._inner.serde
        return clone

    # The BaseCheckpointSaver surface, each method handed to the stock saver (tests/test_delegation_tripwire.py).

    @property
    def config_specs(self) -> list[Any]:
        """The stock saver's."""
        return list(self._inner.config_specs)

    async def aget(self, config: RunnableConfig) -> Checkpoint | None:
        """The stock saver's."""
        return await self._inner.aget(config)

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """The stock saver's."""
        return await self._inner.aget_tuple(config)

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        """The stock saver's."""
        async for item in self._inner.alist(config, filter=filter, before=before, limit=limit):
            yield item

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """The stock saver's."""
        return await self._inner.aput(config, checkpoint, metadata, new_versions)

    async def aput_writes(
        self, config: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str, task_path: str = ""
    ) -> None:
        """The stock saver's."""
        await self._inner.aput_writes(config, writes, task_id, task_path)

    async def adelete_thread(self, thread_id: str) -> None:
        """The stock saver's."""
        await self._inner.adelete_thread(thread_id)

    async def adelete_for_runs(self, run_ids: Sequence[str]) -> None:
        """The stock saver's."""
        await self._inner.adelete_for_runs(run_ids)

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """The stock saver's."""
        await self._inner.acopy_thread(source_thread_id, target_thread_id)

    async def aprune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        """The stock saver's."""
        await self._inner.aprune(thread_ids, strategy=strategy)

    async def aget_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> Mapping[str, DeltaChannelHistory]:
        """The stock saver's."""
        return await self._inner.aget_delta_channel_history(config=config, channels=channels)

    def get_next_version(self, current: str | None, channel: None) -> str:
        """The stock saver's."""
        return self._inner.get_next_version(current, channel)

    # The stock AsyncSqliteSaver's sync methods work from threads other than the event loop's.

    def get(self, config: RunnableConfig) -> Checkpoint | None:
        """The stock saver's."""
        return self._inner.get(config)

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """The stock saver's."""
        return self._inner.get_tuple(config)

    def list(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        """The stock saver's."""
        return self._inner.list(config, filter=filter, before=before, limit=limit)

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """The stock saver's."""
        return self._inner.put(config, checkpoint, metadata, new_versions)

    def put_writes(
        self, config: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str, task_path: str = ""
    ) -> None:
        """The stock saver's."""
        self._inner.put_writes(config, writes, task_id, task_path)

    def delete_thread(self, thread_id: str) -> None:
        """The stock saver's."""
        self._inner.delete_thread(thread_id)

    def delete_for_runs(self, run_ids: Sequence[str]) -> None:
        """The stock saver's."""
        self._inner.delete_for_runs(run_ids)

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """The stock saver's."""
        self._inner.copy_thread(source_thread_id, target_thread_id)

    def prune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        """The stock saver's."""
        self._inner.prune(thread_ids, strategy=strategy)

    def get_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> Mapping[str, DeltaChannelHistory]:
        """The stock saver's."""
        return self._inner.get_delta_channel_history(config=config, channels=channels)

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

    @property
    def _inner(self) -> AsyncSqliteSaver:
        return self._att.saver_for(self._allowlist)

    def _open_link(self) -> BranchLink:
        self._att.saver_for(())
        return self._att.link

    async def _verb(self, call: Callable[[], T]) -> T:
        # One branch verb at a time: the daemon client is one request, one response on one socket.
        async with self._verbs:
            return await asyncio.to_thread(call)


async def _stock(path: str, serde: SerializerProtocol | None) -> AsyncSqliteSaver:
    return AsyncSqliteSaver(await aiosqlite.connect(path), serde=serde)
