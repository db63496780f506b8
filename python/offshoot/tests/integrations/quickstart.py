"""Runs a docs/integrations page's quickstart as pasted: its first python block, in an empty directory, in a fresh
interpreter; the text block right after it is what it must print."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

DOCS = Path(__file__).resolve().parents[4] / "docs" / "integrations"
_BLOCK = re.compile(r"```(\w+)\n(.*?)```", re.S)


def blocks(page: str) -> tuple[str, str]:
    """The page's first python block and the text block that follows it."""
    found = _BLOCK.findall((DOCS / page).read_text())
    (lang, code), (out_lang, expected) = found[0], found[1]
    assert (lang, out_lang) == ("python", "text"), f"{page} must start with a python quickstart and its output"
    return code, expected


def run_quickstart(page: str) -> None:
    code, expected = blocks(page)
    assert len(code.strip().splitlines()) <= 10, f"the quickstart of {page} is over 10 lines"
    with tempfile.TemporaryDirectory(prefix="offshoot-quickstart-") as cwd:
        proc = subprocess.run(
            [sys.executable, "-c", code],
            cwd=cwd,
            capture_output=True,
            text=True,
            check=False,
            timeout=300,
            env={**os.environ, "CREWAI_DISABLE_TELEMETRY": "true", "OTEL_SDK_DISABLED": "true"},
        )
    assert proc.returncode == 0, f"{page}:\n{proc.stderr}"
    for line in expected.strip().splitlines():
        assert line in proc.stdout.splitlines(), f"{page}: {line!r} not printed:\n{proc.stdout}"
