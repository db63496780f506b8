"""Kept importable: the at-rest link now lives in `offshoot.at_rest_link`, shared by every adapter."""

from offshoot.at_rest_link import AtRestLink

__all__ = ["AtRestLink"]
