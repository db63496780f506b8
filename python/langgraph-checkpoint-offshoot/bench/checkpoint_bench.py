"""The cost of OffshootSaver.checkpoint() on a small graph, in session mode and at rest, beside the graph step it
makes durable. Starts its own daemon on a temp store.

    .venv-py/bin/python python/langgraph-checkpoint-offshoot/bench/checkpoint_bench.py [ROUNDS]
"""

from __future__ import annotations

import operator
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, TypedDict

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, StateGraph

from langgraph_checkpoint_offshoot import OffshootSaver

REPO = Path(__file__).resolve().parents[3]


class State(TypedDict):
    """An appended log and a running total."""

    log: Annotated[list[str], operator.add]
    total: int


def app(saver: BaseCheckpointSaver[Any]) -> Any:
    def plan(state: State) -> dict[str, Any]:
        return {"log": [f"plan {state['total']}"]}

    def act(state: State) -> dict[str, Any]:
        return {"log": ["act"], "total": state["total"] + 1}

    g = StateGraph(State)
    g.add_node("plan", plan)
    g.add_node("act", act)
    g.add_edge(START, "plan")
    g.add_edge("plan", "act")
    g.add_edge("act", END)
    return g.compile(checkpointer=saver)


def rounds(saver: BaseCheckpointSaver[Any], n: int, checkpoint: Callable[[int], object] | None) -> dict[str, float]:
    graph = app(saver)
    config: Any = {"configurable": {"thread_id": "bench"}}
    graph.invoke({"log": [], "total": 0}, config)
    step: list[float] = []
    cp: list[float] = []
    for i in range(n):
        t0 = time.perf_counter()
        graph.invoke({"log": [], "total": i}, config)
        t1 = time.perf_counter()
        step.append((t1 - t0) * 1000)
        if checkpoint is not None:
            checkpoint(i)
            cp.append((time.perf_counter() - t1) * 1000)
    out = {"graph step": statistics.median(step)}
    if cp:
        out["checkpoint()"] = statistics.median(cp)
    return out


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 30
    bin_ = os.environ.get("OFFSHOOT_BIN", str(REPO / "offshoot"))
    os.environ["OFFSHOOT_BIN"] = bin_
    root = tempfile.mkdtemp(prefix="lgo-bench-")
    try:
        store = os.path.join(root, "store")
        subprocess.run([bin_, "-store", store, "init"], check=True, capture_output=True)
        sock = os.path.join(root, "d.sock")
        daemon = subprocess.Popen(
            [bin_, "-store", store, "serve", "-socket", sock, "-flush-every", "0", "-reap-every", "0"],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        try:
            if daemon.stdout is None or not daemon.stdout.readline().startswith("offshoot serving on"):
                raise RuntimeError("the daemon did not start")
            results: dict[str, dict[str, float]] = {}
            with SqliteSaver.from_conn_string(":memory:") as warm:
                rounds(warm, 10, None)  # imports, graph compilation and caches warm up outside the timings
            with SqliteSaver.from_conn_string(os.path.join(root, "plain.db")) as plain:
                results["stock SqliteSaver (baseline)"] = rounds(plain, n, None)
            with OffshootSaver.session(sock, "bench") as s:
                results["session, named"] = rounds(s, n, lambda i: s.checkpoint(f"cp-{i}"))
            with OffshootSaver.session(sock, "bench2") as s:
                results["session, unnamed"] = rounds(s, n, lambda i: s.checkpoint())
            with OffshootSaver.at_rest(store, "rest") as s:
                results["at rest, named"] = rounds(s, max(5, n // 3), lambda i: s.checkpoint(f"cp-{i}"))
        finally:
            daemon.terminate()
            daemon.wait(timeout=30)
        load = os.getloadavg()[0]
        print(f"OffshootSaver.checkpoint() on a two-node graph, medians of {n} rounds (load average {load:.1f})")
        for name, r in results.items():
            print(f"  {name:30} " + "  ".join(f"{k} {v:.2f} ms" for k, v in r.items()))
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
