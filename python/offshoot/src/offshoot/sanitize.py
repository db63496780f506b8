"""The deterministic id → name mapping behind ThreadForks branches and the pytest plugin's fork names."""

from __future__ import annotations

import hashlib
import re

UNSAFE_RUN = re.compile(r"[^a-z0-9-]+")
"""A run of characters a sanitized name may not hold; each run becomes one `-`."""

MAX_BODY = 40
HASH_LEN = 8


def sanitize(raw: object) -> str:
    """Maps any id to `body-hash`: `str(raw)` lowercased, each run outside `[a-z0-9-]` replaced by one `-`, `-`
    stripped from both ends, cut to 40 characters and stripped again (`id` if nothing is left), then `-` and the
    first 8 hex digits of the SHA-256 of the original `str(raw)` in UTF-8. The hash keeps ids distinct that
    lowercasing, collapsing or cutting would merge."""
    s = str(raw)
    body = UNSAFE_RUN.sub("-", s.lower()).strip("-") or "id"
    body = body[:MAX_BODY].strip("-") or "id"
    return f"{body}-{hashlib.sha256(s.encode('utf-8')).hexdigest()[:HASH_LEN]}"
