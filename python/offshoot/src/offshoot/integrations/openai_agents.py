"""OpenAI Agents SDK on offshoot: `OffshootSession` keeps a conversation on a branch, `ForkPerRun` runs an agent in a
fork of the application database its tools write to.

`OffshootSession` is the SDK's own `SQLiteSession` on the branch's checkout (the SDK serializes every item; offshoot
manages the file underneath), plus the branch verbs. `ForkPerRun` forks the application database per run, hands the
tools the fork's path through the run context, checkpoints after every tool call, and keeps, promotes or discards the
fork by the caller's verdict. Every offshoot failure is an `OffshootError` with the daemon's or CLI's code.
"""

from __future__ import annotations

import asyncio
import inspect
import os
import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, TypeVar

from agents import Agent, RunContextWrapper, RunHooks, Runner, RunResult, Tool, TResponseInputItem
from agents.memory import SessionSettings, SQLiteSession

from ..at_rest_link import AtRestLink
from ..branch_link import BranchLink
from ..errors import OffshootError
from ..session_link import SessionLink
from ..store import Store
from ..ttl import TTL
from ._fork_per_run import Fork, ForkPer, Verdict

__all__ = ["ForkPerRun", "ForkRun", "OffshootSession", "RunFork", "Verdict"]

T = TypeVar("T")


class OffshootSession:
    """A `Session` (the SDK's protocol) whose items live in a SQLite file on an offshoot branch: every item method is
    the stock `SQLiteSession`'s on the branch's checkout. Made by `session()` (a daemon captures the writes) or
    `at_rest()` (no daemon); pass it to `Runner.run(..., session=...)`. Close it (or use `with`) to release the
    branch. The verbs are coroutines, run one at a time."""

    def __init__(
        self,
        link: BranchLink,
        session_id: str,
        *,
        sessions_table: str = "agent_sessions",
        messages_table: str = "agent_messages",
        session_settings: SessionSettings | None = None,
    ) -> None:
        """Wraps an open link; use `session()` or `at_rest()` instead."""
        self.session_id = session_id
        self._link = link
        self._tables = (sessions_table, messages_table)
        self._inner = self._stock(session_settings)
        self._verbs = asyncio.Lock()
        self._closed = False

    @classmethod
    def session(
        cls,
        socket_path: str | os.PathLike[str],
        db: str,
        branch: str = "main",
        *,
        session_id: str,
        create: bool = True,
        session_settings: SessionSettings | None = None,
    ) -> OffshootSession:
        """Opens a live daemon session on `db@branch` (creating `db` unless `create=False`) holding the items of
        `session_id`. Nothing is durable in the store until `checkpoint()`, `fork()`, `promote()` or `close()`."""
        link = SessionLink.open(os.fspath(socket_path), db, branch, create=create, surface=ForkPerRun.surface)
        return cls._over(link, session_id, session_settings)

    @classmethod
    def at_rest(
        cls,
        store: Store | str | os.PathLike[str],
        db: str,
        branch: str = "main",
        *,
        session_id: str,
        create: bool = True,
        session_settings: SessionSettings | None = None,
    ) -> OffshootSession:
        """Keeps the items of `session_id` in the at-rest checkout of `db@branch` in `store` (a path, URL or
        `offshoot.Store`), no daemon needed; `checkpoint()` and the verbs run the `offshoot` CLI."""
        return cls._over(
            AtRestLink.open(store, db, branch, create=create, surface=ForkPerRun.surface), session_id, session_settings
        )

    @property
    def db(self) -> str:
        """The database."""
        return self._link.db

    @property
    def branch(self) -> str:
        """The branch holding the items."""
        return self._link.branch

    @property
    def path(self) -> str:
        """The checkout the stock session writes."""
        return self._link.path

    @property
    def session_settings(self) -> SessionSettings | None:
        """The stock session's settings (its default `limit`)."""
        return self._inner.session_settings

    @session_settings.setter
    def session_settings(self, settings: SessionSettings | None) -> None:
        self._inner.session_settings = settings

    # The Session protocol, each method the stock SQLiteSession's.

    async def get_items(self, limit: int | None = None) -> list[TResponseInputItem]:
        """The stock session's."""
        return await self._live().get_items(limit)

    async def add_items(self, items: list[TResponseInputItem]) -> None:
        """The stock session's."""
        await self._live().add_items(items)

    async def pop_item(self) -> TResponseInputItem | None:
        """The stock session's."""
        return await self._live().pop_item()

    async def clear_session(self) -> None:
        """The stock session's."""
        await self._live().clear_session()

    # The branch verbs.

    async def checkpoint(self, name: str, meta: Mapping[str, str] | None = None) -> int:
        """Makes every item so far durable as the checkpoint `name`; returns its txid."""
        self._live()
        return await self._verb(lambda: self._link.flush(name, meta))

    async def fork(
        self,
        new_branch: str,
        *,
        ttl: TTL = None,
        from_checkpoint: str | None = None,
        meta: Mapping[str, str] | None = None,
    ) -> OffshootSession:
        """Forks the branch into `new_branch` (its head, every item so far included, or `from_checkpoint`) and
        returns a new, independent session with the same `session_id` on it; `ttl` makes the fork expire unless
        touched."""
        self._live()
        link = await self._verb(
            lambda: self._link.fork(new_branch, ttl=ttl, from_checkpoint=from_checkpoint, meta=meta)
        )
        return type(self)._over(link, self.session_id, self.session_settings, self._tables)

    async def rollback(self, name: str) -> None:
        """Restores the branch to checkpoint `name`, dropping every item added after it; this object stays valid."""
        self._live().close()
        try:
            await self._verb(lambda: self._link.rollback(name))
        finally:
            self._inner = self._stock(self._inner.session_settings)

    async def promote(self, onto: str, force: bool = False) -> int:
        """Repoints branch `onto` at this branch's state (items so far included); `force` if `onto` is protected.
        `onto` must have no open session. This session keeps writing its own branch."""
        self._live()
        return await self._verb(lambda: self._link.promote(onto, force))

    async def destroy(self, force: bool = False) -> None:
        """Closes the session and deletes its branch; a protected branch needs `force`. A no-op when closed."""
        if self._closed:
            return
        self._closed = True
        try:
            self._inner.close()
        finally:
            await self._verb(lambda: self._link.destroy(force))

    def close(self) -> None:
        """Closes the SQLite connections and releases the branch (a daemon session is flushed and closed)."""
        if self._closed:
            return
        self._closed = True
        try:
            self._inner.close()
        finally:
            self._link.close()

    def __enter__(self) -> OffshootSession:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    @classmethod
    def _over(
        cls,
        link: BranchLink,
        session_id: str,
        settings: SessionSettings | None,
        tables: tuple[str, str] = ("agent_sessions", "agent_messages"),
    ) -> OffshootSession:
        try:
            return cls(link, session_id, sessions_table=tables[0], messages_table=tables[1], session_settings=settings)
        except BaseException:
            link.close()
            raise

    def _stock(self, settings: SessionSettings | None) -> SQLiteSession:
        return SQLiteSession(
            self.session_id,
            self._link.path,
            sessions_table=self._tables[0],
            messages_table=self._tables[1],
            session_settings=settings,
        )

    def _live(self) -> SQLiteSession:
        if self._closed:
            raise OffshootError(
                f"this session on {self._link.db}@{self._link.branch} is closed",
                "CLOSED",
                "open a new one with OffshootSession.session(...) or OffshootSession.at_rest(...)",
            )
        return self._inner

    async def _verb(self, call: Callable[[], T]) -> T:
        # One branch verb at a time: the daemon client is one request, one response on one socket.
        async with self._verbs:
            return await asyncio.to_thread(call)


