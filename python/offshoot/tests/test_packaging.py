"""The wheel: the distribution name, Python floor, the extras and the pytest entry point, py.typed, and no
requirement outside an extra (the client is standard library only)."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]


def test_the_wheel_carries_the_public_surface(tmp_path: Path) -> None:
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            "-w",
            str(tmp_path),
            str(PROJECT),
        ],
        check=True,
    )
    (wheel,) = tmp_path.glob("offshoot_db-*.whl")
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        dist_info = next(n.split("/")[0] for n in names if n.endswith(".dist-info/METADATA"))
        metadata = z.read(f"{dist_info}/METADATA").decode()
        entry_points = z.read(f"{dist_info}/entry_points.txt").decode()
    for module in ("__init__", "client", "async_client", "store", "langgraph", "pytest_plugin", "sanitize"):
        assert f"offshoot/{module}.py" in names
    for framework in ("openai_agents", "pydantic_evals", "crewai", "llama_index", "google_adk"):
        assert f"offshoot/integrations/{framework}.py" in names
    assert "offshoot/py.typed" in names
    assert not any(n.startswith("tests/") for n in names)
    assert "Name: offshoot-db" in metadata
    assert "Requires-Python: >=3.10" in metadata
    for extra in ("pytest", "openai-agents", "pydantic-evals", "crewai", "llama-index", "google-adk"):
        assert f"Provides-Extra: {extra}" in metadata
    # Every requirement belongs to an extra: the client itself needs nothing beyond the standard library.
    requires = [line for line in metadata.splitlines() if line.startswith("Requires-Dist:")]
    assert requires
    assert all("extra ==" in r for r in requires)
    assert "[pytest11]" in entry_points
    assert "offshoot = offshoot.pytest_plugin" in entry_points
