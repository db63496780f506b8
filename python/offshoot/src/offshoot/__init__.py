"""offshoot: branchable SQLite for AI agents and eval harnesses — the standard-library Python client."""

from .async_client import AsyncClient, AsyncSession, connect_async
from .client import Client, Session, connect
from .episode import AsyncEpisode, Episode, EpisodeResult
from .errors import OffshootError
from .results import (
    Branch,
    CheckpointInfo,
    DiffResult,
    Event,
    GcResult,
    LogRecord,
    LogResult,
    ProtectResult,
    SessionInfo,
    TableDiff,
    TouchResult,
)
from .store import Store
from .ttl import TTL

__all__ = [
    "TTL",
    "AsyncClient",
    "AsyncEpisode",
    "AsyncSession",
    "Branch",
    "CheckpointInfo",
    "Client",
    "DiffResult",
    "Episode",
    "EpisodeResult",
    "Event",
    "GcResult",
    "LogRecord",
    "LogResult",
    "OffshootError",
    "ProtectResult",
    "Session",
    "SessionInfo",
    "Store",
    "TableDiff",
    "TouchResult",
    "connect",
    "connect_async",
]
