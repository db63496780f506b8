"""What `AsyncOffshootSaver.session()` and `.at_rest()` return: awaited it is the saver, entered it also closes it."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Generator
from types import TracebackType
from typing import Any, Generic, Protocol, TypeVar


class Closable(Protocol):
    """A saver with an explicit async close."""

    async def aclose(self) -> None:
        """Releases the saver."""
        ...


S = TypeVar("S", bound=Closable)


class SaverOpening(Generic[S]):
    """`saver = await opening` (then `await saver.aclose()`), or `async with opening as saver:`."""

    def __init__(self, open_saver: Callable[[], Awaitable[S]]) -> None:
        self._open = open_saver
        self._saver: S | None = None

    def __await__(self) -> Generator[Any, None, S]:
        return self._open().__await__()

    async def __aenter__(self) -> S:
        self._saver = await self._open()
        return self._saver

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._saver is not None:
            saver, self._saver = self._saver, None
            await saver.aclose()
