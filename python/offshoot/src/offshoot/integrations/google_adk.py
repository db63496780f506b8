"""Google ADK on offshoot: a rewind that also rolls the application database back.

ADK's `Runner.rewind_async` restores the session's state and artifacts to before an invocation; the rows the agent's
tools wrote to a database stay. `OffshootRewind` is an ADK plugin that checkpoints the application database before
every invocation (`before-<invocation>`), and its `rewind_async` rolls the database back to that checkpoint and then
runs ADK's own rewind, so both sides land before the same invocation.
"""

from __future__ import annotations

import asyncio

from google.adk.agents.invocation_context import InvocationContext
from google.adk.agents.run_config import RunConfig
from google.adk.plugins.base_plugin import BasePlugin
from google.adk.runners import Runner
from google.genai import types

from ..branch_link import BranchLink
from ..sanitize import sanitize
from ._one_branch import OneBranch

__all__ = ["OffshootRewind", "checkpoint_name"]


def checkpoint_name(invocation_id: str) -> str:
    """The checkpoint holding the application database as it was before the invocation `invocation_id`."""
    return "before-" + sanitize(invocation_id)


class OffshootRewind(OneBranch, BasePlugin):
    """An ADK plugin over one branch of the application database: pass it in `Runner(..., plugins=[rewind])`, let
    the tools write to `rewind.path`, and call `rewind.rewind_async(runner, ...)` in place of
    `runner.rewind_async(...)`. Made by `session()` (a daemon captures the writes) or `at_rest()`."""

    surface = "sdk:google-adk/google-adk"
    """What the branch log says this adapter's calls come through."""

    def __init__(self, link: BranchLink, name: str = "offshoot_rewind") -> None:
        """Wraps an open link; use `session()` or `at_rest()` instead."""
        super().__init__(link)
        BasePlugin.__init__(self, name)

    async def before_run_callback(self, *, invocation_context: InvocationContext) -> types.Content | None:
        """Checkpoints the application database as `before-<invocation>` before the invocation runs."""
        name = checkpoint_name(invocation_context.invocation_id)
        meta = {"invocation_id": invocation_context.invocation_id, "session_id": invocation_context.session.id}
        async with self._verbs:
            await asyncio.to_thread(self.link.flush, name, meta)
        return None

    async def rewind_async(
        self,
        runner: Runner,
        *,
        user_id: str,
        session_id: str,
        rewind_before_invocation_id: str,
        run_config: RunConfig | None = None,
    ) -> None:
        """Rolls the application database back to before the invocation (NOT_FOUND, with nothing changed, when it
        never ran with this plugin), then runs ADK's own `rewind_async` on the session. Close your own connections
        to `path` first."""
        async with self._verbs:
            await asyncio.to_thread(self.link.rollback, checkpoint_name(rewind_before_invocation_id))
        await runner.rewind_async(
            user_id=user_id,
            session_id=session_id,
            rewind_before_invocation_id=rewind_before_invocation_id,
            run_config=run_config,
        )

    async def close(self) -> None:
        """ADK calls this when the runner closes: releases the branch."""
        await asyncio.to_thread(self.link.close)
