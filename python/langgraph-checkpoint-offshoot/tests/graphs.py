"""Small real LangGraph graphs the tests compile against the savers."""

from __future__ import annotations

import operator
from typing import Annotated, Any, TypedDict

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph


class Counter(TypedDict):
    """The worked example's state."""

    n: int


class Log(TypedDict):
    """A two-step graph's state: an appended log and a running total."""

    log: Annotated[list[str], operator.add]
    total: int


def counter_app(saver: BaseCheckpointSaver[Any]) -> CompiledStateGraph[Any, Any, Any, Any]:
    """START -> step (n + 1) -> END."""

    def step(state: Counter) -> dict[str, int]:
        return {"n": state["n"] + 1}

    g = StateGraph(Counter)
    g.add_node("step", step)
    g.add_edge(START, "step")
    g.add_edge("step", END)
    return g.compile(checkpointer=saver)


def log_app(saver: BaseCheckpointSaver[Any]) -> CompiledStateGraph[Any, Any, Any, Any]:
    """START -> plan -> act -> END: every run appends two log lines and adds its input to the total."""

    def plan(state: Log) -> dict[str, Any]:
        return {"log": [f"plan {state['total']}"]}

    def act(state: Log) -> dict[str, Any]:
        return {"log": ["act"], "total": state["total"] + 1}

    g = StateGraph(Log)
    g.add_node("plan", plan)
    g.add_node("act", act)
    g.add_edge(START, "plan")
    g.add_edge("plan", "act")
    g.add_edge("act", END)
    return g.compile(checkpointer=saver)


def thread(thread_id: str) -> RunnableConfig:
    """The config of one LangGraph thread."""
    return {"configurable": {"thread_id": thread_id}}
