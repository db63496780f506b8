"""What the sync and the async saver share: the branch's identity, the allowlist clones, and every checkpointer
method, each handed to the stock SQLite saver on the branch's checkout (or run as a plan on its connection)."""

from __future__ import annotations

import copy
from collections.abc import AsyncIterator, Collection, Iterator, Mapping, Sequence
from typing import Any, Generic, TypeVar

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
from offshoot import OffshootError
from offshoot.branch_link import BranchLink

from . import thread_ops
from .attachment import Allowlist, Attachment, Inner, derive

SURFACE = "sdk:langgraph/langgraph"
"""What the branch log says the saver's calls come through."""

Saver = TypeVar("Saver", bound="SaverCore[Any]")


class SaverCore(BaseCheckpointSaver[str], Generic[Inner]):
    """A checkpointer doing no checkpoint I/O of its own, over an `Attachment` of a branch link and a stock saver.
    The stock savers leave `copy_thread`, `delete_for_runs` and `prune` unimplemented; here they are plans on the
    stock saver's tables (`thread_ops`), which each subclass runs on its stock saver's connection."""

    def __init__(self, link: BranchLink, inner: Inner, serde: SerializerProtocol | None) -> None:
        super().__init__(serde=inner.serde)
        self._serde_arg = serde
        self._att: Attachment[Inner] = Attachment(link, inner)
        self._allowlist: Allowlist = ()

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

    def with_allowlist(self: Saver, extra_allowlist: Collection[tuple[str, ...]]) -> Saver:
        """A clone sharing this saver's branch and connection whose stock saver has the extra msgpack allowlist."""
        current = self._inner
        if derive(current, extra_allowlist).serde is current.serde:
            return self
        clone = copy.copy(self)
        clone._allowlist = (*self._allowlist, tuple(extra_allowlist))
        clone.serde = clone._inner.serde
        return clone

    @property
    def _inner(self) -> Inner:
        return self._att.saver_for(self._allowlist)

    def _open_link(self) -> BranchLink:
        self._att.saver_for(())
        return self._att.link

    def _merging_link(self, into: str) -> BranchLink:
        # An empty target is refused here, alike in both modes (the CLI at rest would call it a usage error).
        link = self._open_link()
        if not into:
            raise OffshootError(
                f"a merge of {link.db}@{link.branch} needs a branch to merge into",
                "INVALID_ARGUMENT",
                "pass merge the target branch as into",
            )
        return link

    def _run_plan(self, plan: thread_ops.Plan) -> None:
        """Runs a plan on the stock saver's connection, from synchronous code."""
        raise NotImplementedError

    async def _arun_plan(self, plan: thread_ops.Plan) -> None:
        """Runs a plan on the stock saver's connection, from the event loop."""
        raise NotImplementedError

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
        """Deletes the checkpoints (every thread and namespace) whose metadata names one of `run_ids`, and their
        pending writes."""
        self._run_plan(thread_ops.delete_for_runs(run_ids))

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """Copies every checkpoint of the source thread, with its metadata and pending writes, to the target."""
        self._run_plan(thread_ops.copy_thread(source_thread_id, target_thread_id))

    def prune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        """`keep_latest`: keeps each namespace's latest checkpoint (and the ancestors its delta channels need);
        `delete`: deletes the threads' checkpoints. Pending writes go with their checkpoints."""
        self._run_plan(thread_ops.prune(thread_ids, strategy))

    def get_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> Mapping[str, DeltaChannelHistory]:
        """The stock saver's."""
        return self._inner.get_delta_channel_history(config=config, channels=channels)

    def get_next_version(self, current: str | None, channel: None) -> str:
        """The stock saver's."""
        return self._inner.get_next_version(current, channel)

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
        """`delete_for_runs`, on the event loop."""
        await self._arun_plan(thread_ops.delete_for_runs(run_ids))

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """`copy_thread`, on the event loop."""
        await self._arun_plan(thread_ops.copy_thread(source_thread_id, target_thread_id))

    async def aprune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        """`prune`, on the event loop."""
        await self._arun_plan(thread_ops.prune(thread_ids, strategy))

    async def aget_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> Mapping[str, DeltaChannelHistory]:
        """The stock saver's."""
        return await self._inner.aget_delta_channel_history(config=config, channels=channels)
