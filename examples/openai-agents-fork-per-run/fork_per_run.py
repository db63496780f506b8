"""An OpenAI Agents SDK agent that edits an orders database, each run in its own fork, kept only if it checks out.

    python examples/openai-agents-fork-per-run/fork_per_run.py

Offline: the agent's model is a scripted implementation of the SDK's `Model` interface (swap in a real model name to
run it against one). Two runs of the same task: the first marks an order paid and then deletes another by mistake;
the verdict rolls that action back before promoting. The second run's verdict discards it whole.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import tempfile
from pathlib import Path
from typing import Any

import offshoot
from agents import (
    Agent,
    Model,
    ModelResponse,
    RunContextWrapper,
    RunResult,
    Usage,
    function_tool,
    set_tracing_disabled,
)
from offshoot.integrations.openai_agents import ForkPerRun, RunFork, Verdict
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText


class Scripted(Model):
    """Plays a fixed list of turns: tool calls `(name, args)`, or a final text."""

    def __init__(self, turns: list[Any]) -> None:
        self.turns = turns

    async def get_response(self, *args: Any, **kwargs: Any) -> ModelResponse:
        turn = self.turns.pop(0)
        if isinstance(turn, str):
            text = ResponseOutputText(text=turn, type="output_text", annotations=[])
            out: list[Any] = [
                ResponseOutputMessage(id="m", content=[text], role="assistant", status="completed", type="message")
            ]
        else:
            name, arguments = turn
            out = [
                ResponseFunctionToolCall(
                    id="f",
                    call_id=f"c{len(self.turns)}",
                    name=name,
                    arguments=json.dumps(arguments),
                    type="function_call",
                )
            ]
        return ModelResponse(output=out, usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError


def sql(ctx: RunContextWrapper[RunFork], statement: str, *params: object) -> str:
    conn = sqlite3.connect(ctx.context.path)  # the run's own fork of the application database
    try:
        changed = conn.execute(statement, params).rowcount
        conn.commit()
        return f"{changed} row(s)"
    finally:
        conn.close()


@function_tool
def mark_paid(ctx: RunContextWrapper[RunFork], order_id: int) -> str:
    """Marks an order paid."""
    return sql(ctx, "UPDATE orders SET status = 'paid' WHERE id = ?", order_id)


@function_tool
def delete_order(ctx: RunContextWrapper[RunFork], order_id: int) -> str:
    """Deletes an order."""
    return sql(ctx, "DELETE FROM orders WHERE id = ?", order_id)


def orders(path: str) -> list[tuple[int, str]]:
    conn = sqlite3.connect(path)
    try:
        return [(r[0], r[1]) for r in conn.execute("SELECT id, status FROM orders ORDER BY id")]
    finally:
        conn.close()


def undo_deletes(result: RunResult, fork: RunFork) -> Verdict:
    """The verdict: keep the run's work, minus any delete (rolled back to the checkpoint before it)."""
    deletes = [c for c in fork.checkpoints if c.endswith("delete_order")]
    if deletes:
        fork.rollback(fork.checkpoints[fork.checkpoints.index(deletes[0]) - 1])
    print(f"run {fork.branch}: checkpoints {fork.checkpoints}, orders in the fork {orders(fork.path)}")
    return "promote" if len(orders(fork.path)) == 2 else "discard"


async def main(store_dir: Path) -> list[tuple[int, str]]:
    store = offshoot.Store(store_dir)
    store.init()
    store.create("shop")
    conn = sqlite3.connect(store.checkout("shop"))
    conn.executescript(
        "CREATE TABLE orders(id INTEGER PRIMARY KEY, status TEXT);"
        "INSERT INTO orders VALUES (1, 'pending'), (2, 'pending');"
    )
    conn.close()
    store.checkpoint("shop", "main", "seed")

    runs = ForkPerRun.at_rest(store, "shop", force=True)
    turns = [("mark_paid", {"order_id": 1}), ("delete_order", {"order_id": 2}), "order 1 paid"]
    agent = Agent(name="clerk", model=Scripted(turns), tools=[mark_paid, delete_order])
    done = await runs.run(agent, "mark order 1 paid", verdict=undo_deletes)
    print(f"verdict: {done.verdict}; main now {orders(store.checkout('shop'))}")

    careless = Agent(name="clerk", model=Scripted([("delete_order", {"order_id": 1}), "done"]), tools=[delete_order])
    done = await runs.run(careless, "tidy up", verdict=lambda result, fork: "discard")
    print(f"verdict: {done.verdict}; main still {orders(store.checkout('shop'))}")
    return orders(store.checkout("shop"))


if __name__ == "__main__":
    set_tracing_disabled(True)  # nothing leaves this machine
    with tempfile.TemporaryDirectory(prefix="offshoot-agents-") as tmp:
        asyncio.run(main(Path(tmp) / "store"))
