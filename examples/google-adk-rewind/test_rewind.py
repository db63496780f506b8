"""The Google ADK example runs end to end: the rewind undoes the second booking in the state and the database."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def test_the_rewind_reaches_the_database() -> None:
    proc = subprocess.run(
        [sys.executable, str(HERE / "rewind.py")], capture_output=True, text=True, check=False, timeout=300
    )
    assert proc.returncode == 0, proc.stderr
    assert "before the rewind: database ['A1', 'A2'], session state ['A1', 'A2']" in proc.stdout
    assert "after the rewind:  database ['A1'], session state ['A1']" in proc.stdout
