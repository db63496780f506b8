"""pydantic-evals on offshoot: `OffshootCaseLifecycle` gives every case its own fork of a seeded database.

Setup forks the seed checkpoint into a branch named after the case and hands the task its checkout path
(`case_path()`); teardown records the case's row diff against the seed in the report, destroys the fork when the
case passed and keeps it (until its TTL) when it failed, so a failure can be opened and inspected.
"""

from __future__ import annotations

import asyncio
import functools
import itertools
import os
import threading
import uuid
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from pydantic_evals import Case
from pydantic_evals.lifecycle import CaseLifecycle
from pydantic_evals.reporting import ReportCase, ReportCaseFailure

from ..at_rest_link import StorePlace
from ..branch_link import BranchLink, BranchPlace
from ..errors import OffshootError
from ..results import DiffResult
from ..sanitize import sanitize
from ..session_link import DaemonPlace
from ..store import Store
from ..ttl import TTL

__all__ = ["CaseFork", "OffshootCaseLifecycle", "case_fork", "case_path"]

SURFACE = "sdk:pydantic-evals/pydantic-evals"
"""What the branch log says the case forks' calls come through."""

RESULT_CHECKPOINT = "case-result"
"""The checkpoint teardown records the case's final state as, before diffing it against the seed."""


@dataclass(frozen=True)
class CaseFork:
    """The branch a case runs in, forked from `seed` (`db@base@checkpoint`)."""

    db: str
    branch: str
    path: str
    seed: str


_current: ContextVar[CaseFork | None] = ContextVar("offshoot_case_fork", default=None)


def case_fork() -> CaseFork:
    """The fork of the case being evaluated, from inside its task (NOT_FOUND outside one)."""
    fork = _current.get()
    if fork is None:
        raise OffshootError(
            "no offshoot case fork here: case_fork() works inside a task run with lifecycle=OffshootCaseLifecycle...",
            "NOT_FOUND",
            "pass lifecycle=OffshootCaseLifecycle.session(...) or .at_rest(...) to Dataset.evaluate",
        )
    return fork


def case_path() -> str:
    """The writable checkout of the case being evaluated: the task's own copy of the seeded database."""
    return case_fork().path


class _Naming:
    """Branch names `prefix + run + '-' + sanitize(case name)`, with `-2`, `-3`, … for a case evaluated again."""

    def __init__(self, prefix: str) -> None:
        self.prefix = f"{prefix}{uuid.uuid4().hex[:6]}-"
        self._seen: dict[str, itertools.count[int]] = {}
        self._lock = threading.Lock()

    def __call__(self, case_name: str) -> str:
        with self._lock:
            n = next(self._seen.setdefault(case_name, itertools.count(1)))
        return self.prefix + sanitize(case_name) + (f"-{n}" if n > 1 else "")


