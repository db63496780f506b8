"""The pytest plugin, run for real with pytester (and a real `pytest -n 2`): fixtures, isolation, teardown."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

SEED_SQL = "CREATE TABLE t(x INTEGER);\nINSERT INTO t VALUES (1), (2);\n"

ISOLATION_TESTS = """
import json, os, sqlite3
import pytest

def rows(path):
    c = sqlite3.connect(path)
    try:
        return [r[0] for r in c.execute("SELECT x FROM t ORDER BY rowid")]
    finally:
        c.close()

def record(name, fork, seen):
    out = os.environ["OFFSHOOT_TEST_RECORD"]
    ephemeral = {b.branch: b.ephemeral for b in fork.client.branches(fork.db)}[fork.branch]
    with open(os.path.join(out, name + ".json"), "w") as f:
        json.dump({"worker": os.environ.get("PYTEST_XDIST_WORKER", "local"), "branch": fork.branch,
                   "db": fork.db, "rows": seen, "ephemeral": ephemeral}, f)

def write(fork, value):
    c = sqlite3.connect(fork.path)
    c.execute("INSERT INTO t VALUES (?)", (value,))
    c.commit()
    c.close()

@pytest.mark.parametrize("n", range(6))
def test_writes_stay_in_this_fork(offshoot_fork, n):
    fork = offshoot_fork()
    record(f"ok-{n}", fork, rows(fork.path))
    write(fork, 100 + n)
    assert rows(fork.path) == [1, 2, 100 + n]

@pytest.mark.parametrize("n", range(2))
def test_failing_writes_vanish(offshoot_fork, n):
    fork = offshoot_fork()
    record(f"fail-{n}", fork, rows(fork.path))
    write(fork, 666)
    fork.flush("before-failing")
    assert False, "this test fails on purpose"
"""


@pytest.fixture(autouse=True)
def local_worker(monkeypatch: pytest.MonkeyPatch) -> None:
    # The inner runs name their forks for their own worker, not for this run's.
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)


def seeded_project(pytester: pytest.Pytester, extra_ini: str = "") -> None:
    pytester.makefile(".sql", seed=SEED_SQL)
    pytester.makeini(f"[pytest]\noffshoot_seed = seed.sql\noffshoot_require_binary = true\n{extra_ini}")


def records(d: Path) -> dict[str, dict[str, object]]:
    return {p.stem: json.loads(p.read_text()) for p in d.glob("*.json")}


def test_fork_per_test_isolation_and_failing_tests(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    seeded_project(pytester)
    out = pytester.mkdir("records")
    monkeypatch.setenv("OFFSHOOT_TEST_RECORD", str(out))
    pytester.makepyfile(test_inner_iso=ISOLATION_TESTS)
    result = pytester.runpytest("-p", "no:randomly")
    result.assert_outcomes(passed=6, failed=2)
    result.stdout.no_fnmatch_line("*ERROR at teardown*")
    result.stdout.fnmatch_lines(["*this test fails on purpose*"])
    rec = records(out)
    assert len(rec) == 8
    # Every test, including those after the failing ones, saw exactly the seed.
    assert all(r["rows"] == [1, 2] for r in rec.values())
    branches = {str(r["branch"]) for r in rec.values()}
    assert len(branches) == 8
    assert all(b.startswith("t-local-") and b.endswith("-0") for b in branches)
    assert {r["db"] for r in rec.values()} == {"eval-default"}
    assert all(r["ephemeral"] is True for r in rec.values()), "each test's fork is ephemeral"


def test_seed_once_named_seeds_and_mismatch(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\noffshoot_require_binary = true\n")
    pytester.makepyfile(
        test_inner_seeds="""
import sqlite3
import pytest

CALLS = []

def seed_fn(path):
    CALLS.append(path)
    c = sqlite3.connect(path)
    c.execute("CREATE TABLE u(v TEXT)")
    c.execute("INSERT INTO u VALUES ('fn')")
    c.commit()
    c.close()

def test_callable_seed_runs_once(offshoot_db, offshoot_fork):
    a = offshoot_db("fn", seed=seed_fn)
    b = offshoot_db("fn", seed=seed_fn)
    assert a is b and a.db == "eval-fn" and a.checkpoint == "seed"
    one, two = offshoot_fork(a), offshoot_fork("fn")
    assert one.branch.endswith("-0") and two.branch.endswith("-1")
    for f in (one, two):
        c = sqlite3.connect(f.path)
        assert c.execute("SELECT v FROM u").fetchall() == [("fn",)]
        c.close()
    assert len(CALLS) == 1

def test_sql_seed_with_its_own_transaction(offshoot_db, offshoot_fork, offshoot_dump):
    sql = "PRAGMA foreign_keys=OFF;\\nBEGIN TRANSACTION;\\nCREATE TABLE w(z);\\nINSERT INTO w VALUES (7);\\nCOMMIT;\\n"
    fork = offshoot_fork(offshoot_db("dump", seed=sql))
    assert "INSERT INTO w VALUES(7);" in offshoot_dump(fork.path)

