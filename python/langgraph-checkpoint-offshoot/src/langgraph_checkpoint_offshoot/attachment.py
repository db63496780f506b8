"""The state one saver and its `with_allowlist` clones share: the branch link and the SQLite connection on it."""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from langgraph.checkpoint.base import BaseCheckpointSaver
from offshoot import OffshootError

from .branch_link import BranchLink

Inner = TypeVar("Inner", bound=BaseCheckpointSaver[str])
Allowlist = tuple[Collection[tuple[str, ...]], ...]


@dataclass
class Attachment(Generic[Inner]):
    """A link, the stock saver on its checkout, and a generation counter bumped whenever that saver is replaced."""

    link: BranchLink
    inner: Inner
    generation: int = 0
    closed: bool = False
    _derived: dict[tuple[int, Allowlist], Inner] = field(default_factory=dict)

    def saver_for(self, allowlist: Allowlist) -> Inner:
        """The stock saver with `allowlist` applied: one per generation, sharing the connection and its lock."""
        if self.closed:
            raise closed_error(self.link)
        if not allowlist:
            return self.inner
        key = (self.generation, allowlist)
        got = self._derived.get(key)
        if got is None:
            got = self.inner
            for extra in allowlist:
                got = derive(got, extra)
            self._derived[key] = got
        return got

    def replace(self, make: Callable[[], Inner]) -> None:
        """Puts a new stock saver in place (after a rollback moved the checkout)."""
        self.inner = make()
        self.generation += 1
        self._derived = {}


def derive(inner: Inner, extra: Collection[tuple[str, ...]]) -> Inner:
    """`inner.with_allowlist(extra)`, typed as the stock saver it is (a shallow copy with a derived serde)."""
    got = inner.with_allowlist(extra)
    assert isinstance(got, type(inner))
    return got


def closed_error(link: BranchLink) -> OffshootError:
    """The error every call on a closed saver raises."""
    return OffshootError(
        f"this saver on {link.db}@{link.branch} is closed",
        "CLOSED",
        "open a new one with OffshootSaver.session(...) or OffshootSaver.at_rest(...)",
    )
