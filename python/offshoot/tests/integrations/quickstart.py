"""Runs a docs/integrations page's quickstart as pasted: its python block, after the one-line install block the page
opens with, in an empty directory, in a fresh interpreter; the text block right after it is what it must print."""

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
    """The page's python quickstart and the text block that follows it, after the page's one-line install block."""
    found = _BLOCK.findall((DOCS / page).read_text())
    (install_lang, install), (lang, code), (out_lang, expected) = found[0], found[1], found[2]
    assert (install_lang, len(install.strip().splitlines())) == ("sh", 1), f"{page} must open with one install line"
    assert install.startswith("pip install "), f"{page}: its install line is not a pip install"
    assert (lang, out_lang) == ("python", "text"), f"{page} must go on with a python quickstart and its output"
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
