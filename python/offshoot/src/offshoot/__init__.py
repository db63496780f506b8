"""offshoot: branchable SQLite for AI agents and eval harnesses."""
