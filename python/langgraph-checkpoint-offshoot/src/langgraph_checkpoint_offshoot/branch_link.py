"""Kept importable: the link protocol now lives in `offshoot.branch_link`, shared by every adapter."""

from offshoot.branch_link import BranchLink

__all__ = ["BranchLink"]
