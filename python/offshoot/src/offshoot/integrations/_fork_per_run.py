"""What the fork-per-run adapters share (CrewAI's `ForkPerKickoff`, the OpenAI Agents SDK's `ForkPerRun`): a new
fork of the application database per run, checkpointed as `start`, whose fate a verdict decides afterwards."""

from __future__ import annotations

import os
import uuid
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeVar

from ..at_rest_link import StorePlace
from ..branch_link import BranchLink, BranchPlace
from ..errors import OffshootError
from ..session_link import DaemonPlace
from ..store import Store
from ..ttl import TTL

Verdict = Literal["promote", "keep", "discard"]
"""What happens to a run's fork: `promote` it onto the base branch (then destroy it), `keep` it for inspection until
its TTL, or `discard` (destroy) it. A promote goes ahead only while the base is still at the head the fork was made
from; otherwise (`BASE_MOVED`), or when another promote onto the base is running (`LEASE_HELD`), the fork is kept and
`promote_error` says why."""

FORK_CHECKPOINT = "fork"
"""The checkpoint every fork is made with, at its fork point: an ephemeral fork's `start`."""

KEPT_CHECKPOINT = "kept"
"""The checkpoint that keeps an ephemeral run's fork when it is kept rather than discarded."""

REFUSED_PROMOTES = ("BASE_MOVED", "LEASE_HELD")
"""The refusals of a promote verdict that keep the run's fork and are reported in the result rather than raised."""


@dataclass
class Fork:
    """The fork one run works in, on `link`, forked from `base`; `checkpoints` names its states, oldest first."""

    link: BranchLink = field(repr=False)
    base: str
    checkpoints: list[str] = field(default_factory=list)
    base_head: int | None = None
    """The base's head txid when the fork was made: a promote goes ahead only while the base is still there."""
    promote_error: OffshootError | None = None
    """Why a `promote` verdict was not carried out (`BASE_MOVED` or `LEASE_HELD`); the fork was kept."""
    ephemeral: bool = False
    """The fork is ephemeral: the daemon holds it, and it reaches the store only when kept (a named checkpoint, a
    promote). Its `start` is the fork's own `fork` checkpoint, and the run records no checkpoint of its own, since
    any named checkpoint would keep it."""

    @property
    def db(self) -> str:
        """The application database."""
        return self.link.db

    @property
    def branch(self) -> str:
        """The fork's branch."""
        return self.link.branch

    @property
    def path(self) -> str:
        """The fork's writable checkout: the application database as this run sees it."""
        return self.link.path

    def rollback(self, to: str) -> None:
        """Undoes every action after the checkpoint `to` (`start`, or one of `checkpoints`); close your own
        connections to `path` first, and reopen `path` after (it can move)."""
        self.link.rollback(FORK_CHECKPOINT if self.ephemeral and to == "start" else to)
        del self.checkpoints[self.checkpoints.index(to) + 1 :]

    def close_kept(self) -> None:
        """Closes the link and leaves the fork in place: an ephemeral fork is kept first, as the checkpoint `kept`,
        since it would otherwise go with its daemon."""
        try:
            if self.ephemeral:
                self.link.flush(KEPT_CHECKPOINT, {"kept": "true"})
        finally:
            self.link.close()

    def _next(self, kind: str) -> str:
        """The name of the next checkpoint of `kind`: `<kind>-<n>`, n counting from 1."""
        return f"{kind}-{sum(1 for c in self.checkpoints if c.startswith(f'{kind}-')) + 1}"


F = TypeVar("F", bound=Fork)
P = TypeVar("P", bound="ForkPer[Any]")


class ForkPer(Generic[F]):
    """Forks the application database `db` from `base` per run (branch `prefix` + a random suffix, expiring after
    `ttl` unless promoted) and carries out the verdict on it; promoting onto a protected base needs `force=True`."""

    fork_type: type[F]
    """The fork each run gets."""
    default_prefix: str
    """The branch name prefix when none is given."""
    surface: str | None = None
    """What the branch log says this adapter's calls come through (`sdk:<adapter>/<framework>`)."""

    def __init__(
        self,
        place: BranchPlace,
        db: str,
        *,
        base: str = "main",
        ttl: TTL = "1h",
        prefix: str | None = None,
        force: bool = False,
        ephemeral: bool = False,
    ) -> None:
        """Forks through `place`; use `session()` or `at_rest()` instead. `prefix` defaults to `default_prefix`.
        `ephemeral=True` (a daemon's forks only) makes each run's fork ephemeral: nothing of a discarded run reaches
        the store; a kept or promoted one does (see `Fork.ephemeral`)."""
        self.place = place
        self.db = db
        self.base = base
        self.ttl = ttl
        self.prefix = self.default_prefix if prefix is None else prefix
        self.force = force
        self.ephemeral = ephemeral

    @classmethod
    def session(cls: type[P], socket_path: str | os.PathLike[str], db: str, **options: Any) -> P:
        """Forks through the daemon on `socket_path`; each fork is a live session the daemon captures."""
        return cls(DaemonPlace(socket_path, cls.surface), db, **options)

    @classmethod
    def at_rest(cls: type[P], store: Store | str | os.PathLike[str], db: str, **options: Any) -> P:
        """Forks at rest in `store` (a path, URL or `offshoot.Store`), through the `offshoot` CLI."""
        return cls(StorePlace(store, cls.surface), db, **options)

    def _begin(self) -> F:
        """A new fork of the base, checkpointed as `start`."""
        link = self.place.fork(
            self.db,
            self.base,
            f"{self.prefix}{uuid.uuid4().hex[:12]}",
            ttl=self.ttl,
            from_checkpoint=None,
            meta=None,
            ephemeral=self.ephemeral,
        )
        if not self.ephemeral:
            try:
                link.flush("start", {"base": self.base})
            except BaseException:
                link.close()
                raise
        return self.fork_type(link, self.base, ["start"], base_head=link.forked_at, ephemeral=self.ephemeral)

    def _settle(self, fork: F, chosen: Verdict) -> int | None:
        """Carries out a verdict on a fork: promote (then destroy), keep, or discard. Returns the promote's txid; a
        promote refused because the base moved since the fork, or another promote held it, keeps the fork, sets
        `fork.promote_error` and returns None (nothing is retried)."""
        if chosen not in ("promote", "keep", "discard"):
            fork.close_kept()
            raise OffshootError(
                f"{type(self).__name__}: unknown verdict {chosen!r}; the fork {fork.db}@{fork.branch} is kept",
                "INVALID_ARGUMENT",
                "return 'promote', 'keep' or 'discard' from the verdict",
            )
        txid = None
        if chosen == "promote":
            try:
                txid = fork.link.promote(self.base, self.force, if_head=fork.base_head)
            except OffshootError as e:
                fork.close_kept()
                if e.code not in REFUSED_PROMOTES:
                    raise
                fork.promote_error = e.with_context(
                    f"not promoted: the run's fork {fork.db}@{fork.branch} is kept (until its TTL runs out)"
                )
                return None
            except BaseException:
                fork.close_kept()
                raise
        if chosen == "keep":
            fork.close_kept()
        else:
            fork.link.destroy(force=False)
        return txid
