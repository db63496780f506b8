"""pytest fixtures for fork-per-test databases: seed once per session, fork per test, one daemon per xdist worker.

Installed by `offshoot-db[pytest]` through the `pytest11` entry point. Fixtures: `offshoot_daemon` (session),
`offshoot_db` (session factory `(name="default", seed=None) -> SeedHandle`), `offshoot_fork` (function factory
`(seed_handle=None) -> ForkedSession`) and `offshoot_dump` (also a plain function). Ini options: `offshoot_seed`,
`offshoot_ttl` (default 1h), `offshoot_require_binary` (default false).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tempfile
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

try:
    import pytest
except ImportError as e:  # pragma: no cover - only a direct import without the extra gets here
    raise ImportError('offshoot.pytest_plugin needs pytest: pip install "offshoot-db[pytest]"') from e

from .binary import INSTALL_HINT, BinaryMisconfigured, locate_binary
from .client import Client, Session, connect
from .daemon import DaemonHandle, start_daemon
from .episode import Episode
from .errors import OffshootError
from .sanitize import UNSAFE_RUN, sanitize
from .seeding import Seed, SeedFactory, SeedHandle

__all__ = [
    "BinaryMisconfigured",
    "DaemonHandle",
    "ForkedSession",
    "SeedHandle",
    "branch_name",
    "offshoot_daemon",
    "offshoot_db",
    "offshoot_dump",
    "offshoot_fork",
]

DEFAULT_TTL = "1h"
_MAX_WORKER_LEN = 20


def pytest_addoption(parser: pytest.Parser) -> None:
    """Registers the ini options."""
    parser.addini(
        "offshoot_seed", "SQL file (relative to rootdir) that offshoot_db() seeds with by default", default=""
    )
    parser.addini("offshoot_ttl", "TTL of each test's fork (a Go duration)", default=DEFAULT_TTL)
    parser.addini(
        "offshoot_require_binary",
        "fail instead of skip when no offshoot executable is found",
        type="bool",
        default=False,
    )


def offshoot_dump(path: str | os.PathLike[str]) -> str:
    """The `sqlite3 <path> .dump` text of a database: compare dumps, never file bytes."""
    try:
        proc = subprocess.run(
            ["sqlite3", os.fspath(path), ".dump"], capture_output=True, text=True, stdin=subprocess.DEVNULL, check=False
        )
    except FileNotFoundError as e:
        raise OffshootError(
            "offshoot_dump: the sqlite3 CLI is not on PATH", "NOT_FOUND", "install it: apt-get install sqlite3"
        ) from e
    if proc.returncode != 0:
        raise OffshootError(f"offshoot_dump: sqlite3 {path} .dump failed: {proc.stderr.strip()}", "IO")
    return proc.stdout


@pytest.fixture(name="offshoot_dump")
def _offshoot_dump_fixture() -> Callable[[str | os.PathLike[str]], str]:
    """The `offshoot_dump` function, as a fixture."""
    return offshoot_dump


def _worker() -> str:
    return os.environ.get("PYTEST_XDIST_WORKER", "local")


def branch_name(worker: str, nodeid: str, n: int) -> str:
    """The n-th fork branch of a test: `t-{worker}-{sanitize(nodeid)}-{n}` (worker made name-safe, ≤ 20 chars)."""
    safe_worker = UNSAFE_RUN.sub("-", worker.lower()).strip("-")[:_MAX_WORKER_LEN] or "w"
    return f"t-{safe_worker}-{sanitize(nodeid)}-{n}"


def _with_tail(err: OffshootError, daemon: DaemonHandle) -> OffshootError:
    return err.with_context(daemon.tail_block())


def _warn(message: str) -> None:
    # Always a warning, even under -W error: teardown trouble must never turn into an error that hides the test's
    # own outcome or stops the rest of the cleanup. The branch TTL is the backstop.
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        warnings.warn(message, UserWarning, stacklevel=3)


@pytest.fixture(scope="session")
def offshoot_daemon(request: pytest.FixtureRequest) -> Iterator[DaemonHandle]:
    """An `offshoot serve` on a temp store, one per session (so one per xdist worker)."""
    require = bool(request.config.getini("offshoot_require_binary"))
    try:
        binary = locate_binary()
    except BinaryMisconfigured as e:
        pytest.fail(str(e), pytrace=False)
    if binary is None:
        message = f"offshoot executable not found: {INSTALL_HINT}"
        if require:
            pytest.fail(f"{message} (offshoot_require_binary is set, so this fails instead of skipping)", pytrace=False)
        pytest.skip(message)
    workdir = Path(tempfile.mkdtemp(prefix=f"offshoot-pytest-{_worker()}-"))
    try:
        try:
            handle = start_daemon(binary, workdir)
        except OffshootError as e:
            pytest.fail(str(e), pytrace=False)
        try:
            yield handle
        finally:
            handle.stop()
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def _connect(daemon: DaemonHandle) -> Client:
    try:
        return connect(daemon.sock)
    except OffshootError as e:
        raise _with_tail(e, daemon) from e


class _TailingSeedFactory(SeedFactory):
    def __init__(self, client: Client, default_seed: Path | None, daemon: DaemonHandle) -> None:
        super().__init__(client, default_seed)
        self.daemon = daemon

    def __call__(self, name: str = "default", seed: Seed | None = None) -> SeedHandle:
        try:
            return super().__call__(name, seed)
        except OffshootError as e:
            raise _with_tail(e, self.daemon) from e


@pytest.fixture(scope="session")
def offshoot_db(offshoot_daemon: DaemonHandle, request: pytest.FixtureRequest) -> Iterator[SeedFactory]:
    """Factory `(name="default", seed=None) -> SeedHandle`: seeds `eval-<name>` once per session (per worker)."""
    ini_seed = str(request.config.getini("offshoot_seed") or "")
    default_seed = None
    if ini_seed:
        p = Path(ini_seed)
        default_seed = p if p.is_absolute() else Path(request.config.rootpath) / p
    client = _connect(offshoot_daemon)
    try:
        yield _TailingSeedFactory(client, default_seed, offshoot_daemon)
    finally:
        client.close()


@dataclass
class ForkedSession:
    """A test's own branch forked from a seed, with a live session open on it: write to `path`. It is an episode
    (`Client.episode`): an ephemeral fork the daemon holds and never writes to the store, since the test throws it
    away (a named flush keeps it; teardown destroys it all the same)."""

    path: str
    client: Client
    db: str
    branch: str
    _session: Session = field(repr=False)
    _episode: Episode | None = field(default=None, repr=False)

    def flush(self, name: str = "", meta: dict[str, str] | None = None) -> int:
        """Makes the fork's writes durable (in the daemon), optionally as a named checkpoint, which keeps the fork
        in the store; returns the txid."""
        if self._episode is not None:
            return self._episode.flush(name, meta)
        return self._session.flush(name, meta)


class ForkFactory:
    """Backs `offshoot_fork`: forks and opens on each call, and cleans up every fork at teardown."""

    def __init__(self, daemon: DaemonHandle, seeds: SeedFactory, nodeid: str, ttl: str) -> None:
        self.daemon = daemon
        self.seeds = seeds
        self.nodeid = nodeid
        self.ttl = ttl
        self.created: list[ForkedSession] = []
        self._client: Client | None = None
        self._n = 0

    def __call__(self, seed_handle: SeedHandle | str | None = None) -> ForkedSession:
        """Forks a new branch from the seed (a SeedHandle, a seed name, or the default seed) and opens it."""
        if seed_handle is None:
            seed_handle = self.seeds()
        elif isinstance(seed_handle, str):
            seed_handle = self.seeds(seed_handle)
        branch = branch_name(_worker(), self.nodeid, self._n)
        self._n += 1
        try:
            if self._client is None:
                self._client = connect(self.daemon.sock)
            client = self._client
            ep = client.episode(seed_handle.db, seed_handle.checkpoint, name=branch, ttl=self.ttl)
        except OffshootError as e:
            raise _with_tail(e, self.daemon) from e
        forked = ForkedSession(
            path=ep.path, client=client, db=seed_handle.db, branch=branch, _session=ep._session, _episode=ep
        )
        self.created.append(forked)
        return forked

    def teardown(self) -> None:
        """Ends each fork's episode (which discards it) and force-destroys one a named flush kept or a failed close
        left; any failure is a UserWarning, never an error."""
        for forked in self.created:
            result = None
            try:
                if forked._episode is not None:
                    result = forked._episode.close()
                else:
                    forked._session.close()
            except Exception as e:
                _warn(f"offshoot_fork teardown: closing {forked.db}@{forked.branch} failed: {e}")
            if result is not None and result.kept is None:
                continue
            try:
                forked.client.destroy(forked.db, forked.branch, force=True)
            except Exception as e:
                _warn(
                    f"offshoot_fork teardown: destroying {forked.db}@{forked.branch} failed (its TTL will reap it): "
                    f"{e}\n{self.daemon.tail_block()}"
                )
        self.created.clear()
        if self._client is not None:
            with contextlib.suppress(Exception):
                self._client.close()
            self._client = None


@pytest.fixture
def offshoot_fork(
    offshoot_daemon: DaemonHandle, offshoot_db: SeedFactory, request: pytest.FixtureRequest
) -> Iterator[ForkFactory]:
    """Factory `(seed_handle=None) -> ForkedSession`: this test's own fork of a seed, destroyed after the test."""
    ttl = str(request.config.getini("offshoot_ttl") or DEFAULT_TTL)
    factory = ForkFactory(offshoot_daemon, offshoot_db, request.node.nodeid, ttl)
    try:
        yield factory
    finally:
        factory.teardown()
