"""LangGraph checkpointers on offshoot branches: LangGraph's own SQLite savers, forkable, rollbackable, promotable."""

from .async_saver import AsyncOffshootSaver
from .saver import OffshootSaver

__all__ = ["AsyncOffshootSaver", "OffshootSaver"]
