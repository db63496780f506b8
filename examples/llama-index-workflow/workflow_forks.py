"""A LlamaIndex workflow that asks a human before writing, checkpointed with its database, resumed in a fork.

    python examples/llama-index-workflow/workflow_forks.py

A refund workflow (plain steps, no model) records a pending refund, waits for an approver, then writes the decision.
`WorkflowForks` checkpoints the database together with the workflow's `Context` while it waits; a second answer is
tried from that very point in a fork (`run_from`), leaving the first run's database as it was.
"""

from __future__ import annotations

import asyncio
import sqlite3
import tempfile
from pathlib import Path
from typing import Any

import offshoot
from llama_index.core.workflow import Context, StartEvent, StopEvent, Workflow, step
from offshoot.integrations.llama_index import WorkflowForks
from workflows.events import HumanResponseEvent, InputRequiredEvent


class Approve(InputRequiredEvent):
    amount: int


class Decision(HumanResponseEvent):
    approved: bool


class Refund(Workflow):
    """Writes refunds in the database at `db_path`."""

    def __init__(self, db_path: str, **kwargs: Any) -> None:
        super().__init__(timeout=60, **kwargs)
        self.db_path = db_path

    def write(self, status: str) -> None:
        conn = sqlite3.connect(self.db_path)
        try:
            conn.execute("INSERT OR REPLACE INTO refunds VALUES (1, ?)", (status,))
            conn.commit()
        finally:
            conn.close()

    @step
    async def request(self, ctx: Context, ev: StartEvent) -> Approve:
        self.write("pending")
        return Approve(amount=ev.amount)

    @step
    async def decide(self, ctx: Context, ev: Decision) -> StopEvent:
        self.write("approved" if ev.approved else "rejected")
        return StopEvent(result="approved" if ev.approved else "rejected")


def status(path: str) -> str:
    conn = sqlite3.connect(path)
    try:
        return str(conn.execute("SELECT status FROM refunds WHERE id = 1").fetchone()[0])
    finally:
        conn.close()


async def main(store_dir: Path) -> None:
    offshoot.Store(store_dir).init()
    with WorkflowForks.at_rest(store_dir, "refunds") as forks:
        conn = sqlite3.connect(forks.path)
        conn.execute("CREATE TABLE refunds(id INTEGER PRIMARY KEY, status TEXT)")
        conn.close()
        handler = Refund(forks.path).run(amount=40)
        async for event in forks.stream(handler):
            if isinstance(event, Approve):
                handler.ctx.send_event(Decision(approved=False))
        print(f"first run: {await handler}; checkpoints {[c.name for c in forks.checkpoints]}")

        waiting = forks.checkpoints[0]
        retry = await forks.fork_at(waiting, "second-opinion", ttl="1h")
        print(f"the fork at {waiting.name}: refund {status(retry.path)}")
        again = Refund(retry.path)
        handler = again.run(ctx=waiting.context(again))  # run_from: the same run, waiting for the approver
        handler.ctx.send_event(Decision(approved=True))
        async for _ in retry.stream(handler):
            pass
        print(f"second opinion: {await handler}; fork {status(retry.path)}, main still {status(forks.path)}")
        retry.close()


if __name__ == "__main__":
    with tempfile.TemporaryDirectory(prefix="offshoot-llama-") as tmp:
        asyncio.run(main(Path(tmp) / "store"))
