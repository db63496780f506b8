"""LangGraph's own checkpointer conformance suite (langgraph-checkpoint-conformance) against both savers in both
modes: all 8 capabilities, the 5 base ones (test for test as many as the stock saver passes) and the 3 extended ones
the stock SQLite savers leave unimplemented (`copy_thread`, `delete_for_runs`, `prune`), nothing skipped."""

from __future__ import annotations

import asyncio
import functools
import itertools
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Mapping, Sequence
from typing import Any

import pytest
from daemon_process import Daemon
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
)
from langgraph.checkpoint.conformance import checkpointer_test, validate
from langgraph.checkpoint.conformance.capabilities import ALL_CAPABILITIES, BASE_CAPABILITIES
from langgraph.checkpoint.conformance.report import CapabilityReport
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from offshoot import Store

from langgraph_checkpoint_offshoot import AsyncOffshootSaver, OffshootSaver

_suites = itertools.count()


class ThreadedSaver(BaseCheckpointSaver[str]):
    """The thin async adapter the suite needs for a sync saver: each async method runs the sync one in a thread."""

    def __init__(self, saver: OffshootSaver) -> None:
        super().__init__(serde=saver.serde)
        self.saver = saver

    def get_next_version(self, current: str | None, channel: None) -> str:
        return self.saver.get_next_version(current, channel)

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        return await asyncio.to_thread(self.saver.get_tuple, config)

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        items = await asyncio.to_thread(
            lambda: list(self.saver.list(config, filter=filter, before=before, limit=limit))
        )
        for item in items:
            yield item

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        return await asyncio.to_thread(self.saver.put, config, checkpoint, metadata, new_versions)

    async def aput_writes(
        self, config: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str, task_path: str = ""
    ) -> None:
        await asyncio.to_thread(self.saver.put_writes, config, writes, task_id, task_path)

    async def adelete_thread(self, thread_id: str) -> None:
        await asyncio.to_thread(self.saver.delete_thread, thread_id)

    async def adelete_for_runs(self, run_ids: Sequence[str]) -> None:
        await asyncio.to_thread(self.saver.delete_for_runs, run_ids)

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        await asyncio.to_thread(self.saver.copy_thread, source_thread_id, target_thread_id)

    async def aprune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        await asyncio.to_thread(lambda: self.saver.prune(thread_ids, strategy=strategy))


def assert_conforms(report: CapabilityReport) -> None:
    report.print_report()
    failures = {k: r.failures for k, r in report.results.items() if r.failures}
    assert report.passed_all_base(), failures
    assert report.passed_all(), failures
    assert report.conformance_level() == "FULL"
    assert {name for name, r in report.results.items() if r.detected and r.passed is True} == {
        c.value for c in ALL_CAPABILITIES
    }, "8 of 8"
    for cap in ALL_CAPABILITIES:
        result = report.results[cap.value]
        assert (result.tests_failed, result.tests_skipped) == (0, 0), (cap.value, result.failures)
        assert result.tests_passed > 0, cap.value
    for cap in BASE_CAPABILITIES:
        assert report.results[cap.value].tests_passed == stock_report().results[cap.value].tests_passed, cap.value


def run_suite(name: str, factory: Callable[[], AsyncGenerator[BaseCheckpointSaver[Any], None]]) -> None:
    assert_conforms(asyncio.run(validate(checkpointer_test(name=f"{name}-{next(_suites)}")(factory))))


@functools.cache
def stock_report() -> CapabilityReport:
    """The stock AsyncSqliteSaver's own run, in memory: the bar, test for test."""

    async def factory() -> AsyncGenerator[BaseCheckpointSaver[Any], None]:
        async with AsyncSqliteSaver.from_conn_string(":memory:") as saver:
            yield saver

    report = asyncio.run(validate(checkpointer_test(name="AsyncSqliteSaver")(factory)))
    assert report.passed_all_base(), "the stock saver fails its own suite: the pins are broken"
    assert sum(r.tests_passed for r in report.results.values()) >= 50
    return report


def fresh_db() -> str:
    return f"conformance{next(_suites)}"


@pytest.fixture(params=["session", "at_rest"])
def mode(request: pytest.FixtureRequest, daemon: Daemon, store: str) -> Mapping[str, Any]:
    """How each mode opens a saver on a fresh database, and whether a finished one is destroyed (in session mode;
    at rest the whole temp store goes, and each CLI round trip costs a process start)."""
    if request.param == "session":
        return {
            "sync": lambda db: OffshootSaver.session(daemon.socket, db),
            "async": lambda db: AsyncOffshootSaver.session(daemon.socket, db),
            "destroy": True,
        }

    def created(db: str) -> str:
        Store(store).create(db)
        return db

    return {
        "sync": lambda db: OffshootSaver.at_rest(store, created(db), create=False),
        "async": lambda db: AsyncOffshootSaver.at_rest(store, created(db), create=False),
        "destroy": False,
    }


def test_the_async_saver_conforms(mode: Mapping[str, Any]) -> None:
    async def factory() -> AsyncGenerator[BaseCheckpointSaver[Any], None]:
        saver = await mode["async"](fresh_db())
        try:
            yield saver
        finally:
            await (saver.destroy(force=True) if mode["destroy"] else saver.aclose())
        assert saver.closed

    run_suite("AsyncOffshootSaver", factory)


def test_the_sync_saver_conforms_through_a_thread_adapter(mode: Mapping[str, Any]) -> None:
    async def factory() -> AsyncGenerator[BaseCheckpointSaver[Any], None]:
        saver = await asyncio.to_thread(mode["sync"], fresh_db())
        try:
            yield ThreadedSaver(saver)
        finally:
            await asyncio.to_thread(saver.destroy, True) if mode["destroy"] else saver.close()
        assert saver.closed

    run_suite("OffshootSaver", factory)


def test_the_stock_savers_lack_the_extended_capabilities() -> None:
    """The bar: the stock saver passes the base capabilities and leaves the extended ones to the savers here."""
    report = stock_report()
    assert {name for name, r in report.results.items() if r.detected} == {c.value for c in BASE_CAPABILITIES}
    for stock in (SqliteSaver, AsyncSqliteSaver):
        for cap in ALL_CAPABILITIES - BASE_CAPABILITIES:
            assert getattr(stock, cap.value) is getattr(BaseCheckpointSaver, cap.value), (stock, cap)
