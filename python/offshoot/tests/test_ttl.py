"""The TTL argument rules, exactly."""

from __future__ import annotations

from datetime import timedelta

import pytest

from offshoot.ttl import TTL, ttl_arg


@pytest.mark.parametrize(
    ("ttl", "wire"),
    [
        (None, ""),
        (timedelta(0), "none"),
        (0, "none"),
        ("none", "none"),
        (timedelta(hours=1), "3600s"),
        (timedelta(seconds=90, milliseconds=700), "90s"),
        ("30m", "30m"),
        ("1h0m0s", "1h0m0s"),
    ],
)
def test_ttl_wire_form(ttl: TTL, wire: str) -> None:
    assert ttl_arg(ttl) == wire


@pytest.mark.parametrize("bad", [1, 3600, -5, True, False, 1.5])
def test_other_ttl_values_raise_type_error(bad: object) -> None:
    with pytest.raises(TypeError):
        ttl_arg(bad)  # type: ignore[arg-type]
