"""Episodes: one throwaway run on an ephemeral fork with a live session, ended with its diff against where it started
and discarded unless kept. `with client.episode(db, from_checkpoint="seed") as ep:` (or `async with` on an
`AsyncClient`); write to `ep.path` (or `ep` itself: it is a path-like); `ep.keep(name)` keeps it."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from types import TracebackType
from typing import TYPE_CHECKING

from .errors import OffshootError
from .results import DiffResult

if TYPE_CHECKING:
    from collections.abc import Generator

    from .async_client import AsyncClient, AsyncSession
    from .client import Client, Session
    from .ttl import TTL


@dataclass(frozen=True)
class EpisodeResult:
    """What an episode left: its summary diff against the state it was forked from, and the checkpoint `keep` named
    (the branch is then durable and stays), or None for a discarded episode."""

    diff: DiffResult
    kept: str | None


def episode_name() -> str:
    """A fresh episode branch name: `ep-` and 12 random hex digits."""
    return f"ep-{uuid.uuid4().hex[:12]}"


class _EpisodeBase:
    """What both episodes share: where the episode is, and the result once it is over."""

    db: str
    branch: str
    path: str
    result: EpisodeResult | None
    """Set once the episode is over: its diff against where it started, and whether it was kept."""

    def __fspath__(self) -> str:
        return self.path

    @property
    def _fork_target(self) -> str:
        return f"{self.db}@{self.branch}@fork"

    @property
    def _head_target(self) -> str:
        return f"{self.db}@{self.branch}"


class Episode(_EpisodeBase):
    """An episode on the blocking `Client` (made by `Client.episode`, already forked and open); `with` ends it."""

    def __init__(self, client: Client, session: Session) -> None:
        self._client = client
        self._session = session
        self.db = session.db
        self.branch = session.branch
        self.path = session.path
        self.result = None
        self._kept: str | None = None

    def keep(self, name: str, meta: dict[str, str] | None = None) -> int:
        """Keeps the episode as checkpoint `name`: what was written so far becomes a durable branch in the store,
        which ending the episode then leaves in place. Returns the checkpoint's txid."""
        txid = self._session.flush(name, meta)
        self._kept = name
        return txid

    def flush(self, name: str = "", meta: dict[str, str] | None = None) -> int:
        """Makes what was written so far durable in the daemon (the episode stays ephemeral); with a name, keeps it
        as that checkpoint, as `keep` does. Returns the txid."""
        return self.keep(name, meta) if name else self._session.flush()

    def close(self) -> EpisodeResult:
        """Ends the episode (once; later calls return the same result): closes the session, diffs it against where
        it started, and destroys it unless kept."""
        if self.result is not None:
            return self.result
        self._session.close()
        try:
            diff = self._client.diff(self._fork_target, self._head_target, summary=True)
            self.result = EpisodeResult(diff, self._kept)
        finally:
            if self._kept is None:
                self._client.destroy(self.db, self.branch)
        return self.result

    def __enter__(self) -> Episode:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


def start_episode(
    client: Client, db: str, source: str, name: str | None, from_checkpoint: str | None, options: EpisodeOptions
) -> Episode:
    """Forks the episode and opens its session (what `Client.episode` does)."""
    branch = name or episode_name()
    client.fork(db, source, branch, from_checkpoint, options.ttl, options.meta, options.ephemeral)
    try:
        return Episode(client, client.open(db, branch))
    except BaseException:
        client.destroy(db, branch)
        raise


@dataclass(frozen=True)
class EpisodeOptions:
    """How an episode is forked: its TTL, meta, and whether it is ephemeral (the default)."""

    ttl: TTL = None
    meta: dict[str, str] | None = None
    ephemeral: bool = True


class AsyncEpisode(_EpisodeBase):
    """An episode on an `AsyncClient` (made by `AsyncClient.episode`): `async with` (or `await`) starts it, leaving
    the block ends it."""

    def __init__(
        self,
        client: AsyncClient,
        db: str,
        source: str,
        name: str | None,
        from_checkpoint: str | None,
        options: EpisodeOptions,
    ) -> None:
        self._client = client
        self._source = source
        self._from = from_checkpoint
        self._options = options
        self._session: AsyncSession | None = None
        self.db = db
        self.branch = name or episode_name()
        self.path = ""
        self.result = None
        self._kept: str | None = None

    async def start(self) -> AsyncEpisode:
        """Forks the episode and opens its session (once)."""
        if self._session is not None:
            return self
        o = self._options
        await self._client.fork(self.db, self._source, self.branch, self._from, o.ttl, o.meta, o.ephemeral)
        try:
            self._session = await self._client.open(self.db, self.branch)
        except BaseException:
            await self._client.destroy(self.db, self.branch)
            raise
        self.path = self._session.path
        return self

    def __await__(self) -> Generator[object, None, AsyncEpisode]:
        return self.start().__await__()

    async def keep(self, name: str, meta: dict[str, str] | None = None) -> int:
        """Keeps the episode as checkpoint `name` (see `Episode.keep`)."""
        txid = await self._live().flush(name, meta)
        self._kept = name
        return txid

    async def flush(self, name: str = "", meta: dict[str, str] | None = None) -> int:
        """See `Episode.flush`."""
        return await self.keep(name, meta) if name else await self._live().flush()

    async def close(self) -> EpisodeResult:
        """Ends the episode (see `Episode.close`)."""
        if self.result is not None:
            return self.result
        await self._live().close()
        try:
            diff = await self._client.diff(self._fork_target, self._head_target, summary=True)
            self.result = EpisodeResult(diff, self._kept)
        finally:
            if self._kept is None:
                await self._client.destroy(self.db, self.branch)
        return self.result

    async def __aenter__(self) -> AsyncEpisode:
        return await self.start()

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()

    def _live(self) -> AsyncSession:
        if self._session is None:
            raise OffshootError(
                f"the episode {self.db}@{self.branch} has not started", "USAGE", "use `async with` or await it first"
            )
        return self._session
