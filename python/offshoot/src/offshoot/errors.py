"""The one exception offshoot raises, carrying the same stable codes as the daemon, the CLI and the TS client."""

from __future__ import annotations

# Codes the client raises itself: the daemon could not be reached, it hung up before answering, it answered
# something that is not the protocol, or (at rest) no `offshoot` binary could be found.
CONNECTION_FAILED = "CONNECTION_FAILED"
CONNECTION_CLOSED = "CONNECTION_CLOSED"
BAD_RESPONSE = "BAD_RESPONSE"
BINARY_NOT_FOUND = "BINARY_NOT_FOUND"


class OffshootError(Exception):
    """A failed offshoot operation: branch on `code` (stable), show `message` and `hint` (the fix) to people.

    Daemon codes: USAGE, INVALID_NAME, INVALID_ARGUMENT, NOT_FOUND, NOT_INITIALIZED, ALREADY_EXISTS, CAS_CONFLICT,
    BASE_MOVED, MERGE_CONFLICT, PROTECTED, LEASE_HELD, LEASE_LOST, FENCED, BUSY, SESSION_OPEN, CHECKSUM_MISMATCH,
    CORRUPT, LAYOUT_TOO_NEW, SCHEMA_TOO_NEW, UNSUPPORTED, TIMEOUT, TOO_LARGE, UNAVAILABLE, IO, INTERNAL; a code from a
    newer daemon is kept verbatim.
    """

    def __init__(self, message: str, code: str = "INTERNAL", hint: str | None = None, retryable: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.hint = hint
        self.retryable = retryable

    def __str__(self) -> str:
        return self.message if self.hint is None else f"{self.message} (hint: {self.hint})"

    def __repr__(self) -> str:
        return f"OffshootError({self.message!r}, code={self.code!r}, hint={self.hint!r})"

    def with_context(self, extra: str) -> OffshootError:
        """A copy of this error with `extra` appended to the message (the code and hint kept)."""
        return OffshootError(f"{self.message}\n{extra}", self.code, self.hint, self.retryable)
