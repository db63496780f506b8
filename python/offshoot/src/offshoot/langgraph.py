"""ThreadForks: one branch of an application database per LangGraph thread, LangGraph's checkpointer untouched.

LangGraph can rewind a thread to an earlier checkpoint; the rows its tools wrote to a database do not rewind with
it. ThreadForks forks the database per thread and names database checkpoints after LangGraph's checkpoint ids, so
forking a thread at a checkpoint forks its database at the same point. The database must already exist.
"""

from __future__ import annotations

from .client import Client, Session
from .errors import OffshootError
from .sanitize import sanitize
from .ttl import TTL

__all__ = ["ThreadForks", "sanitize"]


class ThreadForks:
    """Maps thread ids to branches `prefix + sanitize(thread_id)` of `db`, forked from `base_branch` with `ttl` on
    first use; each thread's session stays open until `close()`."""

    def __init__(
        self, client: Client, db: str, base_branch: str = "main", ttl: TTL = "24h", prefix: str = "thread-"
    ) -> None:
        self.client = client
        self.db = db
        self.base_branch = base_branch
        self.ttl = ttl
        self.prefix = prefix
        self._sessions: dict[str, Session] = {}

    def branch_for(self, thread_id: object) -> str:
        """The branch of a thread: `prefix + sanitize(thread_id)`."""
        return self.prefix + sanitize(thread_id)

    def _branch_names(self) -> set[str]:
        return {b.branch for b in self.client.branches(self.db)}

    def _session(self, thread_id: object) -> Session:
        key = str(thread_id)
        session = self._sessions.get(key)
        if session is not None:
            return session
        branch = self.branch_for(thread_id)
        if branch not in self._branch_names():
            self.client.fork(self.db, self.base_branch, branch, ttl=self.ttl)
        session = self.client.open(self.db, branch)
        self._sessions[key] = session
        return session

    def path(self, thread_id: object) -> str:
        """The thread's writable database path: forks its branch on first use and opens a session on it."""
        return self._session(thread_id).path

    def checkpoint(self, thread_id: object, checkpoint_id: object) -> int:
        """Flushes the thread's session as the checkpoint `sanitize(checkpoint_id)`; returns the txid."""
        return self._session(thread_id).flush(sanitize(checkpoint_id))

    def fork_thread(self, from_thread: object, at_checkpoint: object, new_thread: object) -> str:
        """Forks `new_thread`'s database from `from_thread`'s at the checkpoint recorded for `at_checkpoint`;
        returns the new thread's path. NOT_FOUND for an unknown source thread or an unrecorded checkpoint,
        ALREADY_EXISTS when the new thread already has a branch."""
        from_branch = self.branch_for(from_thread)
        new_branch = self.branch_for(new_thread)
        info = {b.branch: b for b in self.client.branches(self.db)}
        if from_branch not in info:
            raise OffshootError(
                f"fork_thread: unknown thread {from_thread!r} (no branch {from_branch} in {self.db})",
                "NOT_FOUND",
                f"call path({from_thread!r}) before forking from it",
            )
        if new_branch in info:
            raise OffshootError(
                f"fork_thread: thread {new_thread!r} already has a branch ({new_branch} in {self.db})",
                "ALREADY_EXISTS",
                "pick another new thread id, or close and destroy that branch first",
            )
        name = sanitize(at_checkpoint)
        if name not in info[from_branch].checkpoints:
            raise OffshootError(
                f"fork_thread: checkpoint {at_checkpoint!r} was never recorded on thread {from_thread!r} "
                f"(no checkpoint {name} on {from_branch})",
                "NOT_FOUND",
                f"call checkpoint({from_thread!r}, {at_checkpoint!r}) before forking from it",
            )
        self.client.fork(self.db, from_branch, new_branch, from_checkpoint=name, ttl=self.ttl)
        return self._session(new_thread).path

    def close(self, thread_id: object = None) -> None:
        """Closes the thread's session, or every session when `thread_id` is None; the branches stay."""
        if thread_id is None:
            errors: list[OffshootError] = []
            for key in list(self._sessions):
                try:
                    self._sessions.pop(key).close()
                except OffshootError as e:
                    errors.append(e)
            if errors:
                raise errors[0]
            return
        session = self._sessions.pop(str(thread_id), None)
        if session is not None:
            session.close()
