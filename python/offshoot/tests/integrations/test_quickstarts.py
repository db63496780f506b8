"""Every integration page's quickstart runs as written (CrewAI's, in its own environment, in crewai/)."""

from __future__ import annotations

import pytest
from quickstart import run_quickstart


@pytest.mark.parametrize(
    "page", ["openai-agents.md", "pydantic-evals.md", "llama-index.md", "google-adk.md", "langgraph.md"]
)
def test_the_quickstart_runs_as_written(page: str) -> None:
    run_quickstart(page)
