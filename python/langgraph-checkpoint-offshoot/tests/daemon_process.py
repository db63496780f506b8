"""A real `offshoot serve` process on a temp store, for the saver tests."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]


def offshoot_bin() -> str:
    """The `offshoot` CLI: $OFFSHOOT_BIN, else this repository's launcher, else the one on PATH."""
    configured = os.environ.get("OFFSHOOT_BIN")
    if configured:
        return configured
    local = REPO / "offshoot"
    if (REPO / "packages/offshoot/dist/cli/main.js").is_file():
        return str(local)
    found = shutil.which("offshoot")
    if found is None:
        raise RuntimeError("no offshoot binary: run 'make build' at the repository root, or set OFFSHOOT_BIN")
    return found


def run_cli(store: str, *args: str) -> str:
    """Runs one CLI command on `store`; returns its stdout, raising with its stderr on failure."""
    done = subprocess.run([offshoot_bin(), "-store", store, *args], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"offshoot {' '.join(args)} exited {done.returncode}: {done.stderr.strip()}")
    return done.stdout


def init_store(root: str, name: str = "store") -> str:
    """Initializes a store under `root` and returns its path."""
    store = os.path.join(root, name)
    run_cli(store, "init")
    return store


@dataclass
class Daemon:
    """One daemon process: its store, socket and process."""

    store: str
    socket: str
    proc: subprocess.Popen[str]
    stderr_path: str

    def stderr_tail(self, n: int = 20) -> str:
        """The last `n` lines the daemon wrote on stderr."""
        with open(self.stderr_path, encoding="utf-8", errors="replace") as f:
            return "".join(f.readlines()[-n:])

    def kill9(self) -> None:
        """SIGKILL: no shutdown, no final flush, no cleanup."""
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=10)

    def stop(self) -> None:
        """SIGTERM (a graceful shutdown), then SIGKILL if it has not gone within 30 s. Idempotent."""
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.kill9()
        if self.proc.stdout is not None:
            self.proc.stdout.close()


def start_daemon(store: str, socket: str, *, cwd: str | None = None, env: dict[str, str] | None = None) -> Daemon:
    """Starts `offshoot serve` (no background flush, so durability is exactly what the test flushes) and returns
    once it reports that it is listening."""
    extra = env or {}
    fd, stderr_path = tempfile.mkstemp(
        prefix="daemon-", suffix=".log", dir=cwd or os.path.dirname(os.path.abspath(store))
    )
    with os.fdopen(fd, "w") as err:
        proc = subprocess.Popen(
            [offshoot_bin(), "-store", store, "serve", "-socket", socket, "-flush-every", "0", "-reap-every", "0"],
            cwd=cwd,
            env={**os.environ, **extra},
            stdout=subprocess.PIPE,
            stderr=err,
            text=True,
        )
    d = Daemon(store, socket, proc, stderr_path)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if not line.startswith("offshoot serving on"):
        d.stop()
        raise RuntimeError(f"the daemon did not start: {line!r}\n{d.stderr_tail()}")
    return d


@contextlib.contextmanager
def running_daemon(root: str) -> Iterator[Daemon]:
    """A fresh store and a daemon on it, under `root`, stopped on exit."""
    store = init_store(root)
    d = start_daemon(store, os.path.join(root, "d.sock"))
    try:
        yield d
    finally:
        d.stop()