_UNSAFE_NAME = re.compile(r"[^a-z0-9_.-]+")


@dataclass
class RunFork(Fork):
    """The fork one run works in. Tools reach it as `ctx.context` (unless `ForkPerRun.run` was given a `context`
    factory) and write to `path`; `checkpoints` names the state after each tool call, oldest first."""

    _lock: asyncio.Lock = field(default_factory=asyncio.Lock, repr=False)

    async def checkpoint(self, name: str, meta: Mapping[str, str] | None = None) -> int:
        """Makes the fork's writes so far durable as the checkpoint `name` (also listed in `checkpoints`)."""
        async with self._lock:
            txid = await asyncio.to_thread(self.link.flush, name, meta)
            self.checkpoints.append(name)
            return txid

    async def _tool_done(self, tool: Tool, context: RunContextWrapper[Any]) -> None:
        # An ephemeral run records no checkpoint of its own: a named one would keep the fork in the store.
        if self.ephemeral:
            return
        name = f"{self._next('tool')}-{_UNSAFE_NAME.sub('-', tool.name.lower()).strip('-')[:64] or 'tool'}"
        call_id = getattr(context, "tool_call_id", None)
        await self.checkpoint(name, {"tool": tool.name, **({"call_id": call_id} if isinstance(call_id, str) else {})})


