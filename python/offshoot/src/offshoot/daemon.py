"""Starting and stopping an `offshoot serve` process on a fresh store, for tests and notebooks."""

from __future__ import annotations

import collections
import os
import subprocess
import threading
from pathlib import Path

from .errors import OffshootError

_READY = "offshoot serving on "


class DaemonHandle:
    """A running `offshoot serve` on its own store and socket; `stderr_tail()` shows what it said last."""

    def __init__(self, sock: str, store: Path, proc: subprocess.Popen[bytes]) -> None:
        self.sock = sock
        self.store = store
        self.proc = proc
        self._tail: collections.deque[str] = collections.deque(maxlen=200)
        self._ready = threading.Event()
        self._threads = [
            threading.Thread(target=self._drain_stderr, daemon=True),
            threading.Thread(target=self._watch_stdout, daemon=True),
        ]
        for t in self._threads:
            t.start()

    def _drain_stderr(self) -> None:
        stream = self.proc.stderr
        assert stream is not None
        with stream:
            for raw in iter(stream.readline, b""):
                self._tail.append(raw.decode(errors="replace").rstrip("\n"))

    def _watch_stdout(self) -> None:
        stream = self.proc.stdout
        assert stream is not None
        with stream:
            for raw in iter(stream.readline, b""):
                if raw.decode(errors="replace").startswith(_READY):
                    self._ready.set()
        # End of output: the daemon exited; wake whoever waits for readiness so it sees the exit at once.
        self._ready.set()

    def wait_ready(self, timeout: float) -> None:
        """Waits for the daemon's `serving on` line; OffshootError (with the stderr tail) when it exits or is late."""
        if not self._ready.wait(timeout):
            self.stop()
            raise OffshootError(
                f"offshoot serve did not start listening within {timeout} s\n{self.tail_block()}", "TIMEOUT"
            )
        if self.proc.poll() is not None or not os.path.exists(self.sock):
            self.proc.wait()
            self._join()
            raise OffshootError(
                f"offshoot serve exited with status {self.proc.returncode} before listening\n{self.tail_block()}",
                "UNAVAILABLE",
            )

    def _join(self) -> None:
        for t in self._threads:
            t.join(timeout=5)

    def stderr_tail(self, n: int = 20) -> str:
        """The last `n` lines the daemon wrote to stderr, newest last."""
        return "\n".join(list(self._tail)[-n:])

    def tail_block(self, n: int = 20) -> str:
        """The stderr tail as a labelled block to append to an error message ("" when the daemon said nothing)."""
        tail = self.stderr_tail(n)
        return f"--- offshoot daemon stderr (last {n} lines) ---\n{tail}" if tail else "(the daemon wrote no stderr)"

    def alive(self) -> bool:
        """True while the daemon process runs."""
        return self.proc.poll() is None

    def stop(self, timeout: float = 10.0) -> None:
        """Stops the daemon: SIGTERM (it flushes and closes its sessions), SIGKILL after `timeout`. Idempotent."""
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=timeout)
        self._join()


def start_daemon(binary: str, workdir: Path, timeout: float = 10.0, args: tuple[str, ...] = ()) -> DaemonHandle:
    """Initializes a store under `workdir` and starts `offshoot serve` on it (extra serve flags in `args`),
    returning once it listens on `workdir/d.sock`."""
    store = workdir / "store"
    init = subprocess.run(
        [binary, "-store", str(store), "init"], capture_output=True, text=True, stdin=subprocess.DEVNULL, check=False
    )
    if init.returncode != 0:
        raise OffshootError(f"offshoot -store {store} init failed: {init.stderr.strip()}", "UNAVAILABLE")
    sock = str(workdir / "d.sock")
    proc = subprocess.Popen(
        [binary, "-store", str(store), "serve", "-socket", sock, *args],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    handle = DaemonHandle(sock, store, proc)
    handle.wait_ready(timeout)
    return handle
