"""What the adapters over one branch of the application database share (Google ADK's `OffshootRewind`, LlamaIndex's
`WorkflowForks`): made by `session()` or `at_rest()`, the tools write `path`, and `with` releases the branch."""

from __future__ import annotations

import asyncio
import os
from types import TracebackType
from typing import TypeVar

from ..at_rest_link import AtRestLink
from ..branch_link import BranchLink
from ..session_link import SessionLink
from ..store import Store

B = TypeVar("B", bound="OneBranch")


class OneBranch:
    """An adapter holding one open link; its branch verbs run one at a time under `_verbs`."""

    surface: str | None = None
    """What the branch log says this adapter's calls come through (`sdk:<adapter>/<framework>`)."""

    def __init__(self, link: BranchLink) -> None:
        """Wraps an open link; use `session()` or `at_rest()` instead."""
        self.link = link
        self._verbs = asyncio.Lock()

    @classmethod
    def session(
        cls: type[B], socket_path: str | os.PathLike[str], db: str, branch: str = "main", *, create: bool = True
    ) -> B:
        """Opens a live daemon session on the application database `db@branch` (creating `db` unless
        `create=False`)."""
        return cls(SessionLink.open(os.fspath(socket_path), db, branch, create=create, surface=cls.surface))

    @classmethod
    def at_rest(
        cls: type[B], store: Store | str | os.PathLike[str], db: str, branch: str = "main", *, create: bool = True
    ) -> B:
        """Works on the at-rest checkout of `db@branch` in `store` (a path, URL or `offshoot.Store`), no daemon."""
        return cls(AtRestLink.open(store, db, branch, create=create, surface=cls.surface))

    @property
    def path(self) -> str:
        """The application database the tools write to (it can move after a rollback: read it each time)."""
        return self.link.path

    def __enter__(self: B) -> B:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.link.close()
