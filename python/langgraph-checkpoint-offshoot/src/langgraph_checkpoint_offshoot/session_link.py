"""Kept importable: the daemon-session link now lives in `offshoot.session_link`, shared by every adapter."""

from offshoot.session_link import SessionLink

__all__ = ["SessionLink"]
