"""LlamaIndex workflows on offshoot: an offshoot checkpoint of the application database at each workflow checkpoint,
and `run_from` as a fork.

A workflow's own checkpoint is its `Context` snapshot (`handler.ctx.to_dict()`), taken from handler code. It is
consistent with the database only while no step runs, so `WorkflowForks.stream` takes both together whenever the
workflow goes idle (waiting for input: `WorkflowIdleEvent`) and when it stops. `fork_at(checkpoint, ...)` forks the
database at such a checkpoint, and `checkpoint.context(workflow)` restores the run on it: `run_from`, in a fork, which
`promote` or `merge` brings back onto the branch it was forked from.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, Literal

from workflows import Context, Workflow
from workflows.events import Event, InputRequiredEvent, StopEvent, WorkflowIdleEvent
from workflows.handler import WorkflowHandler

from ..branch_link import BranchLink
from ..errors import OffshootError
from ..results import Branch, MergeResult
from ..ttl import TTL
from ._one_branch import OneBranch

__all__ = ["WorkflowCheckpoint", "WorkflowForks"]


@dataclass(frozen=True)
class WorkflowCheckpoint:
    """One workflow checkpoint: the offshoot checkpoint `name` of `db@branch` and the workflow's `Context`
    snapshot taken at the same quiet moment."""

    db: str
    branch: str
    name: str
    snapshot: dict[str, Any] = field(repr=False)

    def context(self, workflow: Workflow) -> Context[Any]:
        """The workflow's `Context` as it was here, for `workflow.run(ctx=...)` (on a fork: see `fork_at`)."""
        return Context.from_dict(workflow, self.snapshot)


