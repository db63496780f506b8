"""The offshoot side of a saver: one branch, reached through a daemon session or at rest."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from offshoot import TTL


class BranchLink(Protocol):
    """What a saver needs from offshoot for its branch; the SQLite connection on `path` is the saver's own."""

    @property
    def db(self) -> str:
        """The database."""
        ...

    @property
    def branch(self) -> str:
        """The branch whose checkout the saver writes."""
        ...

    @property
    def path(self) -> str:
        """The writable checkout (it can move after `rollback`)."""
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

    def promote(self, onto: str, force: bool) -> int:
        """Repoints `onto` at this branch's head (committed writes included); returns the txid."""
        ...

    def destroy(self, force: bool) -> None:
        """Deletes the branch; the link is closed afterwards even when this raises."""
        ...

    def close(self) -> None:
        """Releases what the link holds; the branch stays."""
        ...
