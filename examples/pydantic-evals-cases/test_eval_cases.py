"""The pydantic-evals example runs end to end: each case in its own fork, the failing one kept."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def test_the_example_keeps_only_the_failing_cases_fork() -> None:
    proc = subprocess.run(
        [sys.executable, str(HERE / "eval_cases.py")], capture_output=True, text=True, check=False, timeout=300
    )
    assert proc.returncode == 0, proc.stderr
    assert "ten off: total 500, passed True, fork shop@case-" in proc.stdout
    assert "(destroyed: passed)" in proc.stdout
    # Both cases started from the seed's 1500: the second did not see the first's discount.
    assert "twenty off: total -500, passed False" in proc.stdout
    assert proc.stdout.count("rows: 1 added, 1 changed") == 2
    assert "kept for inspection: 1 fork(s)" in proc.stdout