class WorkflowForks(OneBranch):
    """One branch of the application database a workflow's steps write to (`path`), checkpointed together with the
    workflow. Made by `session()` (a daemon captures the writes) or `at_rest()`; close it to release the branch."""

    surface = "sdk:llama-index/llama-index"
    """What the branch log says this adapter's calls come through."""

    def __init__(self, link: BranchLink) -> None:
        """Wraps an open link; use `session()` or `at_rest()` instead."""
        super().__init__(link)
        self.checkpoints: list[WorkflowCheckpoint] = []
        self.base: str | None = None
        """For a fork made by `fork_at`: the branch it was forked from, which `promote` replaces, `merge` goes into."""
        self.base_head: int | None = None
        """For a fork made by `fork_at`: its base's head txid just before the fork; `promote` needs it unchanged."""
        self._base_marks: set[str] = set()

    async def checkpoint(self, handler: WorkflowHandler, name: str) -> WorkflowCheckpoint:
        """Snapshots the workflow's context and checkpoints the database as `name`, together. Call it only while
        no step runs (idle, or stopped), as `stream` does."""
        snapshot = handler.ctx.to_dict() if handler.ctx is not None else {}
        async with self._verbs:
            await asyncio.to_thread(self.link.flush, name, {"workflow_checkpoint": str(len(self.checkpoints) + 1)})
        checkpoint = WorkflowCheckpoint(self.link.db, self.link.branch, name, snapshot)
        self.checkpoints.append(checkpoint)
        return checkpoint

    async def stream(self, handler: WorkflowHandler) -> AsyncIterator[Event]:
        """The handler's events (internal ones included), with a checkpoint `idle-<n>` each time the workflow waits
        for input and `stop` when it ends (before the `StopEvent` is yielded). An `InputRequiredEvent` is held back
        until the idle checkpoint after it is taken, so an answer sent on seeing it can never run a step early."""
        idle = 0
        held: list[Event] = []
        async for event in handler.stream_events(expose_internal=True):
            if isinstance(event, InputRequiredEvent):
                held.append(event)
                continue
            if isinstance(event, WorkflowIdleEvent):
                idle += 1
                await self.checkpoint(handler, f"idle-{idle}")
            elif isinstance(event, StopEvent):
                await self.checkpoint(handler, "stop")
            yield event
            if isinstance(event, WorkflowIdleEvent | StopEvent):
                for waiting in held:
                    yield waiting
                held.clear()
        for waiting in held:
            yield waiting

    async def fork_at(self, checkpoint: WorkflowCheckpoint, new_branch: str, *, ttl: TTL = None) -> WorkflowForks:
        """Forks the database at `checkpoint` into `new_branch` (expiring after `ttl` unless touched) and returns
        the forks of the new branch: run the workflow there with `ctx=checkpoint.context(workflow)`."""
        async with self._verbs:
            # Read before the fork: a move of the base in between then refuses the promote rather than passing it.
            base = await asyncio.to_thread(self.link.listed, self.link.branch)
            link = await asyncio.to_thread(
                self.link.fork, new_branch, ttl=ttl, from_checkpoint=checkpoint.name, meta=None
            )
        forks = type(self)(link)
        forks.base = base.branch
        forks.base_head = base.head_txid
        forks._base_marks = _marks(base)
        return forks

    async def promote(self, *, force: bool = False) -> int:
        """Promotes this fork (made by `fork_at`) onto the branch it was forked from, only while that branch is still
        at the head it had then: otherwise `BASE_MOVED`, nothing changed. Close the base's own `WorkflowForks` first
        (a daemon refuses to promote onto an open session); `force` for a protected base (main). Returns the txid."""
        base = self._base_of("promote", "onto")
        async with self._verbs:
            await asyncio.to_thread(self._refuse_moved_base, base)
            return await asyncio.to_thread(self.link.promote, base, force, self.base_head)

    async def merge(self, *, prefer: Literal["source", "target"] | None = None, force: bool = False) -> MergeResult:
        """Merges this fork's (made by `fork_at`) row changes into the branch it was forked from, three-way, whatever
        else that branch took since (a sibling fork's merge, say). Rows both changed differently are listed in
        `conflicts` with `applied` False and nothing changed, unless `prefer` picks a side. Like `promote`, close
        the base's own `WorkflowForks` first when it is a daemon session; `force` for a protected base (main). Returns
        what the merge did: its `txid`, `checkpoint` and undo point `backup` when applied."""
        base = self._base_of("merge", "into")
        async with self._verbs:
            return await asyncio.to_thread(self.link.merge, base, force, prefer)

    def _base_of(self, verb: str, preposition: str) -> str:
        """The branch `fork_at` forked this from, for `verb`; INVALID_ARGUMENT when there is none."""
        if self.base is None:
            raise OffshootError(
                f"{self.link.db}@{self.link.branch} was not made by fork_at: "
                f"there is no base to {verb} it {preposition}",
                "INVALID_ARGUMENT",
                f"{verb} the WorkflowForks that fork_at returned",
            )
        return self.base

    def _refuse_moved_base(self, base: str) -> None:
        """The promote's `if_head` compares the base's head txid, which a sibling fork's promote can bring back with
        another state (retries from one checkpoint write as many transactions): the checkpoints the base had at its
        head when this fork was made must still be there too, else BASE_MOVED."""
        now = self.link.listed(base)
        if now.head_txid != self.base_head or self._base_marks <= _marks(now):
            return
        raise OffshootError(
            f"{self.link.db}@{base} moved since {self.link.db}@{self.link.branch} was forked: its checkpoints at "
            f"txid {self.base_head} ({', '.join(sorted(self._base_marks))}) are gone; nothing was promoted",
            "BASE_MOVED",
            f"fork {self.link.db}@{base} again and redo the run there, or promote without the check (the CLI's "
            "promote without --if-head) to replace its head anyway",
        )

    async def rollback(self, checkpoint: WorkflowCheckpoint) -> None:
        """Rolls this branch back to `checkpoint`, dropping the later ones; close your connections to `path`
        first."""
        async with self._verbs:
            await asyncio.to_thread(self.link.rollback, checkpoint.name)
        del self.checkpoints[self.checkpoints.index(checkpoint) + 1 :]

    def close(self) -> None:
        """Releases the branch (a daemon session is flushed and closed); the branch stays."""
        self.link.close()


def _marks(b: Branch) -> set[str]:
    """The names of the checkpoints a listed branch has at its head."""
    return {c.name for c in b.checkpoints_v2 if c.txid == b.head_txid}
