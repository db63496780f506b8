"""`OffshootSaver`: LangGraph's stock `SqliteSaver` on an offshoot branch, which can fork, roll back, promote and
merge."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Mapping
from contextlib import AbstractContextManager
from types import TracebackType
from typing import Literal

from langgraph.checkpoint.serde.base import SerializerProtocol
from langgraph.checkpoint.sqlite import SqliteSaver
from offshoot import TTL, MergeResult, Store
from offshoot.at_rest_link import AtRestLink
from offshoot.branch_link import BranchLink
from offshoot.session_link import SessionLink

from . import thread_ops
from .core import SURFACE, SaverCore


class OffshootSaver(SaverCore[SqliteSaver]):
    """A LangGraph checkpointer doing no checkpoint I/O of its own: every method is the stock `SqliteSaver`'s, on the
    branch's checkout. Made by `session()` or `at_rest()`; close it (or use `with`) to release the branch."""

    def __init__(self, link: BranchLink, *, serde: SerializerProtocol | None = None) -> None:
        """Wraps an open link; use `session()` or `at_rest()` instead."""
        super().__init__(link, _stock(link.path, serde), serde)

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
        return cls._over(SessionLink.open(os.fspath(socket_path), db, branch, create=create, surface=SURFACE), serde)

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
        return cls._over(AtRestLink.open(store, db, branch, create=create, surface=SURFACE), serde)

    def checkpoint(self, name: str = "", meta: Mapping[str, str] | None = None) -> int:
        """Makes everything written so far durable, as the named checkpoint `name`; returns its txid."""
        return self._open_link().flush(name, meta)

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
            self._att.replace(lambda: _stock(link.path, self._serde_arg))

    def promote(self, onto: str, force: bool = False) -> int:
        """Repoints branch `onto` at this branch's state (written so far); `force` if `onto` is protected. `onto`
        must have no open session. This saver keeps writing its own branch."""
        return self._open_link().promote(onto, force)

    def merge(
        self, into: str, *, prefer: Literal["source", "target"] | None = None, force: bool = False
    ) -> MergeResult:
        """Merges this branch's row changes (written so far) since its common state with `into` into `into`,
        three-way, whatever else `into` took since. Rows both changed differently hold the merge (`applied` False,
        the `conflicts` listed, nothing changed) unless `prefer` picks a side; `force` if `into` is protected. `into`
        must have no open session. This saver keeps writing its own branch."""
        return self._merging_link(into).merge(into, force, prefer)

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

    def setup(self) -> None:
        """The stock saver's: creates its tables in the checkout when missing (every method does so first)."""
        self._inner.setup()

    def cursor(self, transaction: bool = True) -> AbstractContextManager[sqlite3.Cursor]:
        """The stock saver's: a cursor on the checkout under the saver's lock, committed on exit if `transaction`."""
        return self._inner.cursor(transaction)

    def _run_plan(self, plan: thread_ops.Plan) -> None:
        inner = self._inner
        with inner.cursor() as cur:
            try:
                statement = next(plan)
                while True:
                    statement = plan.send(cur.execute(*statement).fetchall())
            except StopIteration:
                return
            except BaseException:
                # The stock cursor commits on exit whatever happened: undo a half-run plan first.
                inner.conn.rollback()
                raise

    async def _arun_plan(self, plan: thread_ops.Plan) -> None:
        plan.close()
        raise NotImplementedError(
            "OffshootSaver does not support async methods, as the stock SqliteSaver does not: use AsyncOffshootSaver"
        )

    @classmethod
    def _over(cls, link: BranchLink, serde: SerializerProtocol | None) -> OffshootSaver:
        try:
            return cls(link, serde=serde)
        except BaseException:
            link.close()
            raise


def _stock(path: str, serde: SerializerProtocol | None) -> SqliteSaver:
    # LangGraph may call a checkpointer from worker threads; SqliteSaver serializes its cursors with its own lock.
    return SqliteSaver(sqlite3.connect(path, check_same_thread=False), serde=serde)