@dataclass
class ForkRun:
    """What `ForkPerRun.run` did: the SDK's result, the fork (its checkpoints), the verdict and, when promoted, the
    promote's txid; a promote verdict that was refused (`base_moved`, or another promote held the base) says why in
    `promote_error`, its fork kept."""

    result: RunResult
    fork: RunFork
    verdict: Verdict
    promoted_txid: int | None = None
    promote_error: OffshootError | None = None
    """Why the promote verdict was not carried out (`BASE_MOVED`, `LEASE_HELD`): the fork is kept, nothing retried."""

    @property
    def base_moved(self) -> bool:
        """True when the promote was refused because the base moved since the fork (`BASE_MOVED`)."""
        return self.promote_error is not None and self.promote_error.code == "BASE_MOVED"


class _ForkHooks(RunHooks[Any]):
    """Checkpoints the fork after every tool call, then hands each event to the caller's own hooks."""

    def __init__(self, fork: RunFork, inner: RunHooks[Any] | None) -> None:
        self.fork = fork
        self.inner = inner or RunHooks()

    async def on_llm_start(self, context: Any, agent: Any, system_prompt: Any, input_items: Any) -> None:
        await self.inner.on_llm_start(context, agent, system_prompt, input_items)

    async def on_llm_end(self, context: Any, agent: Any, response: Any) -> None:
        await self.inner.on_llm_end(context, agent, response)

    async def on_agent_start(self, context: Any, agent: Any) -> None:
        await self.inner.on_agent_start(context, agent)

    async def on_agent_end(self, context: Any, agent: Any, output: Any) -> None:
        await self.inner.on_agent_end(context, agent, output)

    async def on_handoff(self, context: Any, from_agent: Any, to_agent: Any) -> None:
        await self.inner.on_handoff(context, from_agent, to_agent)

    async def on_tool_start(self, context: Any, agent: Any, tool: Any) -> None:
        await self.inner.on_tool_start(context, agent, tool)

    async def on_tool_end(self, context: Any, agent: Any, tool: Any, result: object) -> None:
        await self.fork._tool_done(tool, context)
        await self.inner.on_tool_end(context, agent, tool, result)


VerdictFn = Callable[[RunResult, RunFork], Verdict | Awaitable[Verdict]]


class ForkPerRun(ForkPer[RunFork]):
    """Runs an agent in a fork of the application database `db` (forked from `base`, expiring after `ttl` unless
    promoted), checkpointing after every tool call, then asks `verdict(result, fork)` what to keep. A run that
    raises keeps its fork (with its TTL) for inspection and re-raises. Promoting onto a protected base (`main`)
    needs `force=True`. With `ephemeral=True` (through a daemon) each fork is ephemeral: a discarded run writes
    nothing to the store, and the run checkpoints nothing on its way (a named checkpoint would keep the fork)."""

    surface = "sdk:openai-agents/openai-agents"
    """What the branch log says this adapter's calls come through."""

    fork_type = RunFork
    default_prefix = "run-"

    async def run(
        self,
        agent: Agent[Any],
        input: str | list[TResponseInputItem],
        *,
        verdict: VerdictFn,
        context: Callable[[RunFork], Any] | None = None,
        hooks: RunHooks[Any] | None = None,
        **runner_options: Any,
    ) -> ForkRun:
        """`Runner.run(agent, input, ...)` in a new fork; `context(fork)` builds the run context (default: the
        fork itself); `hooks` still see every event; other options go to `Runner.run` as they are."""
        fork = await asyncio.to_thread(self._begin)
        try:
            result = await Runner.run(
                agent, input, context=_context(fork, context), hooks=_ForkHooks(fork, hooks), **runner_options
            )
            decided = verdict(result, fork)
            chosen = await decided if inspect.isawaitable(decided) else decided
        except BaseException:
            await asyncio.to_thread(fork.close_kept)
            raise
        return await asyncio.to_thread(self._finish, result, fork, chosen)

    def run_sync(
        self,
        agent: Agent[Any],
        input: str | list[TResponseInputItem],
        *,
        verdict: Callable[[RunResult, RunFork], Verdict],
        context: Callable[[RunFork], Any] | None = None,
        hooks: RunHooks[Any] | None = None,
        **runner_options: Any,
    ) -> ForkRun:
        """`Runner.run_sync` in a new fork, as `run` (not from inside a running event loop, as `run_sync`)."""
        fork = self._begin()
        try:
            result = Runner.run_sync(
                agent, input, context=_context(fork, context), hooks=_ForkHooks(fork, hooks), **runner_options
            )
            chosen = verdict(result, fork)
        except BaseException:
            fork.close_kept()
            raise
        return self._finish(result, fork, chosen)

    def _finish(self, result: RunResult, fork: RunFork, chosen: Verdict) -> ForkRun:
        txid = self._settle(fork, chosen)
        return ForkRun(result, fork, chosen, txid, fork.promote_error)


def _context(fork: RunFork, make: Callable[[RunFork], Any] | None) -> Any:
    return fork if make is None else make(fork)
