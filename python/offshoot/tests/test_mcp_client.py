"""`offshoot mcp` driven by the official Python MCP client (`mcp` on PyPI), over stdio and Streamable HTTP.

A second, independent client beside the TypeScript SDK's, in the 2025 era (the `initialize` handshake): the tools'
hints, output schemas and structured results, a refusal with its code, a forced promote the human accepts or declines
through a form elicitation (and a client without the capability), branches as resources with a subscription, and the
same calls over HTTP with a token.
"""

from __future__ import annotations

import os
import re
import sqlite3
import subprocess
import tempfile
from collections.abc import Awaitable, Callable, Iterator
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp_types as types
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.context import ClientRequestContext
from mcp.client.session import ElicitationFnT
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

BIN = os.environ["OFFSHOOT_BIN"]
TOKEN = "python-mcp-client-token-0123456789"


def cli(store: Path, *args: str) -> str:
    """Runs the offshoot CLI on `store`, failing the test on a non-zero exit."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("OFFSHOOT_")}
    r = subprocess.run([BIN, "-store", str(store), *args], env=env, capture_output=True, text=True, check=False)
    assert r.returncode == 0, f"offshoot {' '.join(args)}: {r.stderr}"
    return r.stdout


@pytest.fixture
def store() -> Iterator[Path]:
    """A store with database `app` (table t, three rows) and an unprotected fork `attempt`."""
    with tempfile.TemporaryDirectory(prefix="offshoot-pymcp-") as d:
        root = Path(d)
        seed = root / "seed.db"
        conn = sqlite3.connect(seed)
        conn.executescript("CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT); INSERT INTO t(v) VALUES ('a'),('b'),('c');")
        conn.close()
        s = root / "s"
        cli(s, "init")
        cli(s, "create", "app", "--from", str(seed))
        cli(s, "fork", "app", "attempt")
        yield s


def text_of(r: types.CallToolResult) -> str:
    return "\n".join(c.text for c in r.content if isinstance(c, types.TextContent))


def answering(action: str, confirm: bool, asked: list[str]) -> ElicitationFnT:
    """An elicitation callback that records each question and answers `action` (with `confirm` on an accept)."""

    async def cb(
        context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult | types.ErrorData:
        asked.append(params.message)
        content: dict[str, str | int | float | bool | list[str] | None] | None = (
            {"confirm": confirm} if action == "accept" else None
        )
        return types.ElicitResult(action=action, content=content)  # type: ignore[arg-type]

    return cb


async def stdio_session(
    stack: AsyncExitStack, store: Path, *flags: str, elicit: ElicitationFnT | None = None
) -> ClientSession:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OFFSHOOT_")}
    params = StdioServerParameters(command=BIN, args=["-store", str(store), "mcp", "-reap-every", "0", *flags], env=env)
    read, write = await stack.enter_async_context(stdio_client(params))
    session = await stack.enter_async_context(ClientSession(read, write, elicitation_callback=elicit))
    await session.initialize()
    return session


def run(fn: Callable[[], Awaitable[None]]) -> None:
    anyio.run(fn)


def test_tools_hints_schemas_and_structured_results(store: Path) -> None:
    async def main() -> None:
        async with AsyncExitStack() as stack:
            s = await stdio_session(stack, store)
            assert s.protocol_version == "2025-11-25"
            tools = {t.name: t for t in (await s.list_tools()).tools}
            assert len(tools) == 11
            promote = tools["offshoot_promote"]
            assert promote.annotations is not None
            assert promote.annotations.destructive_hint is True
            assert promote.annotations.read_only_hint is False
            assert promote.output_schema is not None
            assert tools["offshoot_list"].annotations is not None
            assert tools["offshoot_list"].annotations.read_only_hint is True
            r = await s.call_tool("offshoot_fork", {"database": "app", "new_branch": "py", "ttl": "2h"})
            assert r.is_error is False
            assert r.structured_content is not None
            assert r.structured_content["ttl"] == "2h0m0s"
            links = [c.uri for c in r.content if isinstance(c, types.ResourceLink)]
            assert "offshoot://app/py" in links
            refused = await s.call_tool("offshoot_promote", {"database": "app", "source": "py", "target": "main"})
            assert refused.is_error is True
            assert refused.meta is not None
            assert refused.meta["offshoot/error"]["code"] == "PROTECTED"

    run(main)


def test_confirm_force_accept_decline_and_no_capability(store: Path) -> None:
    args = {"database": "app", "source": "attempt", "target": "main", "force": True}

    async def main() -> None:
        before = cli(store, "status", "app", "--json")
        async with AsyncExitStack() as stack:
            plain = await stdio_session(stack, store, "-confirm-force")
            r = await plain.call_tool("offshoot_promote", args)
            assert r.is_error is True
            assert "needs -allow-force" in text_of(r)
        asked: list[str] = []
        async with AsyncExitStack() as stack:
            no = await stdio_session(stack, store, "-confirm-force", elicit=answering("decline", False, asked))
            r = await no.call_tool("offshoot_promote", args)
            assert r.is_error is True
            assert "not confirmed: the human declined" in text_of(r)
        assert len(asked) == 1
        assert cli(store, "status", "app", "--json") == before
        async with AsyncExitStack() as stack:
            yes = await stdio_session(stack, store, "-confirm-force", elicit=answering("accept", True, asked))
            r = await yes.call_tool("offshoot_promote", args)
            assert r.is_error is False, text_of(r)
            assert r.meta is not None
            assert r.meta["offshoot/confirmed-by-human"] is True
        assert len(asked) == 2
        assert re.search(r"onto protected app@main \(head txid \d+\)", asked[1])
        assert "app@main-pre-promote" in asked[1]

    run(main)


def test_resources_read_and_subscribe(store: Path) -> None:
    async def main() -> None:
        updated: list[str] = []
        got = anyio.Event()

        async def on_message(message: Any) -> None:
            if isinstance(message, types.ResourceUpdatedNotification):
                updated.append(str(message.params.uri))
                got.set()

        async with AsyncExitStack() as stack:
            env = {k: v for k, v in os.environ.items() if not k.startswith("OFFSHOOT_")}
            params = StdioServerParameters(command=BIN, args=["-store", str(store), "mcp", "-reap-every", "0"], env=env)
            read, write = await stack.enter_async_context(stdio_client(params))
            s = await stack.enter_async_context(ClientSession(read, write, message_handler=on_message))
            await s.initialize()
            uris = [str(r.uri) for r in (await s.list_resources()).resources]
            assert "offshoot://app/attempt" in uris
            res = await s.read_resource("offshoot://app/main/schema")
            first = res.contents[0]
            assert isinstance(first, types.TextResourceContents)
            assert first.text.startswith("CREATE TABLE t(")
            await s.subscribe_resource("offshoot://app/attempt")
            cli(store, "touch", "app@attempt", "--ttl", "3h")
            with anyio.fail_after(60):
                await got.wait()
            assert updated == ["offshoot://app/attempt"]

    run(main)


def test_streamable_http_with_a_token(store: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OFFSHOOT_")}
    env["OFFSHOOT_TOKEN"] = TOKEN
    proc = subprocess.Popen(
        [BIN, "-store", str(store), "mcp", "-http", "127.0.0.1:0", "-reap-every", "0", "-confirm-force"],
        env=env,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stderr is not None
        url = ""
        for line in proc.stderr:
            m = re.search(r"serving MCP on (http://\S+)", line)
            if m:
                url = m.group(1)
                break
        assert url

        async def main() -> None:
            asked: list[str] = []
            async with AsyncExitStack() as stack:
                http = await stack.enter_async_context(
                    httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}, timeout=60)
                )
                read, write = await stack.enter_async_context(streamable_http_client(url, http_client=http))
                s = await stack.enter_async_context(
                    ClientSession(read, write, elicitation_callback=answering("accept", True, asked))
                )
                await s.initialize()
                assert s.protocol_version == "2025-11-25"
                r = await s.call_tool("offshoot_list", {"database": "app"})
                assert r.structured_content is not None
                assert {b["branch"] for b in r.structured_content["branches"]} == {"main", "attempt"}
                p = await s.call_tool(
                    "offshoot_promote", {"database": "app", "source": "attempt", "target": "main", "force": True}
                )
                assert p.is_error is False, text_of(p)
            assert len(asked) == 1

        run(main)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
