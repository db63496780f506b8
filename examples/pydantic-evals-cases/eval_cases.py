"""A pydantic-evals dataset whose every case runs in its own fork of one seeded database.

    python examples/pydantic-evals-cases/eval_cases.py

The task applies a discount code to a cart in the case's own copy of the shop database (`case_path()`). An evaluator
checks the total never goes negative. The report shows each case's row diff against the seed; the failing case's
fork is kept for inspection, the passing ones are destroyed.
"""

from __future__ import annotations

import sqlite3
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import offshoot
from offshoot.integrations.pydantic_evals import OffshootCaseLifecycle, case_path
from pydantic_evals import Case, Dataset
from pydantic_evals.evaluators import Evaluator, EvaluatorContext


def apply_code(code: str) -> int:
    """The system under test: applies a discount code to cart 1, returns its total in cents."""
    conn = sqlite3.connect(case_path())
    try:
        off = conn.execute("SELECT cents FROM codes WHERE code = ?", (code,)).fetchone()[0]
        conn.execute("UPDATE carts SET total = total - ? WHERE id = 1", (off,))
        conn.execute("INSERT INTO redemptions(code) VALUES (?)", (code,))
        conn.commit()
        return int(conn.execute("SELECT total FROM carts WHERE id = 1").fetchone()[0])
    finally:
        conn.close()


@dataclass
class NotNegative(Evaluator[str, int, Any]):
    def evaluate(self, ctx: EvaluatorContext[str, int, Any]) -> bool:
        return ctx.output >= 0


def main(store_dir: Path) -> None:
    store = offshoot.Store(store_dir)
    store.init()
    store.create("shop")
    conn = sqlite3.connect(store.checkout("shop"))
    conn.executescript(
        """
        CREATE TABLE carts(id INTEGER PRIMARY KEY, total INTEGER);
        CREATE TABLE codes(code TEXT PRIMARY KEY, cents INTEGER);
        CREATE TABLE redemptions(id INTEGER PRIMARY KEY, code TEXT);
        INSERT INTO carts VALUES (1, 1500);
        INSERT INTO codes VALUES ('TEN', 1000), ('TWENTY', 2000);
        """
    )
    conn.close()
    store.checkpoint("shop", "main", "seed")

    dataset = Dataset[str, int, Any](
        name="discounts",
        cases=[Case(name="ten off", inputs="TEN"), Case(name="twenty off", inputs="TWENTY")],
        evaluators=[NotNegative()],
    )
    report = dataset.evaluate_sync(apply_code, lifecycle=OffshootCaseLifecycle.at_rest(store, "shop", seed="seed"))
    for case in sorted(report.cases, key=lambda c: c.name):
        passed = all(a.value for a in case.assertions.values())
        print(f"{case.name}: total {case.output}, passed {passed}, fork {case.attributes['offshoot_fork']}")
        print(f"  rows: {case.metrics['rows_added']} added, {case.metrics['rows_changed']} changed")
    kept = [b.branch for b in store.branches("shop") if b.branch.startswith("case-")]
    print(f"kept for inspection: {len(kept)} fork(s), e.g. offshoot diff shop@main@seed shop@<branch>")


if __name__ == "__main__":
    with tempfile.TemporaryDirectory(prefix="offshoot-evals-") as tmp:
        main(Path(tmp) / "store")