class OffshootCaseLifecycle(CaseLifecycle[Any, Any, Any]):
    """A `CaseLifecycle` over offshoot forks. Pass `lifecycle=OffshootCaseLifecycle.session(socket, db, seed=...)`
    (or `.at_rest(store, db, seed=...)`) to `Dataset.evaluate`; the task reads `case_path()`. Subclass it to judge
    `passed()` differently."""

    def __init__(
        self,
        case: Case[Any, Any, Any],
        *,
        place: BranchPlace,
        db: str,
        seed: str,
        base: str = "main",
        ttl: TTL = "24h",
        naming: Callable[[str], str] | None = None,
        ephemeral: bool | None = None,
    ) -> None:
        """One case's lifecycle; `session()` and `at_rest()` make the factory `Dataset.evaluate` calls per case.
        `ephemeral` (default: yes through a daemon, no at rest) makes each case's fork ephemeral: a case that passes
        is thrown away without a write to the store, one that fails is kept as its `result` checkpoint."""
        super().__init__(case)
        self.place = place
        self.db = db
        self.seed = seed
        self.base = base
        self.ttl = ttl
        self.ephemeral = isinstance(place, DaemonPlace) if ephemeral is None else ephemeral
        self._naming = naming or _Naming("case-")
        self.link: BranchLink | None = None

    @classmethod
    def session(
        cls, socket_path: str | os.PathLike[str], db: str, *, seed: str, **options: Any
    ) -> Callable[[Case[Any, Any, Any]], OffshootCaseLifecycle]:
        """The per-case factory for forks through the daemon on `socket_path`: each case writes a live session.
        `seed` is the checkpoint of `base` (default `main`) every case starts from; `ttl` (default 24h) is how long
        a failed case's fork stays; `prefix` (default `case-`) starts every branch name."""
        return cls._factory(DaemonPlace(socket_path, SURFACE), db, seed, options)

    @classmethod
    def at_rest(
        cls, store: Store | str | os.PathLike[str], db: str, *, seed: str, **options: Any
    ) -> Callable[[Case[Any, Any, Any]], OffshootCaseLifecycle]:
        """The per-case factory for forks at rest in `store` (a path, URL or `offshoot.Store`); as `session()`."""
        return cls._factory(StorePlace(store, SURFACE), db, seed, options)

    @classmethod
    def _factory(
        cls, place: BranchPlace, db: str, seed: str, options: dict[str, Any]
    ) -> Callable[[Case[Any, Any, Any]], OffshootCaseLifecycle]:
        naming = _Naming(options.pop("prefix", "case-"))
        return functools.partial(cls, place=place, db=db, seed=seed, naming=naming, **options)

    @property
    def fork(self) -> CaseFork:
        """This case's fork (after setup)."""
        if self.link is None:
            raise OffshootError("the case has no fork before setup()", "NOT_FOUND", "read it from inside the task")
        return CaseFork(self.link.db, self.link.branch, self.link.path, self._seed_target)

    @property
    def _seed_target(self) -> str:
        return f"{self.db}@{self.base}@{self.seed}"

    async def setup(self) -> None:
        """Forks the seed into this case's branch and makes its checkout the task's `case_path()`."""
        name = self.case.name or "case"
        branch = self._naming(name)
        self.link = await asyncio.to_thread(
            self.place.fork,
            self.db,
            self.base,
            branch,
            ttl=self.ttl,
            from_checkpoint=self.seed,
            meta={"case": name[:200]},
            ephemeral=self.ephemeral,
        )
        _current.set(self.fork)

    def passed(self, result: ReportCase[Any, Any, Any] | ReportCaseFailure[Any, Any, Any] | None) -> bool:
        """A case passed when it produced a report with every assertion true and no evaluator failure."""
        return (
            isinstance(result, ReportCase)
            and not result.evaluator_failures
            and all(a.value is True for a in result.assertions.values())
        )

    async def teardown(self, result: ReportCase[Any, Any, Any] | ReportCaseFailure[Any, Any, Any] | None) -> None:
        """Records the fork's row diff against the seed in the report, then destroys the fork if the case passed
        and keeps it (until its TTL) if not."""
        link = self.link
        if link is None:
            return
        passed = self.passed(result)
        try:
            diff = await asyncio.to_thread(self._diff, link, passed)
            _record(result, self.fork, diff, kept=not passed)
        except BaseException:
            await asyncio.to_thread(link.close)
            raise
        if passed:
            await asyncio.to_thread(link.destroy, False)
        else:
            await asyncio.to_thread(link.close)

    def _diff(self, link: BranchLink, passed: bool) -> DiffResult:
        # A passed case's ephemeral fork is thrown away: its flush stays unnamed, since a named one would keep it.
        if self.ephemeral and passed:
            link.flush("", None)
        else:
            link.flush(RESULT_CHECKPOINT, {"case": (self.case.name or "case")[:200]})
        return link.diff(self._seed_target)


def diff_rows(diff: DiffResult) -> dict[str, dict[str, list[dict[str, Any]]]]:
    """The changed tables of a diff as `{table: {"added": rows, "removed": rows, "changed": rows}}`."""
    return {
        t.table: {"added": t.added, "removed": t.removed, "changed": t.changed}
        for t in diff.tables
        if t.status != "same"
    }


def _record(
    result: ReportCase[Any, Any, Any] | ReportCaseFailure[Any, Any, Any] | None,
    fork: CaseFork,
    diff: DiffResult,
    *,
    kept: bool,
) -> None:
    rows = diff_rows(diff)
    where = f"{fork.db}@{fork.branch}"
    if isinstance(result, ReportCase):
        result.attributes["offshoot_fork"] = where if kept else f"{where} (destroyed: passed)"
        result.attributes["offshoot_diff"] = rows
        for kind in ("added", "removed", "changed"):
            result.metrics[f"rows_{kind}"] = sum(len(t[kind]) for t in rows.values())
    elif isinstance(result, ReportCaseFailure):
        changed = sum(len(v) for t in rows.values() for v in t.values())
        result.error_message += f"\n[offshoot] fork kept as {where}: {changed} row change(s) against {fork.seed}"
