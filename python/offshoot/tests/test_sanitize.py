"""The id → branch-name mapping; the same table is in docs/python.md and the TypeScript twin must match it."""

from __future__ import annotations

import re

import pytest

from offshoot.langgraph import ThreadForks
from offshoot.pytest_plugin import branch_name
from offshoot.sanitize import sanitize

EXAMPLES = [
    ("thread-1", "thread-1-4b0a5fef"),
    ("User 42 / Chat #7", "user-42-chat-7-8ad062f0"),
    ("Order #12 (retry)", "order-12-retry-7d141e0c"),
    ("e5b1c0de-9d1a-4f3e-8c55-0123456789ab", "e5b1c0de-9d1a-4f3e-8c55-0123456789ab-4fd488b4"),
    ("ÄÖÜ", "id-1eccaaf0"),
    ("", "id-e3b0c442"),
    ("--a--b--", "a--b-8a45dde2"),
    ("a" * 39 + "-b" * 5, "a" * 39 + "-f71bd549"),
]


@pytest.mark.parametrize(("raw", "expected"), EXAMPLES)
def test_sanitize_examples(raw: str, expected: str) -> None:
    assert sanitize(raw) == expected


def test_sanitized_names_are_valid_branch_names_and_distinct() -> None:
    ids = ["a b", "a-b", "a_b", "A B", "a.b", "y" * 60 + "1", "y" * 60 + "2", 42, "42"]
    names = [sanitize(i) for i in ids]
    assert all(re.fullmatch(r"[a-z0-9-]{1,49}", n) for n in names)
    assert len(set(names[:7])) == 7
    assert sanitize(42) == sanitize("42")


def test_thread_branch_and_fork_branch_names() -> None:
    forks = ThreadForks.__new__(ThreadForks)
    forks.prefix = "thread-"
    assert forks.branch_for("thread-1") == "thread-thread-1-4b0a5fef"
    assert branch_name("gw0", "tests/test_x.py::test_y[1]", 0) == f"t-gw0-{sanitize('tests/test_x.py::test_y[1]')}-0"
    assert branch_name("GW 1!", "n", 3) == f"t-gw-1-{sanitize('n')}-3"
    assert branch_name("!!!", "n", 0).startswith("t-w-")
