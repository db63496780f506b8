"""The LlamaIndex example runs end to end: the second opinion runs in a fork from the waiting point."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def test_run_from_a_checkpoint_in_a_fork() -> None:
    proc = subprocess.run(
        [sys.executable, str(HERE / "workflow_forks.py")], capture_output=True, text=True, check=False, timeout=300
    )
    assert proc.returncode == 0, proc.stderr
    assert "first run: rejected; checkpoints ['idle-1', 'stop']" in proc.stdout
    assert "the fork at idle-1: refund pending" in proc.stdout
    assert "second opinion: approved; fork approved, main still rejected" in proc.stdout
