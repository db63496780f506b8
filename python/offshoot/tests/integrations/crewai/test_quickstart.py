"""The CrewAI page's quickstart runs as written, in the CrewAI environment."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any


def quickstart() -> Any:
    """The shared quickstart runner (tests/integrations/quickstart.py), loaded from its file."""
    spec = importlib.util.spec_from_file_location("quickstart", Path(__file__).resolve().parents[1] / "quickstart.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_quickstart_runs_as_written() -> None:
    quickstart().run_quickstart("crewai.md")
