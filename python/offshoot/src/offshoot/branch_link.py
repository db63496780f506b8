"""A branch an adapter works on, reached through a daemon session or at rest: one interface for both."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Protocol

from .errors import OffshootError
from .results import Branch, DiffResult
from .ttl import TTL


def plain_meta(meta: Mapping[str, str] | None) -> dict[str, str] | None:
    """`meta` as the plain dict the client and the Store take."""
    return dict(meta) if meta is not None else None


def create_db(create: Callable[[], object]) -> None:
    """Runs `create()`, a create of a database found missing; one created by someone else in between is as good."""
    try:
        create()
    except OffshootError as e:
        if e.code != "ALREADY_EXISTS":
            raise


def listed_branch(branches: Sequence[Branch], db: str, branch: str) -> Branch:
    """`branch` among `branches` (a listing of `db`); NOT_FOUND when it is not there."""
    for b in branches:
        if b.branch == branch:
            return b
    raise OffshootError(f"no branch {db}@{branch}", "NOT_FOUND", f"list the branches of {db} to see what exists")


class LinkedBranch:
    """Where a link points: `db@branch` and its writable checkout, which a link's `rollback` can move."""

    def __init__(self, db: str, branch: str, path: str) -> None:
        self._db = db
        self._branch = branch
        self._path = path
        self.forked_at: int | None = None
        """The txid this branch was forked at, when a `fork` made it: a head fork's is the source's head then."""

    @property
    def db(self) -> str:
        """The database."""
        return self._db

    @property
    def branch(self) -> str:
        """The branch."""
        return self._branch

    @property
    def path(self) -> str:
        """The writable checkout."""
        return self._path


class BranchLink(Protocol):
    """What an adapter needs from offshoot for one branch; the SQLite connections on `path` are the adapter's own.
    Every verb is one call of the client (`SessionLink`) or of the at-rest Store (`AtRestLink`)."""

    @property
    def db(self) -> str:
        """The database."""
        ...

    @property
    def branch(self) -> str:
        """The branch whose checkout the adapter writes."""
        ...

    @property
    def path(self) -> str:
        """The writable checkout (it can move after `rollback`)."""
        ...

    @property
    def forked_at(self) -> int | None:
        """The txid the branch was forked at, when a place's `fork` made it (a head fork's: the source's head)."""
        ...

    def listed(self, branch: str) -> Branch:
        """`branch` of this link's database as it is listed now (its durable head, its checkpoints)."""
        ...

    def flush(self, name: str, meta: Mapping[str, str] | None) -> int:
        """Makes the checkout durable, as the checkpoint `name` when given; returns the txid."""
        ...

    def fork(
        self, new_branch: str, *, ttl: TTL, from_checkpoint: str | None, meta: Mapping[str, str] | None
    ) -> BranchLink:
        """Forks the branch (a head fork holds everything committed so far) and links to the new branch."""
        ...

    def rollback(self, to: str) -> None:
        """Repoints the branch at checkpoint `to`; the link is usable afterwards even when this raises."""
        ...

    def promote(self, onto: str, force: bool, if_head: int | None = None) -> int:
        """Repoints `onto` at this branch's head (committed writes included); returns the txid. With `if_head`, only
        while `onto` is still at that head txid (else `BASE_MOVED`, nothing changed)."""
        ...

    def diff(self, base: str) -> DiffResult:
        """Row-level diff from the durable state `base` (`db[@branch[@checkpoint]]`) to this branch's durable head."""
        ...

    def destroy(self, force: bool) -> None:
        """Deletes the branch; the link is closed afterwards even when this raises."""
        ...

    def close(self) -> None:
        """Releases what the link holds; the branch stays."""
        ...


class BranchPlace(Protocol):
    """Where links come from: a daemon (`DaemonPlace`) or a store at rest (`StorePlace`)."""

    def open(self, db: str, branch: str, *, create: bool) -> BranchLink:
        """Links to `db@branch`, creating `db` first when `create` and it is missing."""
        ...

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
    ) -> BranchLink:
        """Forks `db@source` (its head, or `from_checkpoint`) into `new_branch` and links to the fork; `source`
        itself is not opened, so it can be promoted onto afterwards. `ephemeral` asks a daemon for an ephemeral fork
        (held by it until kept, gone with it); a place without a daemon refuses it."""
        ...
