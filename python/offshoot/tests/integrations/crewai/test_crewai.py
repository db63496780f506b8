"""The CrewAI recipe against the real `crewai` package, driven by a scripted LLM of CrewAI's own kind (`BaseLLM`):
one fork per kickoff, the crew's tools and its SQLite task outputs writing the fork, a checkpoint per task, `reset`
as a rollback, kept or promoted by a verdict. Runs in its own environment (scripts/python-env.sh crewai)."""

from __future__ import annotations

import sqlite3
from typing import Any

import pytest
from conftest import read_notes, write_note
from crewai import Agent, Crew, Task
from crewai.llms.base_llm import BaseLLM
from crewai.tools import tool

from offshoot import OffshootError, Store
from offshoot.integrations.crewai import ForkPerKickoff, KickoffFork


class ScriptedLLM(BaseLLM):
    """CrewAI's own LLM interface, answering each call with the next scripted reply (ReAct text)."""

    script: list[str]

    def call(self, messages: Any, *args: Any, **kwargs: Any) -> str:
        return self.script.pop(0)

    def supports_function_calling(self) -> bool:
        return False


def task_outputs(path: str) -> int:
    conn = sqlite3.connect(path)
    try:
        return int(conn.execute("SELECT count(*) FROM latest_kickoff_task_outputs").fetchone()[0])
    finally:
        conn.close()


REPLIES = [
    'Thought: store it\nAction: add_note\nAction Input: {"body": "first"}',
    "Thought: done\nFinal Answer: stored first",
    'Thought: store it\nAction: add_note\nAction Input: {"body": "second"}',
    "Thought: done\nFinal Answer: stored second",
]


def note_crew(fork: KickoffFork) -> Crew:
    @tool("add_note")
    def add_note(body: str) -> str:
        """Stores a note in the application database."""
        write_note(fork.path, body)
        return "stored"

    writer = Agent(
        role="writer",
        goal="store notes",
        backstory="keeps notes",
        llm=ScriptedLLM(model="scripted", script=list(REPLIES)),
        tools=[add_note],
        verbose=False,
    )
    tasks = [
        Task(description=f"Store the note '{body}'", expected_output="confirmation", agent=writer)
        for body in ("first", "second")
    ]
    return Crew(agents=[writer], tasks=tasks, verbose=False)


def test_a_kickoff_in_its_own_fork_promoted(store: Store) -> None:
    store.create("app")
    seen: list[KickoffFork] = []

    def verdict(output: Any, fork: KickoffFork) -> Any:
        seen.append(fork)
        assert read_notes(fork.path) == ["first", "second"]
        assert task_outputs(fork.path) == 2, "the crew's own SQLite store writes the fork"
        assert read_notes(store.checkout("app")) == []
        return "promote"

    done = ForkPerKickoff.at_rest(store, "app", force=True).kickoff(note_crew, verdict=verdict)
    assert done.output.raw == "stored second"
    assert done.fork.checkpoints == ["start", "task-1", "task-2"]
    assert read_notes(store.checkout("app")) == ["first", "second"]
    assert done.fork.branch not in {b.branch for b in store.branches("app")}


def test_a_kickoff_promotes_only_onto_the_head_it_forked(store: Store) -> None:
    """A kickoff whose base moved since its fork (a human checkpointed it while the crew ran) is not promoted: the
    result says base_moved and the fork is kept; the human's work stays on the base."""
    store.create("app")

    def verdict(output: Any, fork: KickoffFork) -> Any:
        write_note(store.checkout("app"), "human")
        store.checkpoint("app", "main", "human")
        return "promote"

    done = ForkPerKickoff.at_rest(store, "app", force=True).kickoff(note_crew, verdict=verdict)
    assert done.promoted_txid is None
    assert done.base_moved
    assert done.promote_error is not None
    assert "is kept" in done.promote_error.message
    assert done.fork.branch in {b.branch for b in store.branches("app")}
    assert read_notes(store.checkout("app")) == ["human"]


def test_reset_is_a_rollback_and_keep_leaves_the_fork(store: Store) -> None:
    store.create("app")

    def undo_the_second_task(output: Any, fork: KickoffFork) -> Any:
        assert task_outputs(fork.path) == 2
        fork.rollback("task-1")
        assert read_notes(fork.path) == ["first"]
        # CrewAI records a task's output row just after the task's callback, so task-1 holds none yet.
        assert task_outputs(fork.path) == 0
        fork.reset()
        assert read_notes(fork.path) == []
        return "keep"

    done = ForkPerKickoff.at_rest(store, "app").kickoff(note_crew, verdict=undo_the_second_task)
    assert done.fork.checkpoints == ["start"]
    info = {b.branch: b for b in store.branches("app")}
    assert info[done.fork.branch].ttl == "1h0m0s"
    assert read_notes(store.checkout("app")) == []


def test_a_kickoff_that_fails_keeps_its_fork(store: Store) -> None:
    store.create("app")

    def short_script(fork: KickoffFork) -> Crew:
        crew = note_crew(fork)
        crew.agents[0].llm.script = REPLIES[:2]  # type: ignore[union-attr]
        return crew

    before = {b.branch for b in store.branches("app")}
    with pytest.raises(Exception, match="pop from empty list"):
        ForkPerKickoff.at_rest(store, "app").kickoff(short_script, verdict=lambda o, f: "promote")
    (kept,) = {b.branch for b in store.branches("app")} - before
    assert read_notes(store.checkout("app", kept)) == ["first"]
    with pytest.raises(OffshootError) as e:
        ForkPerKickoff.at_rest(store, "app").kickoff(note_crew, verdict=lambda o, f: "promote")
    assert e.value.code == "PROTECTED"
