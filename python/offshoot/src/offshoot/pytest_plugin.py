"""pytest fixtures for fork-per-test databases on offshoot."""
