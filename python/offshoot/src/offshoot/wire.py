"""The daemon's wire protocol: one JSON object per line each way, strictly request then response."""

from __future__ import annotations

import json
from typing import Any

from .errors import BAD_RESPONSE, OffshootError
from .results import JsonObject

MAX_RESPONSE_BYTES = 64 << 20
"""The longest response line accepted (a `branches` listing of a very large database still fits)."""


def encode_request(op: str, fields: dict[str, Any]) -> bytes:
    """One request line; fields that are None, "", False or an empty dict are left out, as the daemon expects."""
    req: JsonObject = {"op": op}
    for k, v in fields.items():
        if v is None or v is False or v == "" or (isinstance(v, dict) and not v):
            continue
        req[k] = v
    return json.dumps(req, separators=(",", ":")).encode() + b"\n"


def bad_response(what: str, line: bytes | str) -> OffshootError:
    """A BAD_RESPONSE error: the daemon's answer is not the protocol."""
    text = line.decode(errors="replace") if isinstance(line, bytes) else line
    shown = text if len(text) <= 200 else text[:200] + "…"
    return OffshootError(
        f"malformed response from daemon: {what}: {shown}",
        BAD_RESPONSE,
        "check that the socket belongs to an offshoot daemon of a matching version",
    )


def parse_object(line: bytes) -> JsonObject:
    """Parses one line as a JSON object."""
    try:
        value = json.loads(line)
    except ValueError:
        raise bad_response("not JSON", line) from None
    if not isinstance(value, dict):
        raise bad_response("not a JSON object", line)
    return value


def error_from(res: JsonObject) -> OffshootError:
    """The daemon's error response rebuilt as an OffshootError with its code and hint."""
    message = res.get("error")
    text = message.removeprefix("daemon: ") if isinstance(message, str) else "request failed"
    code = res.get("code")
    hint = res.get("hint")
    return OffshootError(
        text,
        code if isinstance(code, str) else "INTERNAL",
        hint if isinstance(hint, str) else None,
        res.get("retryable") is True,
    )


def decode_response(line: bytes) -> JsonObject:
    """Parses a response line: returns it when ok, raises the daemon's error otherwise."""
    res = parse_object(line)
    ok = res.get("ok")
    if not isinstance(ok, bool):
        raise bad_response('no "ok" field', line)
    if not ok:
        raise error_from(res)
    return res
