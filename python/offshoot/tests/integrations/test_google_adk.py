"""The Google ADK rewind against the real `google-adk` package, driven by a scripted `BaseLlm`: ADK's own rewind
restores the session state only; OffshootRewind rolls the application database back to before the same
invocation too."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncGenerator
from typing import Any

import pytest
from conftest import read_notes, write_note
from google.adk.agents import LlmAgent
from google.adk.apps import App
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.adk.tools.tool_context import ToolContext
from google.genai import types
from pydantic import Field

from offshoot import Client, OffshootError, Store
from offshoot.daemon import DaemonHandle
from offshoot.integrations.google_adk import OffshootRewind, checkpoint_name


class ScriptedLlm(BaseLlm):
    """ADK's own model interface, answering each request with the next scripted turn: a tool call `(name, args)`
    or a final text."""

    script: list[Any] = Field(default_factory=list)

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        turn = self.script.pop(0)
        if isinstance(turn, str):
            part = types.Part(text=turn)
        else:
            name, args = turn
            part = types.Part(function_call=types.FunctionCall(name=name, args=args, id=f"call-{uuid.uuid4().hex}"))
        yield LlmResponse(content=types.Content(role="model", parts=[part]))


def build(rewind: OffshootRewind, script: list[Any]) -> Runner:
    def add_note(body: str, tool_context: ToolContext) -> str:
        """Stores a note in the application database."""
        write_note(rewind.path, body)
        tool_context.state["notes"] = int(tool_context.state.get("notes", 0)) + 1
        return "stored"

    agent = LlmAgent(name="notes", model=ScriptedLlm(model="scripted", script=script), tools=[add_note])
    return Runner(app=App(name="notes", root_agent=agent, plugins=[rewind]), session_service=InMemorySessionService())


async def say(runner: Runner, session_id: str, text: str) -> str:
    """One invocation; returns its id."""
    message = types.Content(role="user", parts=[types.Part(text=text)])
    ids = {e.invocation_id async for e in runner.run_async(user_id="u", session_id=session_id, new_message=message)}
    (invocation,) = ids
    return invocation


async def state(runner: Runner, session_id: str) -> dict[str, Any]:
    """The ADK session's state."""
    session = await runner.session_service.get_session(app_name="notes", user_id="u", session_id=session_id)
    assert session is not None
    return dict(session.state)


SCRIPT = [("add_note", {"body": "first"}), "ok", ("add_note", {"body": "second"}), "ok"]


def run_rewind(rewind: OffshootRewind) -> None:
    async def run() -> None:
        runner = build(rewind, list(SCRIPT))
        session = await runner.session_service.create_session(app_name="notes", user_id="u")
        first = await say(runner, session.id, "note first")
        second = await say(runner, session.id, "note second")
        assert read_notes(rewind.path) == ["first", "second"]
        assert (await state(runner, session.id))["notes"] == 2

        await rewind.rewind_async(runner, user_id="u", session_id=session.id, rewind_before_invocation_id=second)
        assert read_notes(rewind.path) == ["first"]
        assert (await state(runner, session.id))["notes"] == 1

        await rewind.rewind_async(runner, user_id="u", session_id=session.id, rewind_before_invocation_id=first)
        assert read_notes(rewind.path) == []
        await runner.close()

    asyncio.run(run())


def test_a_rewind_rolls_the_database_back_at_rest(store: Store) -> None:
    with OffshootRewind.at_rest(store, "app") as rewind:
        run_rewind(rewind)
    checkpoints = next(b for b in store.branches("app") if b.branch == "main").checkpoints
    # Rolling back to before the first invocation dropped the checkpoint taken before the second.
    assert len([c for c in checkpoints if c.startswith("before-")]) == 1


def test_a_rewind_rolls_the_database_back_in_a_daemon_session(offshoot_daemon: DaemonHandle, client: Client) -> None:
    db = f"adk-{uuid.uuid4().hex[:8]}"
    run_rewind(OffshootRewind.session(offshoot_daemon.sock, db))
    assert [s for s in client.sessions() if s.db == db] == [], "the runner's close released the branch"


def test_adk_alone_leaves_the_rows_behind(store: Store) -> None:
    """What the plugin adds: the same rewind through ADK only restores the state, not the database."""

    async def run() -> None:
        with OffshootRewind.at_rest(store, "bare") as rewind:
            runner = build(rewind, list(SCRIPT))
            session = await runner.session_service.create_session(app_name="notes", user_id="u")
            await say(runner, session.id, "note first")
            second = await say(runner, session.id, "note second")
            await runner.rewind_async(user_id="u", session_id=session.id, rewind_before_invocation_id=second)
            assert read_notes(rewind.path) == ["first", "second"]
            await runner.close()

    asyncio.run(run())


def test_an_invocation_never_seen_changes_nothing(store: Store) -> None:
    async def run() -> None:
        with OffshootRewind.at_rest(store, "app") as rewind:
            runner = build(rewind, list(SCRIPT))
            session = await runner.session_service.create_session(app_name="notes", user_id="u")
            await say(runner, session.id, "note first")
            with pytest.raises(OffshootError) as e:
                await rewind.rewind_async(runner, user_id="u", session_id=session.id, rewind_before_invocation_id="e-x")
            assert e.value.code == "NOT_FOUND"
            assert checkpoint_name("e-x").startswith("before-")
            assert read_notes(rewind.path) == ["first"]
            await runner.close()

    asyncio.run(run())
