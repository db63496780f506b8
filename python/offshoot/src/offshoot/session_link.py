"""A branch reached through a live daemon session: the daemon captures the checkout and makes it durable."""

from __future__ import annotations

import os
from collections.abc import Mapping

from .branch_link import LinkedBranch, create_db, listed_branch, plain_meta
from .client import Client, Session, connect
from .errors import OffshootError
from .results import Branch, DiffResult
from .ttl import TTL


class SessionLink(LinkedBranch):
    """One daemon connection and one open session on `db@branch`."""

    def __init__(self, socket: str, client: Client, session: Session, db: str, branch: str) -> None:
        super().__init__(db, branch, session.path)
        self._socket = socket
        self._client = client
        self._surface = client.surface
        self._session: Session | None = session

    @classmethod
    def open(cls, socket: str, db: str, branch: str, *, create: bool, surface: str | None = None) -> SessionLink:
        """Connects to the daemon on `socket`, creates `db` first when asked and missing, and opens the session;
        `surface` is what the branch log says its calls come through (`sdk:<adapter>/<framework>`)."""
        client = connect(socket, surface=surface)
        try:
            if create and db not in client.dbs():
                create_db(lambda: client.create(db))
            session = client.open(db, branch)
        except BaseException:
            client.close()
            raise
        return cls(socket, client, session, db, branch)

    def flush(self, name: str, meta: Mapping[str, str] | None) -> int:
        """Flushes the session, as a named checkpoint when `name` is given."""
        return self._live().flush(name, plain_meta(meta))

    def fork(
        self, new_branch: str, *, ttl: TTL, from_checkpoint: str | None, meta: Mapping[str, str] | None
    ) -> SessionLink:
        """Forks through the daemon (which flushes an open source first) and opens a session on the fork."""
        self._live()
        txid = self._client.fork(
            self._db, self._branch, new_branch, from_checkpoint=from_checkpoint, ttl=ttl, meta=plain_meta(meta)
        )
        link = SessionLink.open(self._socket, self._db, new_branch, create=False, surface=self._surface)
        link.forked_at = txid
        return link

    def rollback(self, to: str) -> None:
        """Closes the session (the daemon refuses to roll back an open branch), rolls back, and reopens it."""
        self._live().close()
        self._session = None
        try:
            self._client.rollback(self._db, self._branch, to)
        finally:
            self._session = self._client.open(self._db, self._branch)
            self._path = self._session.path

    def listed(self, branch: str) -> Branch:
        """`branch` of this database as it is listed now."""
        return listed_branch(self._client.branches(self._db), self._db, branch)

    def promote(self, onto: str, force: bool, if_head: int | None = None) -> int:
        """Promotes through the daemon, which flushes this open source first."""
        self._live()
        return self._client.promote(self._db, self._branch, onto, force=force, if_head=if_head)

    def diff(self, base: str) -> DiffResult:
        """Diffs `base` against this branch's durable head (flush first to include the latest writes)."""
        return self._client.diff(base, f"{self._db}@{self._branch}")

    def destroy(self, force: bool) -> None:
        """Closes the session, then destroys the branch; the connection is closed either way."""
        try:
            if self._session is not None:
                self._session.close()
                self._session = None
            self._client.destroy(self._db, self._branch, force=force)
        finally:
            self._client.close()

    def close(self) -> None:
        """Closes the session (the daemon flushes it first) and the connection."""
        try:
            if self._session is not None:
                self._session.close()
                self._session = None
        finally:
            self._client.close()

    def _live(self) -> Session:
        if self._session is None:
            raise OffshootError(
                f"the session on {self._db}@{self._branch} is not open",
                "CLOSED",
                "open the branch again (a new session)",
            )
        return self._session


class DaemonPlace:
    """Links through the daemon listening on `socket`: each link has a connection and a session of its own."""

    def __init__(self, socket: str | os.PathLike[str], surface: str | None = None) -> None:
        self.socket = os.fspath(socket)
        self.surface = surface
        """What the branch log says the links' calls come through (`sdk:<adapter>/<framework>`; `sdk:python`)."""

    def open(self, db: str, branch: str, *, create: bool) -> SessionLink:
        """A session on `db@branch` (creating `db` first when `create` and missing)."""
        return SessionLink.open(self.socket, db, branch, create=create, surface=self.surface)

    def fork(
        self,
        db: str,
        source: str,
        new_branch: str,
        *,
        ttl: TTL,
        from_checkpoint: str | None,
        meta: Mapping[str, str] | None,
        ephemeral: bool = False,
    ) -> SessionLink:
        """Forks `db@source` without opening it (an ephemeral fork when asked), then opens a session on the fork."""
        with connect(self.socket, surface=self.surface) as client:
            txid = client.fork(
                db,
                source,
                new_branch,
                from_checkpoint=from_checkpoint,
                ttl=ttl,
                meta=plain_meta(meta),
                ephemeral=ephemeral,
            )
        link = SessionLink.open(self.socket, db, new_branch, create=False, surface=self.surface)
        link.forked_at = txid
        return link
