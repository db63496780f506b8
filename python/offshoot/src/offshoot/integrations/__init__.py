"""Adapters of offshoot to agent frameworks and eval harnesses, one module per framework, each an optional extra:
`pip install 'offshoot-db[openai-agents]'` for `offshoot.integrations.openai_agents`, and so on."""