def test_a_different_seed_for_a_seeded_name_is_refused(offshoot_db):
    offshoot_db("fn", seed=seed_fn)
    with pytest.raises(Exception, match="different seed"):
        offshoot_db("fn", seed="CREATE TABLE other(x);")

def test_no_seed_and_no_ini_is_a_clear_error(offshoot_db):
    with pytest.raises(Exception, match="offshoot_seed"):
        offshoot_db("nothing")
"""
    )
    pytester.runpytest().assert_outcomes(passed=4)


def test_teardown_trouble_is_a_warning_even_under_w_error(pytester: pytest.Pytester) -> None:
    seeded_project(pytester)
    pytester.makepyfile(
        test_inner_td="""
def test_cleans_up_behind_the_fixture(offshoot_fork):
    fork = offshoot_fork()
    fork._session.close()
    fork.client.destroy(fork.db, fork.branch, force=True)
"""
    )
    result = pytester.runpytest("-W", "error", "-rw")
    result.assert_outcomes(passed=1, warnings=2)
    result.stdout.fnmatch_lines(["*offshoot_fork teardown: closing*", "*offshoot_fork teardown: destroying*"])


def test_dead_daemon_errors_carry_its_stderr_tail(pytester: pytest.Pytester) -> None:
    seeded_project(pytester)
    pytester.makepyfile(
        test_inner_dead="""
def test_kill_then_fork(offshoot_daemon, offshoot_fork):
    offshoot_fork()
    offshoot_daemon.proc.kill()
    offshoot_daemon.proc.wait()
    offshoot_fork()
"""
    )
    result = pytester.runpytest()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*daemon closed the connection*", "*offshoot daemon stderr*", "*session_opened*"])


def test_missing_binary_skips_or_fails(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OFFSHOOT_BIN")
    monkeypatch.setenv("PATH", str(pytester.path))
    pytester.makepyfile(test_inner_nobin="def test_x(offshoot_fork):\n    offshoot_fork()\n")
    pytester.makeini("[pytest]\n")
    pytester.runpytest().assert_outcomes(skipped=1)
    pytester.makeini("[pytest]\noffshoot_require_binary = true\n")
    result = pytester.runpytest()
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*offshoot executable not found*offshoot_require_binary*"])
    monkeypatch.setenv("OFFSHOOT_BIN", str(pytester.path / "no-such-offshoot"))
    pytester.makeini("[pytest]\n")
    result = pytester.runpytest()
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*OFFSHOOT_BIN=*does not exist*"])


def test_ttl_ini_option_reaches_the_fork(pytester: pytest.Pytester) -> None:
    seeded_project(pytester, "offshoot_ttl = 45m\n")
    pytester.makepyfile(
        test_inner_ttl="""
def test_ttl(offshoot_fork):
    fork = offshoot_fork()
    (b,) = [b for b in fork.client.branches(fork.db) if b.branch == fork.branch]
    assert b.ttl == "45m0s"
"""
    )
    pytester.runpytest().assert_outcomes(passed=1)


def test_two_xdist_workers_get_isolated_forks_of_one_seed(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    seeded_project(pytester)
    out = pytester.mkdir("records")
    monkeypatch.setenv("OFFSHOOT_TEST_RECORD", str(out))
    monkeypatch.setenv("OFFSHOOT_BIN", os.environ["OFFSHOOT_BIN"])
    pytester.makepyfile(test_inner_iso=ISOLATION_TESTS)
    result = pytester.runpytest_subprocess("-n", "2", "-p", "xdist", "--dist", "load")
    result.assert_outcomes(passed=6, failed=2)
    rec = records(out)
    assert len(rec) == 8
    assert {r["worker"] for r in rec.values()} == {"gw0", "gw1"}
    assert all(r["rows"] == [1, 2] for r in rec.values())
    assert all(str(r["branch"]).startswith(f"t-{r['worker']}-") for r in rec.values())


def test_the_docs_pytest_ini_block_sets_the_values_it_shows(pytester: pytest.Pytester) -> None:
    docs = Path(__file__).resolve().parents[3] / "docs" / "python.md"
    block = docs.read_text().split("```ini\n", 1)[1].split("```", 1)[0]
    pytester.makefile(".ini", pytest=block)
    pytester.makepyfile(
        test_inner_ini="""
def test_values(pytestconfig):
    assert pytestconfig.getini("offshoot_seed") == "tests/seed.sql"
    assert pytestconfig.getini("offshoot_ttl") == "1h"
    assert pytestconfig.getini("offshoot_require_binary") is True
"""
    )
    pytester.runpytest().assert_outcomes(passed=1)
