"""CrewAI on offshoot: one fork of the application database per `kickoff`.

A crew's tools write the fork (`fork.path`), and so does the crew's own SQLite store, the kickoff task outputs that
`crewai replay` reads: `attach` points it at the fork, so a kickoff's outputs branch, roll back and promote with the
rows its tools wrote. Each finished task is a checkpoint (`task-<n>`); `reset` is a rollback to `start`, the fork's
first state. CrewAI's memory (LanceDB or Qdrant files, not SQLite) stays where CrewAI keeps it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from crewai import Crew, CrewOutput
from crewai.memory.storage.kickoff_task_outputs_storage import KickoffTaskOutputsSQLiteStorage
from crewai.tasks.task_output import TaskOutput

from ..errors import OffshootError
from ._fork_per_run import Fork, ForkPer, Verdict

__all__ = ["ForkPerKickoff", "KickoffFork", "KickoffRun", "Verdict"]


@dataclass
class KickoffFork(Fork):
    """The fork one kickoff works in: build the crew's tools on `path`. `checkpoints` names the states recorded,
    oldest first: `start`, then `task-<n>` when task n's callback runs, holding every row the tools of tasks 1..n
    wrote (CrewAI records task n's own output row just after its callback, so that row is in the next state)."""

    def checkpoint(self, name: str, meta: Mapping[str, str] | None = None) -> int:
        """Makes the fork's writes so far durable as the checkpoint `name` (listed in `checkpoints`)."""
        txid = self.link.flush(name, meta)
        self.checkpoints.append(name)
        return txid

    def reset(self) -> None:
        """CrewAI's `reset`, as a rollback: the fork's database (task outputs included) as it was forked."""
        self.rollback("start")

    def attach(self, crew: Crew) -> Crew:
        """Points the crew's kickoff task outputs (its SQLite store, what `crewai replay` reads) at the fork, and
        checkpoints the fork after each task (chaining a task's own callback). Returns the crew."""
        crew._task_output_handler.storage = KickoffTaskOutputsSQLiteStorage(db_path=self.path)
        for task in crew.tasks:
            task.callback = self._after_task(task.callback)
        return crew

    def _after_task(self, inner: Callable[[TaskOutput], Any] | None) -> Callable[[TaskOutput], Any]:
        def done(output: TaskOutput) -> Any:
            # An ephemeral kickoff records no checkpoint of its own: a named one would keep the fork in the store.
            if not self.ephemeral:
                self.checkpoint(self._next("task"), {"task": (output.name or output.description)[:200]})
            return inner(output) if inner is not None else None

        return done


@dataclass
class KickoffRun:
    """What `ForkPerKickoff.kickoff` did: the crew's output, the fork, the verdict and, if promoted, the txid; a
    promote verdict that was refused (`base_moved`, or another promote held the base) says why in `promote_error`,
    its fork kept."""

    output: CrewOutput
    fork: KickoffFork
    verdict: Verdict
    promoted_txid: int | None = None
    promote_error: OffshootError | None = None
    """Why the promote verdict was not carried out (`BASE_MOVED`, `LEASE_HELD`): the fork is kept, nothing retried."""

    @property
    def base_moved(self) -> bool:
        """True when the promote was refused because the base moved since the fork (`BASE_MOVED`)."""
        return self.promote_error is not None and self.promote_error.code == "BASE_MOVED"


class ForkPerKickoff(ForkPer[KickoffFork]):
    """Runs each kickoff in a new fork of the application database `db` (from `base`, expiring after `ttl` unless
    promoted), then asks `verdict(output, fork)` what to keep. A kickoff that raises keeps its fork for inspection
    and re-raises. Promoting onto a protected base (`main`) needs `force=True`."""

    surface = "sdk:crewai/crewai"
    """What the branch log says this adapter's calls come through."""

    fork_type = KickoffFork
    default_prefix = "kickoff-"

    def fork(self) -> KickoffFork:
        """A new fork of the base, checkpointed as `start`: for a kickoff you drive yourself."""
        return self._begin()

    def kickoff(
        self,
        build: Callable[[KickoffFork], Crew],
        *,
        verdict: Callable[[CrewOutput, KickoffFork], Verdict],
        inputs: dict[str, Any] | None = None,
    ) -> KickoffRun:
        """`build(fork)` makes the crew (its tools on `fork.path`), `attach`ed to the fork, then `crew.kickoff(inputs)`
        runs in it and the verdict decides the fork's fate."""
        fork = self.fork()
        try:
            output = fork.attach(build(fork)).kickoff(inputs=inputs)
            if not isinstance(output, CrewOutput):
                raise OffshootError(
                    "ForkPerKickoff: the crew streams its output; the verdict needs the finished CrewOutput",
                    "UNSUPPORTED",
                    "build the crew with stream=False",
                )
            chosen = verdict(output, fork)
        except BaseException:
            fork.close_kept()
            raise
        txid = self.settle(fork, chosen)
        return KickoffRun(output, fork, chosen, txid, fork.promote_error)

    def settle(self, fork: KickoffFork, chosen: Verdict) -> int | None:
        """Carries out a verdict on a fork: promote (then destroy), keep, or discard. Returns the promote's txid, or
        None when a promote was refused (the base moved since the fork, or another promote held it: the fork is kept
        and `fork.promote_error` says why)."""
        return self._settle(fork, chosen)
