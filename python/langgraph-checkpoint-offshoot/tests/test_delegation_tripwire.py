"""Tripwire: the installed LangGraph base saver's public surface is exactly the one the savers delegate, and every
method of it reaches the stock saver (the extended ones, which the stock saver leaves unimplemented, reach its
connection). An upstream release adding a method fails here instead of silently bypassing the SQLite saver."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable
from typing import Any

import pytest
from langgraph.checkpoint.base import BaseCheckpointSaver, empty_checkpoint
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from langgraph_checkpoint_offshoot import AsyncOffshootSaver, OffshootSaver

# The public surface of BaseCheckpointSaver in langgraph-checkpoint 4.3 (the `serde` attribute included).
KNOWN_SURFACE = frozenset(
    {
        "acopy_thread",
        "adelete_for_runs",
        "adelete_thread",
        "aget",
        "aget_delta_channel_history",
        "aget_tuple",
        "alist",
        "aprune",
        "aput",
        "aput_writes",
        "config_specs",
        "copy_thread",
        "delete_for_runs",
        "delete_thread",
        "get",
        "get_delta_channel_history",
        "get_next_version",
        "get_tuple",
        "list",
        "prune",
        "put",
        "put_writes",
        "serde",
        "with_allowlist",
    }
)
# What the stock savers add for their own plumbing, never called by LangGraph through the base class.
STOCK_PLUMBING = frozenset(
    {"conn", "cursor", "from_conn_string", "is_setup", "jsonplus_serde", "lock", "loop", "setup"}
)
# Ours beyond the base: the offshoot verbs and properties, and the stock plumbing delegated explicitly.
OFFSHOOT_EXTRAS = frozenset(
    {
        "aclose",
        "at_rest",
        "branch",
        "checkpoint",
        "close",
        "closed",
        "db",
        "destroy",
        "fork_thread",
        "merge",
        "path",
        "promote",
        "rollback",
        "session",
    }
)
DELEGATED = KNOWN_SURFACE - {"serde", "with_allowlist"}
# What the stock savers leave to BaseCheckpointSaver (NotImplementedError): the savers run these on its connection.
EXTENDED = frozenset({"copy_thread", "delete_for_runs", "prune"})


def extended(name: str) -> bool:
    return name in EXTENDED or (name.startswith("a") and name[1:] in EXTENDED)


def owner(cls: type, name: str) -> type:
    return next(k for k in cls.__mro__ if name in vars(k))


def public(cls: type) -> set[str]:
    return {n for n in dir(cls) if not n.startswith("_")}


def test_the_installed_base_saver_has_exactly_the_known_surface() -> None:
    added = public(BaseCheckpointSaver) - KNOWN_SURFACE
    removed = KNOWN_SURFACE - public(BaseCheckpointSaver)
    assert not added, f"langgraph-checkpoint added {sorted(added)}: delegate them in both savers, then list them here"
    assert not removed, f"langgraph-checkpoint removed {sorted(removed)}"


@pytest.mark.parametrize("stock", [SqliteSaver, AsyncSqliteSaver])
def test_the_stock_savers_add_nothing_the_savers_miss(stock: type) -> None:
    extra = public(stock) - KNOWN_SURFACE - STOCK_PLUMBING
    assert not extra, f"{stock.__name__} gained public {sorted(extra)}: delegate them, or list them as plumbing"


@pytest.mark.parametrize("ours", [OffshootSaver, AsyncOffshootSaver])
def test_every_base_method_is_overridden(ours: type) -> None:
    inherited = sorted(n for n in KNOWN_SURFACE - {"serde"} if owner(ours, n) is BaseCheckpointSaver)
    assert not inherited, f"{ours.__name__} inherits {inherited} from the base instead of delegating"
    for name in DELEGATED - {"config_specs"}:
        ours_sig = inspect.signature(getattr(ours, name))
        base_sig = inspect.signature(getattr(BaseCheckpointSaver, name))
        assert list(ours_sig.parameters) == list(base_sig.parameters), name
        for p, b in zip(ours_sig.parameters.values(), base_sig.parameters.values(), strict=True):
            assert (p.kind, p.default) == (b.kind, b.default), f"{name}({p.name})"
    ours_module = "langgraph_checkpoint_offshoot"
    assert all(owner(ours, n).__module__.startswith(ours_module) for n in OFFSHOOT_EXTRAS - {"aclose"})
    assert owner(ours, "setup") is ours


class Recorder:
    """Stands in front of the real stock saver and notes each attribute the wrapper reaches for."""

    def __init__(self, real: Any) -> None:
        self.real = real
        self.reached: list[str] = []

    def __getattr__(self, name: str) -> Any:
        self.reached.append(name)
        return getattr(self.real, name)


def calls() -> dict[str, Callable[[Any], Any]]:
    config = {"configurable": {"thread_id": "t", "checkpoint_ns": ""}}
    at = {"configurable": {"thread_id": "t", "checkpoint_ns": "", "checkpoint_id": "1"}}
    history = {"config": config, "channels": ["x"]}
    return {
        "config_specs": lambda s: s.config_specs,
        "get": lambda s: s.get(config),
        "get_tuple": lambda s: s.get_tuple(config),
        "list": lambda s: [*s.list(config)],
        "put": lambda s: s.put(config, empty_checkpoint(), {}, {}),
        "put_writes": lambda s: s.put_writes(at, [("x", 1)], "task"),
        "delete_thread": lambda s: s.delete_thread("t"),
        "delete_for_runs": lambda s: s.delete_for_runs(["r"]),
        "copy_thread": lambda s: s.copy_thread("t", "u"),
        "prune": lambda s: s.prune(["t"]),
        "get_delta_channel_history": lambda s: s.get_delta_channel_history(**history),
        "get_next_version": lambda s: s.get_next_version(None, None),
        "aget": lambda s: s.aget(config),
        "aget_tuple": lambda s: s.aget_tuple(config),
        "alist": lambda s: _drain(s.alist(config)),
        "aput": lambda s: s.aput(config, empty_checkpoint(), {}, {}),
        "aput_writes": lambda s: s.aput_writes(at, [("x", 1)], "task"),
        "adelete_thread": lambda s: s.adelete_thread("t"),
        "adelete_for_runs": lambda s: s.adelete_for_runs(["r"]),
        "acopy_thread": lambda s: s.acopy_thread("t", "u"),
        "aprune": lambda s: s.aprune(["t"]),
        "aget_delta_channel_history": lambda s: s.aget_delta_channel_history(**history),
    }


async def _drain(it: Any) -> list[Any]:
    return [x async for x in it]


def test_the_table_covers_the_surface() -> None:
    assert set(calls()) == DELEGATED


def test_every_method_of_the_sync_saver_reaches_the_stock_saver(store: str) -> None:
    with OffshootSaver.at_rest(store, "trip") as saver:
        rec = Recorder(saver._att.inner)
        saver._att.inner = rec  # type: ignore[assignment]
        for name, call in calls().items():
            rec.reached.clear()
            try:
                out = call(saver)
                if inspect.iscoroutine(out):
                    asyncio.run(out)
            except NotImplementedError:
                # The sync saver's async methods give the stock SqliteSaver's answer.
                assert name.startswith("a"), name
                if extended(name):
                    continue
            # The extended methods run on the stock saver's own cursor (its lock, its transaction).
            want = "cursor" if extended(name) else name
            assert rec.reached[:1] == [want], f"{name} did not reach the stock saver: {rec.reached}"


def test_every_method_of_the_async_saver_reaches_the_stock_saver(store: str) -> None:
    async def run() -> None:
        async with AsyncOffshootSaver.at_rest(store, "trip") as saver:
            rec = Recorder(saver._att.inner)
            saver._att.inner = rec  # type: ignore[assignment]
            for name, call in calls().items():
                rec.reached.clear()
                try:
                    if name.startswith("a"):
                        await call(saver)
                    else:
                        # The stock async saver's sync methods run from a thread other than the loop's.
                        await asyncio.to_thread(call, saver)
                except NotImplementedError:
                    pass
                # The extended methods run on the stock saver's connection: set up first, or from its loop.
                want = ("setup" if name.startswith("a") else "loop") if extended(name) else name
                assert rec.reached[:1] == [want], f"{name} did not reach the stock saver: {rec.reached}"

    asyncio.run(run())


def test_setup_and_cursor_are_the_stock_savers(store: str) -> None:
    with OffshootSaver.at_rest(store, "plumbing") as saver:
        rec = Recorder(saver._att.inner)
        saver._att.inner = rec  # type: ignore[assignment]
        saver.setup()
        with saver.cursor() as cur:
            assert cur.execute("SELECT count(*) FROM checkpoints").fetchone() == (0,)
        with saver.cursor(transaction=False) as cur:
            cur.execute("SELECT 1")
        assert rec.reached == ["setup", "cursor", "cursor"]

    async def run() -> None:
        async with AsyncOffshootSaver.at_rest(store, "plumbing-async") as saver:
            rec = Recorder(saver._att.inner)
            saver._att.inner = rec  # type: ignore[assignment]
            await saver.setup()
            assert rec.reached == ["setup"]
            assert rec.real.is_setup

    asyncio.run(run())
