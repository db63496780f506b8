"""The names, arguments and defaults code written against the earlier `langgraph-checkpoint-offshoot` relies on."""

from __future__ import annotations

import inspect
from typing import Any

import pytest

import langgraph_checkpoint_offshoot
from langgraph_checkpoint_offshoot import AsyncOffshootSaver, OffshootSaver

P = inspect.Parameter
EMPTY = P.empty

# name -> [(parameter, kind, default)], `self`/`cls` left out.
VERBS: dict[str, list[tuple[str, Any, Any]]] = {
    "session": [
        ("socket_path", P.POSITIONAL_OR_KEYWORD, EMPTY),
        ("db", P.POSITIONAL_OR_KEYWORD, EMPTY),
        ("branch", P.POSITIONAL_OR_KEYWORD, "main"),
        ("create", P.KEYWORD_ONLY, True),
        ("serde", P.KEYWORD_ONLY, None),
    ],
    "at_rest": [
        ("store", P.POSITIONAL_OR_KEYWORD, EMPTY),
        ("db", P.POSITIONAL_OR_KEYWORD, EMPTY),
        ("branch", P.POSITIONAL_OR_KEYWORD, "main"),
        ("create", P.KEYWORD_ONLY, True),
        ("serde", P.KEYWORD_ONLY, None),
    ],
    "checkpoint": [("name", P.POSITIONAL_OR_KEYWORD, ""), ("meta", P.POSITIONAL_OR_KEYWORD, None)],
    "fork_thread": [
        ("new_branch", P.POSITIONAL_OR_KEYWORD, EMPTY),
        ("ttl", P.KEYWORD_ONLY, None),
        ("from_checkpoint", P.KEYWORD_ONLY, None),
        ("meta", P.KEYWORD_ONLY, None),
    ],
    "rollback": [("to", P.POSITIONAL_OR_KEYWORD, EMPTY)],
    "promote": [("onto", P.POSITIONAL_OR_KEYWORD, EMPTY), ("force", P.POSITIONAL_OR_KEYWORD, False)],
    "merge": [
        ("into", P.POSITIONAL_OR_KEYWORD, EMPTY),
        ("prefer", P.KEYWORD_ONLY, None),
        ("force", P.KEYWORD_ONLY, False),
    ],
    "destroy": [("force", P.POSITIONAL_OR_KEYWORD, False)],
    "close": [],
}


def params(fn: Any) -> list[tuple[str, Any, Any]]:
    return [(p.name, p.kind, p.default) for p in inspect.signature(fn).parameters.values() if p.name != "self"]


@pytest.mark.parametrize("cls", [OffshootSaver, AsyncOffshootSaver])
@pytest.mark.parametrize("verb", sorted(VERBS))
def test_the_verbs_keep_their_arguments(cls: type, verb: str) -> None:
    assert params(getattr(cls, verb)) == VERBS[verb]


def test_the_async_verbs_are_coroutines_and_the_sync_ones_are_not() -> None:
    for verb in ("checkpoint", "fork_thread", "rollback", "promote", "merge", "destroy", "close", "aclose"):
        assert inspect.iscoroutinefunction(getattr(AsyncOffshootSaver, verb)), verb
    for verb in ("checkpoint", "fork_thread", "rollback", "promote", "merge", "destroy", "close"):
        assert not inspect.iscoroutinefunction(getattr(OffshootSaver, verb)), verb


def test_the_module_exports_both_savers() -> None:
    assert langgraph_checkpoint_offshoot.__all__ == ["AsyncOffshootSaver", "OffshootSaver"]
    for cls in (OffshootSaver, AsyncOffshootSaver):
        for prop in ("db", "branch", "path", "closed"):
            assert isinstance(inspect.getattr_static(cls, prop), property), prop
