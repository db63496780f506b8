"""Seeding a database once per name: SQL text, a `.sql` file or a callable, flushed as the checkpoint `seed`."""

from __future__ import annotations

import contextlib
import hashlib
import os
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .client import Client, Session
from .errors import OffshootError

Seed = str | os.PathLike[str] | Callable[[str], object]
"""A seed: SQL text; a path to a `.sql` file (a `Path`, or a one-line string ending in `.sql` naming a file); or a
callable given the writable database path."""

SEED_CHECKPOINT = "seed"


@dataclass
class SeedHandle:
    """A seeded database (`eval-<name>`) and the checkpoint forks start from."""

    db: str
    checkpoint: str = SEED_CHECKPOINT
    name: str = "default"


def _skip_leading_noise(text: str) -> str:
    i, n = 0, len(text)
    while i < n:
        if text[i] in " \t\r\n":
            i += 1
        elif text.startswith("--", i):
            nl = text.find("\n", i)
            i = n if nl < 0 else nl + 1
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            i = n if end < 0 else end + 2
        elif text[i : i + 6].upper() == "PRAGMA":
            semi = text.find(";", i)
            i = n if semi < 0 else semi + 1
        else:
            break
    return text[i:]


def opens_own_transaction(sql: str) -> bool:
    """True when the script, past leading comments and PRAGMAs, starts with BEGIN (as `sqlite3 .dump` output does)."""
    rest = _skip_leading_noise(sql)
    return rest[:5].upper() == "BEGIN" and (len(rest) == 5 or not (rest[5].isalnum() or rest[5] == "_"))


def _as_sql_file(seed: str | os.PathLike[str]) -> Path | None:
    if isinstance(seed, os.PathLike):
        return Path(seed)
    if "\n" not in seed and seed.strip().endswith(".sql") and os.path.isfile(seed.strip()):
        return Path(seed.strip())
    return None


def resolve_seed(seed: Seed) -> str | Callable[[str], object]:
    """The seed as SQL text or a callable (a `.sql` path is read)."""
    if callable(seed):
        return seed
    path = _as_sql_file(seed)
    if path is not None:
        try:
            return path.read_text()
        except OSError as e:
            raise OffshootError(f"seed file {path}: {e.strerror}", "NOT_FOUND", "check the offshoot_seed path") from e
    if isinstance(seed, os.PathLike):
        raise OffshootError(f"seed file {seed} not found", "NOT_FOUND", "check the seed path")
    return seed


def fingerprint(seed: str | Callable[[str], object]) -> str:
    """Identity of a seed: SQL by content hash, a callable by identity."""
    if callable(seed):
        return f"callable:{id(seed)}"
    return f"sql:{hashlib.sha256(seed.encode()).hexdigest()}"


def run_seed(session: Session, seed: str | Callable[[str], object]) -> None:
    """Runs the seed on the session's checkout (SQL in one transaction unless it opens its own), then flushes it
    as the checkpoint `seed`."""
    if callable(seed):
        seed(session.path)
    else:
        sql = seed if opens_own_transaction(seed) else f"BEGIN;\n{seed}\n;\nCOMMIT;\n"
        conn = sqlite3.connect(session.path)
        try:
            conn.executescript(sql)
        except sqlite3.Error as e:
            raise OffshootError(f"seed SQL failed: {e}", "INVALID_ARGUMENT", "fix the seed script") from e
        finally:
            conn.close()
    session.flush(SEED_CHECKPOINT)


class SeedFactory:
    """Seeds `eval-<name>` on first use per name and memoizes it; a different seed for a seeded name is an error."""

    def __init__(self, client: Client, default_seed: Path | None) -> None:
        self.client = client
        self.default_seed = default_seed
        self._seeded: dict[str, tuple[SeedHandle, str]] = {}

    def __call__(self, name: str = "default", seed: Seed | None = None) -> SeedHandle:
        """The SeedHandle of `name`, seeding it with `seed` (else the `offshoot_seed` ini file) the first time."""
        resolved = resolve_seed(seed) if seed is not None else None
        cached = self._seeded.get(name)
        if cached is not None:
            handle, fp = cached
            if resolved is not None and fingerprint(resolved) != fp:
                raise OffshootError(
                    f"offshoot_db(name={name!r}) was already seeded with a different seed",
                    "ALREADY_EXISTS",
                    "pass another name= for another seed, or the same seed (same SQL, same function object)",
                )
            return handle
        if resolved is None:
            if self.default_seed is None:
                raise OffshootError(
                    f"offshoot_db(name={name!r}): no seed given and no offshoot_seed ini option",
                    "INVALID_ARGUMENT",
                    "pass seed=<SQL, .sql path or callable>, or set offshoot_seed = path/to/seed.sql in the ini",
                )
            resolved = resolve_seed(self.default_seed)
        handle = SeedHandle(db=f"eval-{name}", checkpoint=SEED_CHECKPOINT, name=name)
        self.client.create(handle.db)
        session = self.client.open(handle.db, "main")
        try:
            run_seed(session, resolved)
        except BaseException:
            # A half-seeded database must not be mistaken for a seeded one by the next call for this name.
            with contextlib.suppress(OffshootError):
                session.close()
                self.client.destroy(handle.db, "main", force=True)
            raise
        session.close()
        self._seeded[name] = (handle, fingerprint(resolved))
        return handle
