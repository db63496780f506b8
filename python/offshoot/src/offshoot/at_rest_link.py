"""A branch at rest: no daemon, its checkout written directly and made durable by the `offshoot` CLI's verbs."""

from __future__ import annotations

import os
from collections.abc import Mapping

from .branch_link import LinkedBranch, create_db, listed_branch, plain_meta
from .errors import OffshootError
from .results import Branch, DiffResult
from .store import Store
from .ttl import TTL


def as_store(store: Store | str | os.PathLike[str], surface: str | None = None) -> Store:
    """`store` itself, or a Store on the path or URL it names whose runs say they come through `surface`."""
    return store if isinstance(store, Store) else Store(os.fspath(store), surface=surface)


class AtRestLink(LinkedBranch):
    """The at-rest checkout of `db@branch` in `store`."""

    def __init__(self, store: Store, db: str, branch: str, path: str) -> None:
        super().__init__(db, branch, path)
        self._store = store

    @classmethod
    def open(
        cls, store: Store | str | os.PathLike[str], db: str, branch: str, *, create: bool, surface: str | None = None
    ) -> AtRestLink:
        """Creates `db` first when asked and missing, then opens the branch's checkout: a dirty one (edits never
        checkpointed, on the branch's current lineage) is kept as it is, anything else is materialized from the head."""
        s = as_store(store, surface)
        states = {
            str(b.get("branch")): b.get("state")
            for b in s.status().get("branches") or []
            if isinstance(b, dict) and b.get("db") == db
        }
        if create and not states:
            create_db(lambda: s.create(db))
        # `offshoot checkout` would discard those edits; at rest the checkout is the working state, which the next
        # checkpoint (or a fork or promote, which checkpoint a dirty checkout first) makes durable.
        path = s.path(db, branch) if states.get(branch) == "dirty" else s.checkout(db, branch)
        return cls(s, db, branch, path)

    def flush(self, name: str, meta: Mapping[str, str] | None) -> int:
        """Records the checkout as the checkpoint `name` (at rest every checkpoint is named)."""
        if not name:
            raise OffshootError(
                "an at-rest checkpoint needs a name",
                "INVALID_ARGUMENT",
                "pass one, e.g. checkpoint('step-3')",
            )
        return self._store.checkpoint(self._db, self._branch, name, meta=plain_meta(meta))

    def fork(
        self, new_branch: str, *, ttl: TTL, from_checkpoint: str | None, meta: Mapping[str, str] | None
    ) -> AtRestLink:
        """Forks at rest (a dirty checkout is checkpointed first) and checks the fork out."""
        return StorePlace(self._store).fork(
            self._db, self._branch, new_branch, ttl=ttl, from_checkpoint=from_checkpoint, meta=meta
        )

    def rollback(self, to: str) -> None:
        """Rolls the branch back; the CLI refreshes the checkout in place."""
        self._path = self._store.rollback(self._db, self._branch, to)

    def listed(self, branch: str) -> Branch:
        """`branch` of this database as it is listed now."""
        return listed_branch(self._store.branches(self._db), self._db, branch)

    def promote(self, onto: str, force: bool, if_head: int | None = None) -> int:
        """Promotes at rest (a dirty checkout is checkpointed first)."""
        return self._store.promote(self._db, self._branch, onto, force=force, if_head=if_head)

    def diff(self, base: str) -> DiffResult:
        """Diffs `base` against this branch's durable head (checkpoint a dirty checkout first to include it)."""
        return self._store.diff(base, f"{self._db}@{self._branch}")

    def destroy(self, force: bool) -> None:
        """Destroys the branch and its checkout."""
        self._store.destroy(self._db, self._branch, force=force)

    def close(self) -> None:
        """Nothing is held at rest beyond the adapter's own SQLite connections."""


class StorePlace:
    """Links at rest in `store` (a path, URL or `Store`): each verb runs the `offshoot` CLI."""

    def __init__(self, store: Store | str | os.PathLike[str], surface: str | None = None) -> None:
        self.store = as_store(store, surface)

    def open(self, db: str, branch: str, *, create: bool) -> AtRestLink:
        """The at-rest checkout of `db@branch` (creating `db` first when `create` and missing)."""
        return AtRestLink.open(self.store, db, branch, create=create)

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
    ) -> AtRestLink:
        """Forks `db@source` at rest and checks the fork out; an ephemeral fork is refused (it lives in a daemon)."""
        if ephemeral:
            raise OffshootError(
                "an ephemeral fork lives in the daemon that makes it, and forks at rest have none",
                "UNSUPPORTED",
                "fork through a daemon (the adapter's session(socket, ...) form), or without ephemeral",
            )
        txid = self.store.fork(db, source, new_branch, from_checkpoint=from_checkpoint, ttl=ttl, meta=plain_meta(meta))
        link = AtRestLink(self.store, db, new_branch, self.store.checkout(db, new_branch))
        link.forked_at = txid
        return link
