"""The TTL argument of fork and touch, and how it is written on the wire."""

from __future__ import annotations

from datetime import timedelta

TTL = str | timedelta | int | None
"""A TTL argument: None keeps or omits it; `timedelta(0)`, `0` or `"none"` clears it; a `timedelta` sets whole
seconds; a string is a Go duration such as `"30m"` or `"1h"`. Any other int raises TypeError (seconds or a bare
number? ambiguous), and so does any other type."""


def ttl_arg(ttl: TTL) -> str:
    """The wire form of a TTL argument: `""` (no change), `"none"`, or a Go duration."""
    if ttl is None:
        return ""
    if isinstance(ttl, timedelta):
        return "none" if ttl == timedelta(0) else f"{int(ttl.total_seconds())}s"
    if isinstance(ttl, bool):
        raise TypeError(f"ttl={ttl!r}: pass a timedelta or a Go duration string (e.g. '1h', '3600s')")
    if isinstance(ttl, int):
        if ttl == 0:
            return "none"
        raise TypeError(f"ttl={ttl!r}: a nonzero int is ambiguous; use a timedelta or a Go duration string (e.g. '1h')")
    if isinstance(ttl, str):
        return ttl
    raise TypeError(f"ttl={ttl!r}: pass a timedelta or a Go duration string (e.g. '1h', '3600s')")


def duration_arg(value: str | timedelta | None) -> str:
    """A Go duration for grace-style arguments: a string as is, a timedelta as whole seconds, None as `""`."""
    if value is None:
        return ""
    if isinstance(value, timedelta):
        return f"{int(value.total_seconds())}s"
    return value
