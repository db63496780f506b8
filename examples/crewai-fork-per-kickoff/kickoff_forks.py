"""A CrewAI crew that restocks an inventory, each kickoff in its own fork of the database, promoted if it checks out.

    python examples/crewai-fork-per-kickoff/kickoff_forks.py

Offline: the agent's LLM is a scripted `BaseLLM`, CrewAI's own custom-LLM interface. The first kickoff restocks
correctly and is promoted; the second writes a negative quantity, and the verdict discards it, so `main` never sees it.
"""

from __future__ import annotations

import os
import sqlite3
import tempfile
from pathlib import Path
from typing import Any

os.environ.setdefault("CREWAI_DISABLE_TELEMETRY", "true")
os.environ.setdefault("OTEL_SDK_DISABLED", "true")

import offshoot
from crewai import Agent, Crew, CrewOutput, Task
from crewai.llms.base_llm import BaseLLM
from crewai.tools import tool
from offshoot.integrations.crewai import ForkPerKickoff, KickoffFork, Verdict


class Scripted(BaseLLM):
    """Replies with the next scripted ReAct turn."""

    replies: list[str]

    def call(self, messages: Any, *args: Any, **kwargs: Any) -> str:
        return self.replies.pop(0)

    def supports_function_calling(self) -> bool:
        return False


def stock(path: str) -> dict[str, int]:
    conn = sqlite3.connect(path)
    try:
        return {str(r[0]): int(r[1]) for r in conn.execute("SELECT item, qty FROM stock ORDER BY item")}
    finally:
        conn.close()


def restock_crew(qty: int) -> Any:
    def build(fork: KickoffFork) -> Crew:
        @tool("restock")
        def restock(item: str, qty: int) -> str:
            """Adds `qty` units of `item` to the stock."""
            conn = sqlite3.connect(fork.path)  # the kickoff's own fork of the inventory
            try:
                conn.execute("UPDATE stock SET qty = qty + ? WHERE item = ?", (qty, item))
                conn.commit()
            finally:
                conn.close()
            return "done"

        replies = [
            f'Thought: restock\nAction: restock\nAction Input: {{"item": "apple", "qty": {qty}}}',
            "Thought: done\nFinal Answer: restocked",
        ]
        clerk = Agent(
            role="clerk",
            goal="keep stock",
            backstory="careful",
            llm=Scripted(model="scripted", replies=replies),
            tools=[restock],
        )
        return Crew(agents=[clerk], tasks=[Task(description="Restock apples", expected_output="done", agent=clerk)])

    return build


def no_negative_stock(output: CrewOutput, fork: KickoffFork) -> Verdict:
    ok = min(stock(fork.path).values()) >= 0
    print(f"kickoff in {fork.branch}: {output.raw}, checkpoints {fork.checkpoints}, stock {stock(fork.path)}")
    return "promote" if ok else "discard"


def main(store_dir: Path) -> None:
    store = offshoot.Store(store_dir)
    store.init()
    store.create("inventory")
    conn = sqlite3.connect(store.checkout("inventory"))
    conn.executescript("CREATE TABLE stock(item TEXT PRIMARY KEY, qty INTEGER); INSERT INTO stock VALUES ('apple', 2);")
    conn.close()
    store.checkpoint("inventory", "main", "seed")

    runs = ForkPerKickoff.at_rest(store, "inventory", force=True)
    for qty in (10, -50):
        done = runs.kickoff(restock_crew(qty), verdict=no_negative_stock)
        print(f"verdict {done.verdict}: main {stock(store.checkout('inventory'))}")


if __name__ == "__main__":
    with tempfile.TemporaryDirectory(prefix="offshoot-crewai-") as tmp:
        main(Path(tmp) / "store")
