"""Finding the `offshoot` executable: `$OFFSHOOT_BIN`, else the first `offshoot` on PATH."""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping

from .errors import BINARY_NOT_FOUND, OffshootError

INSTALL_HINT = "set OFFSHOOT_BIN to the offshoot executable, or put `offshoot` on PATH (from a clone: `make build`)"


class BinaryMisconfigured(OffshootError):
    """`OFFSHOOT_BIN` is set but names no usable file: always a failure, never a skip."""

    def __init__(self, message: str) -> None:
        super().__init__(message, "USAGE", "point OFFSHOOT_BIN at the offshoot executable, or unset it")


def locate_binary(env: Mapping[str, str] | None = None) -> str | None:
    """The offshoot executable: `$OFFSHOOT_BIN` (BinaryMisconfigured when it is not an executable file), else the
    first `offshoot` on PATH, else None."""
    env = os.environ if env is None else env
    explicit = env.get("OFFSHOOT_BIN")
    if explicit:
        if not os.path.exists(explicit):
            raise BinaryMisconfigured(f"OFFSHOOT_BIN={explicit!r} does not exist")
        if not os.path.isfile(explicit):
            raise BinaryMisconfigured(f"OFFSHOOT_BIN={explicit!r} is not a file")
        if not os.access(explicit, os.X_OK):
            raise BinaryMisconfigured(f"OFFSHOOT_BIN={explicit!r} is not executable")
        return os.path.abspath(explicit)
    return shutil.which("offshoot", path=env.get("PATH"))


def require_binary(env: Mapping[str, str] | None = None) -> str:
    """Like `locate_binary`, but BINARY_NOT_FOUND when there is none."""
    found = locate_binary(env)
    if found is None:
        raise OffshootError("offshoot executable not found", BINARY_NOT_FOUND, INSTALL_HINT)
    return found
