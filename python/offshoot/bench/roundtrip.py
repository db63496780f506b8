"""The round-trip cost of client ops on a fresh local daemon, blocking and asyncio, plus an at-rest Store verb.

    .venv-py/bin/python python/offshoot/bench/roundtrip.py [N]      # N round trips per measure (default 500)

The daemon binary comes from OFFSHOOT_BIN, else PATH (`./offshoot` in a clone). Prints the median and the 95th
percentile of each measure in microseconds.
"""

from __future__ import annotations

import asyncio
import socket
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import offshoot
from offshoot.binary import require_binary
from offshoot.daemon import start_daemon


def summarize(name: str, samples: list[float]) -> None:
    """Prints one measure's median and 95th percentile."""
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))]
    print(f"{name:52} median {statistics.median(ordered) * 1e6:9.0f} µs   p95 {p95 * 1e6:9.0f} µs   n={len(ordered)}")


def timed(n: int, op: Callable[[], object]) -> list[float]:
    """`n` timings of `op` after a short warm-up."""
    for _ in range(min(20, n)):
        op()
    out = []
    for _ in range(n):
        t = time.perf_counter()
        op()
        out.append(time.perf_counter() - t)
    return out


async def timed_async(n: int, op: Callable[[], Awaitable[object]]) -> list[float]:
    """`n` timings of the awaited `op` after a short warm-up."""
    for _ in range(min(20, n)):
        await op()
    out = []
    for _ in range(n):
        t = time.perf_counter()
        await op()
        out.append(time.perf_counter() - t)
    return out


def raw_roundtrip(sock_path: str, n: int) -> list[float]:
    """The same `dbs` request over a bare socket: the floor the client's own overhead sits on."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(sock_path)
    reader = s.makefile("rb")

    def op() -> None:
        s.sendall(b'{"op":"dbs"}\n')
        reader.readline()

    try:
        return timed(n, op)
    finally:
        reader.close()
        s.close()


def main() -> None:
    """Runs every measure on a daemon of its own."""
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 500
    with tempfile.TemporaryDirectory(prefix="offshoot-bench-") as tmp:
        daemon = start_daemon(require_binary(), Path(tmp), args=("-flush-every", "0", "-reap-every", "0"))
        try:
            with offshoot.connect(daemon.sock) as c:
                c.create("bench")
                for i in range(5):
                    c.fork("bench", "main", f"b{i}")
                summarize("Client.dbs()", timed(n, c.dbs))
                summarize("raw socket: dbs", raw_roundtrip(daemon.sock, n))
                summarize("Client.branches() (6 branches)", timed(n, lambda: c.branches("bench")))
                summarize("Client.status()", timed(n, c.status))

                def connect_once() -> None:
                    with offshoot.connect(daemon.sock) as fresh:
                        fresh.dbs()

                summarize("connect() + dbs() + close()", timed(max(10, n // 5), connect_once))
                counter = iter(range(10**9))

                def fork_destroy() -> None:
                    name = f"f{next(counter)}"
                    c.fork("bench", "main", name)
                    c.destroy("bench", name)

                summarize("Client.fork() + destroy()", timed(max(10, n // 10), fork_destroy))
                with c.open("bench", "b0") as s:
                    summarize("Session.flush(), nothing written", timed(max(10, n // 10), s.flush))

            async def run_async() -> None:
                async with await offshoot.connect_async(daemon.sock) as ac:
                    summarize("AsyncClient.dbs()", await timed_async(n, ac.dbs))
                    summarize("AsyncClient.branches() (6 branches)", await timed_async(n, lambda: ac.branches("bench")))

            asyncio.run(run_async())
        finally:
            daemon.stop()
        store = offshoot.Store(daemon.store)
        summarize("Store.branches() (one CLI process)", timed(5, lambda: store.branches("bench")))


if __name__ == "__main__":
    main()
