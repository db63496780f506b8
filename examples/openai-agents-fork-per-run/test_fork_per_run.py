"""The OpenAI Agents SDK example runs end to end and keeps exactly the wanted change."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def test_the_example_promotes_the_good_run_minus_its_mistake() -> None:
    proc = subprocess.run(
        [sys.executable, str(HERE / "fork_per_run.py")], capture_output=True, text=True, check=False, timeout=300
    )
    assert proc.returncode == 0, proc.stderr
    assert "checkpoints ['start', 'tool-1-mark_paid'], orders in the fork [(1, 'paid'), (2, 'pending')]" in proc.stdout
    assert "verdict: promote; main now [(1, 'paid'), (2, 'pending')]" in proc.stdout
    assert "verdict: discard; main still [(1, 'paid'), (2, 'pending')]" in proc.stdout
