"""The CrewAI example runs end to end (in the CrewAI environment): the good kickoff promoted, the bad one discarded."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def test_only_the_good_kickoff_reaches_main() -> None:
    proc = subprocess.run(
        [sys.executable, str(HERE / "kickoff_forks.py")], capture_output=True, text=True, check=False, timeout=600
    )
    assert proc.returncode == 0, proc.stderr
    assert "restocked, checkpoints ['start', 'task-1'], stock {'apple': 12}" in proc.stdout
    assert "verdict promote: main {'apple': 12}" in proc.stdout
    assert "stock {'apple': -38}" in proc.stdout
    assert "verdict discard: main {'apple': 12}" in proc.stdout
