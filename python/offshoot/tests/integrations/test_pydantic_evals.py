"""The pydantic-evals lifecycle against the real `pydantic-evals` package: each case runs in its own fork of a seed
checkpoint, the report carries its row diff, a passing case's fork is destroyed and a failing one's kept."""

from __future__ import annotations

import sqlite3
import uuid
from dataclasses import dataclass
from typing import Any

import pytest
from pydantic_evals import Case, Dataset
from pydantic_evals.evaluators import Evaluator, EvaluatorContext

from offshoot import Client, OffshootError, Store
from offshoot.daemon import DaemonHandle
from offshoot.integrations.pydantic_evals import OffshootCaseLifecycle, case_fork, case_path


def seed(store_or_client: Store | Client, db: str, checkout: str) -> None:
    conn = sqlite3.connect(checkout)
    conn.execute("CREATE TABLE stock(item TEXT PRIMARY KEY, qty INTEGER)")
    conn.executemany("INSERT INTO stock VALUES (?, ?)", [("apple", 3), ("pear", 1)])
    conn.commit()
    conn.close()


def sell(item: str) -> int:
    """The task: sells one `item` from the case's own database, returns what is left."""
    conn = sqlite3.connect(case_path())
    try:
        conn.execute("UPDATE stock SET qty = qty - 1 WHERE item = ?", (item,))
        conn.commit()
        return int(conn.execute("SELECT qty FROM stock WHERE item = ?", (item,)).fetchone()[0])
    finally:
        conn.close()


@dataclass
class NeverNegative(Evaluator[str, int, Any]):
    def evaluate(self, ctx: EvaluatorContext[str, int, Any]) -> bool:
        return ctx.output >= 0


def dataset() -> Dataset[str, int, Any]:
    return Dataset(
        name="shop",
        cases=[Case(name="sell an apple", inputs="apple"), Case(name="sell a pear twice", inputs="pear")],
        evaluators=[NeverNegative()],
    )


def test_each_case_forks_the_seed_and_failures_are_kept(store: Store) -> None:
    store.create("shop")
    seed(store, "shop", store.checkout("shop"))
    store.checkpoint("shop", "main", "seed")

    def sell_twice_for_pears(item: str) -> int:
        if item == "pear":
            sell(item)
        return sell(item)

    lifecycle = OffshootCaseLifecycle.at_rest(store, "shop", seed="seed", ttl="2h")
    report = dataset().evaluate_sync(sell_twice_for_pears, lifecycle=lifecycle, max_concurrency=2)
    by_name = {c.name: c for c in report.cases}
    apple, pear = by_name["sell an apple"], by_name["sell a pear twice"]
    assert apple.output == 2
    assert pear.output == -1
    # Every case started from the seed, not from another case's writes.
    assert apple.attributes["offshoot_diff"] == {
        "stock": {"added": [], "removed": [], "changed": [apple.attributes["offshoot_diff"]["stock"]["changed"][0]]}
    }
    change = apple.attributes["offshoot_diff"]["stock"]["changed"][0]
    assert (change["before"]["qty"], change["after"]["qty"]) == (3, 2)
    assert (apple.metrics["rows_changed"], pear.metrics["rows_changed"]) == (1, 1)
    assert "destroyed: passed" in apple.attributes["offshoot_fork"]

    branches = {b.branch: b for b in store.branches("shop")}
    kept_branch = pear.attributes["offshoot_fork"].split("@", 1)[1]
    assert kept_branch in branches, "the failing case's fork stays for inspection"
    assert branches[kept_branch].ttl == "2h0m0s"
    assert "sell-a-pear-twice" in kept_branch
    assert apple.attributes["offshoot_fork"].split("@", 1)[1].split(" ")[0] not in branches
    conn = sqlite3.connect(store.checkout("shop", kept_branch))
    assert conn.execute("SELECT qty FROM stock WHERE item = 'pear'").fetchone() == (-1,)
    conn.close()
    # The seed itself is untouched.
    conn = sqlite3.connect(store.checkout("shop"))
    assert conn.execute("SELECT qty FROM stock ORDER BY item").fetchall() == [(3,), (1,)]
    conn.close()


def test_a_task_that_raises_keeps_its_fork_and_says_so(offshoot_daemon: DaemonHandle, client: Client) -> None:
    db = f"shop-{uuid.uuid4().hex[:8]}"
    client.create(db)
    with client.open(db) as session:
        seed(client, db, session.path)
        session.flush("seed")

    def broken(item: str) -> int:
        sell(item)
        raise RuntimeError(f"out of {item}s")

    forks: list[str] = []
    ephemeral: list[bool] = []

    def record_fork(item: str) -> int:
        forks.append(case_fork().branch)
        ephemeral.append({b.branch: b.ephemeral for b in client.branches(db)}[case_fork().branch])
        return sell(item)

    lifecycle = OffshootCaseLifecycle.session(offshoot_daemon.sock, db, seed="seed", prefix="run-")
    report = Dataset(name="boom", cases=[Case(name="boom", inputs="apple")]).evaluate_sync(broken, lifecycle=lifecycle)
    (failure,) = report.failures
    assert "out of apples" in failure.error_message
    assert "[offshoot] fork kept as" in failure.error_message
    assert "1 row change(s)" in failure.error_message
    kept = failure.error_message.split("fork kept as ", 1)[1].split(":", 1)[0].split("@", 1)[1]
    assert kept.startswith("run-")
    assert kept in {b.branch for b in client.branches(db)}
    assert {b.branch: b.ephemeral for b in client.branches(db)}[kept] is False, "a failed case's fork is kept"

    again = dataset().evaluate_sync(record_fork, lifecycle=lifecycle)
    assert sorted(c.name for c in again.cases) == ["sell a pear twice", "sell an apple"]
    assert len(set(forks)) == 2
    assert not set(forks) & {b.branch for b in client.branches(db)}, "passing cases' forks are destroyed"
    assert ephemeral == [True, True], "through a daemon each case's fork is ephemeral"
    assert [s for s in client.sessions() if s.db == db] == []


def test_outside_a_case_there_is_no_fork() -> None:
    with pytest.raises(OffshootError) as e:
        case_path()
    assert e.value.code == "NOT_FOUND"
    assert e.value.hint is not None


def test_an_unknown_seed_fails_the_case_not_the_run(store: Store) -> None:
    store.create("shop")
    lifecycle = OffshootCaseLifecycle.at_rest(store, "shop", seed="no-such-checkpoint")
    report = Dataset(name="c", cases=[Case(name="c", inputs="apple")]).evaluate_sync(sell, lifecycle=lifecycle)
    (failure,) = report.failures
    assert failure.error_message.startswith('OffshootError: no checkpoint "no-such-checkpoint" on shop@main')
    assert "(hint: " in failure.error_message
    assert {b.branch for b in store.branches("shop")} == {"main"}
