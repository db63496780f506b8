"""Fixtures of the saver suite: real daemons on real temp stores, and fresh database names."""

from __future__ import annotations

import itertools
import os
import shutil
import tempfile
from collections.abc import Iterator

import pytest
from daemon_process import Daemon, init_store, offshoot_bin, running_daemon

_names = itertools.count()


def pytest_configure(config: pytest.Config) -> None:
    # offshoot.Store (the at-rest mode) finds the CLI through OFFSHOOT_BIN.
    os.environ["OFFSHOOT_BIN"] = offshoot_bin()


@pytest.fixture
def workdir() -> Iterator[str]:
    """A short-named temp directory (a unix socket path must stay under 108 bytes), removed afterwards."""
    d = tempfile.mkdtemp(prefix="lgo-")
    yield d
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture(scope="session")
def daemon() -> Iterator[Daemon]:
    """One daemon for the whole suite; each test uses databases of its own (`db_name`)."""
    root = tempfile.mkdtemp(prefix="lgo-")
    try:
        with running_daemon(root) as d:
            yield d
    finally:
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def store(workdir: str) -> str:
    """A fresh at-rest store."""
    return init_store(workdir)


@pytest.fixture
def db_name() -> str:
    """A database name no other test uses."""
    return f"db{next(_names)}"
