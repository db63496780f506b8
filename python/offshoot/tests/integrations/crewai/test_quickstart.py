"""The CrewAI page's quickstart runs as written, in the CrewAI environment."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from quickstart import run_quickstart  # noqa: E402


def test_the_quickstart_runs_as_written() -> None:
    run_quickstart("crewai.md")
