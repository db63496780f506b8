"""A Google ADK agent that books seats in a database, then a rewind that undoes the booking on both sides.

    python examples/google-adk-rewind/rewind.py

Offline: the agent's model is a scripted `BaseLlm`, ADK's own model interface. ADK's `rewind_async` alone would put
the session state back and leave the booked row in the database; `OffshootRewind` rolls the database back to before
the same invocation.
"""

from __future__ import annotations

import asyncio
import sqlite3
import tempfile
from collections.abc import AsyncGenerator
from pathlib import Path
from typing import Any

import offshoot
from google.adk.agents import LlmAgent
from google.adk.apps import App
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import InMemoryRunner
from google.adk.tools.tool_context import ToolContext
from google.genai import types
from offshoot.integrations.google_adk import OffshootRewind
from pydantic import Field


class Scripted(BaseLlm):
    """Answers each request with the next turn: a tool call `(name, args)`, or a final text."""

    turns: list[Any] = Field(default_factory=list)

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        turn = self.turns.pop(0)
        part = (
            types.Part(text=turn)
            if isinstance(turn, str)
            else types.Part(function_call=types.FunctionCall(name=turn[0], args=turn[1]))
        )
        yield LlmResponse(content=types.Content(role="model", parts=[part]))


def seats(path: str) -> list[str]:
    conn = sqlite3.connect(path)
    try:
        return [r[0] for r in conn.execute("SELECT seat FROM bookings ORDER BY seat")]
    finally:
        conn.close()


async def main(store_dir: Path) -> None:
    store = offshoot.Store(store_dir)
    store.init()
    rewind = OffshootRewind.at_rest(store, "cinema")
    conn = sqlite3.connect(rewind.path)
    conn.execute("CREATE TABLE bookings(seat TEXT PRIMARY KEY)")
    conn.close()

    def book(seat: str, tool_context: ToolContext) -> str:
        """Books a seat."""
        conn = sqlite3.connect(rewind.path)  # read the path each time: a rewind can move it
        try:
            conn.execute("INSERT INTO bookings VALUES (?)", (seat,))
            conn.commit()
        finally:
            conn.close()
        tool_context.state["booked"] = [*tool_context.state.get("booked", []), seat]
        return f"booked {seat}"

    turns = [("book", {"seat": "A1"}), "A1 is yours", ("book", {"seat": "A2"}), "A2 is yours"]
    agent = LlmAgent(name="usher", model=Scripted(model="scripted", turns=turns), tools=[book])
    runner = InMemoryRunner(app=App(name="cinema", root_agent=agent, plugins=[rewind]))
    session = await runner.session_service.create_session(app_name="cinema", user_id="u")
    invocations = []
    for text in ("book A1", "book A2"):
        message = types.Content(role="user", parts=[types.Part(text=text)])
        events = [e async for e in runner.run_async(user_id="u", session_id=session.id, new_message=message)]
        invocations.append(events[0].invocation_id)

    async def state() -> Any:
        got = await runner.session_service.get_session(app_name="cinema", user_id="u", session_id=session.id)
        assert got is not None
        return got.state["booked"]

    print(f"before the rewind: database {seats(rewind.path)}, session state {await state()}")
    await rewind.rewind_async(runner, user_id="u", session_id=session.id, rewind_before_invocation_id=invocations[1])
    print(f"after the rewind:  database {seats(rewind.path)}, session state {await state()}")
    await runner.close()


if __name__ == "__main__":
    with tempfile.TemporaryDirectory(prefix="offshoot-adk-") as tmp:
        asyncio.run(main(Path(tmp) / "store"))
