"""`OffshootSaver`: LangGraph's stock `SqliteSaver` on an offshoot branch, which can fork, roll back and promote."""

from __future__ import annotations

import copy
import os
import sqlite3
from collections.abc import AsyncIterator, Collection, Iterator, Mapping, Sequence
from types import TracebackType
from typing import Any

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
from langgraph.checkpoint.sqlite import SqliteSaver
from offshoot import TTL, Store

from .at_rest_link import AtRestLink
from .attachment import Allowlist, Attachment, derive
from .branch_link import BranchLink
from .session_link import SessionLink


class OffshootSaver(BaseCheckpointSaver[str]):
    """A LangGraph checkpointer doing no checkpoint I/O of its own: every method is the stock `SqliteSaver`'s, on the
    branch's checkout. Made by `session()` or `at_rest()`; close it (or use `with`) to release the branch."""

    def __init__(self, link: BranchLink, *, serde: SerializerProtocol | None = None) -> None:
        """Wraps an open link; use `session()` or `at_rest()` instead."""
        self._serde_arg = serde
        inner = self._stock(link.path)
        super().__init__(serde=inner.serde)
        self._att: Attachment[SqliteSaver] = Attachment(link, inner)
        self._allowlist: Allowlist = ()

    @classmethod
    def session(
        cls,
        socket_path: str | os.PathLike[str],
        db: str,
        branch: str = "main",
        *,
        create: bool = True,
        serde: SerializerProtocol | None = None,
    ) -> OffshootSaver:
        """Opens a live session on `db@branch` in the daemon at `socket_path` (creating `db` first unless
        `create=False`) and saves there, with the stock saver's serializer unless `serde` is given. Nothing is durable
        in the store until `checkpoint()`, `fork_thread()`, `promote()` or `close()`."""
        return cls._over(SessionLink.open(os.fspath(socket_path), db, branch, create=create), serde)

    @classmethod
    def at_rest(
        cls,
        store: Store | str | os.PathLike[str],
        db: str,
        branch: str = "main",
        *,
        create: bool = True,
        serde: SerializerProtocol | None = None,
    ) -> OffshootSaver:
        """Saves into the at-rest checkout of `db@branch` in `store` (a path, URL or `offshoot.Store`), no daemon
        needed; `checkpoint()` and the branch verbs run the `offshoot` CLI."""
        return cls._over(AtRestLink.open(store, db, branch, create=create), serde)

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
        """Whether `close()` or `destroy()` ran."""
        return self._att.closed

    def checkpoint(self, name: str = "", meta: Mapping[str, str] | None = None) -> int:
        """Makes everything written so far durable, as the named checkpoint `name`; returns its txid."""
        self._open_link()
        return self._att.link.flush(name, meta)

    def fork_thread(
        self,
        new_branch: str,
        *,
        ttl: TTL = None,
        from_checkpoint: str | None = None,
        meta: Mapping[str, str] | None = None,
    ) -> OffshootSaver:
        """Forks this branch into `new_branch` (at its head, everything written so far included, or at
        `from_checkpoint`) and returns a new, independent saver on it; `ttl` makes the fork expire unless touched."""
        link = self._open_link().fork(new_branch, ttl=ttl, from_checkpoint=from_checkpoint, meta=meta)
        return type(self)._over(link, self._serde_arg)

    def rollback(self, to: str) -> None:
        """Restores the branch to checkpoint `to`, discarding everything after it (unflushed writes too). The saver
        stays valid in place: graphs compiled against it keep working."""
        link = self._open_link()
        self._att.inner.conn.close()
        try:
            link.rollback(to)
        finally:
            self._att.replace(lambda: self._stock(link.path))

    def promote(self, onto: str, force: bool = False) -> int:
        """Repoints branch `onto` at this branch's state (written so far); `force` if `onto` is protected. `onto`
        must have no open session. This saver keeps writing its own branch."""
        return self._open_link().promote(onto, force)

    def destroy(self, force: bool = False) -> None:
        """Closes the saver and deletes its branch; a protected branch needs `force`. A no-op when closed."""
        if self._att.closed:
            return
        self._att.closed = True
        try:
            self._att.inner.conn.close()
        finally:
            self._att.link.destroy(force)

    def close(self) -> None:
        """Closes the SQLite connection and releases the branch (a session is flushed and closed). Idempotent."""
        if self._att.closed:
            return
        self._att.closed = True
        try:
            self._att.inner.conn.close()
        finally:
            self._att.link.close()

    def __enter__(self) -> OffshootSaver:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def with_allowlist(self, extra_allowlist: Collection[tuple[str, ...]]) -> OffshootSaver:
        """A clone sharing this saver's branch and connection whose stock saver has the extra msgpack allowlist."""
        allowlist = (*self._allowlist, tuple(extra_allowlist))
        current = self._inner
        if derive(current, extra_allowlist).serde is current.serde:
            return self
        clone = copy.copy(self)
        clone._allowlist = allowlist
        clone.serde = clone._inner.serde
        return clone

    # The BaseCheckpointSaver surface, each method handed to the stock saver (tests/test_delegation_tripwire.py).

    @property
    def config_specs(self) -> list[Any]:
        """The stock saver's."""
        return list(self._inner.config_specs)

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

    def get_next_version(self, current: str | None, channel: None) -> str:
        """The stock saver's."""
        return self._inner.get_next_version(current, channel)

    # The stock SqliteSaver's async methods raise, pointing at AsyncSqliteSaver: use AsyncOffshootSaver for them.

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

    @classmethod
    def _over(cls, link: BranchLink, serde: SerializerProtocol | None) -> OffshootSaver:
        try:
            return cls(link, serde=serde)
        except BaseException:
            link.close()
            raise

    @property
    def _inner(self) -> SqliteSaver:
        return self._att.saver_for(self._allowlist)

    def _open_link(self) -> BranchLink:
        self._att.saver_for(())
        return self._att.link

    def _stock(self, path: str) -> SqliteSaver:
        # LangGraph may call a checkpointer from worker threads; SqliteSaver serializes its cursors with its own lock.
        return SqliteSaver(sqlite3.connect(path, check_same_thread=False), serde=self._serde_arg)
