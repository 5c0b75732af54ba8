"""The arena: agents and people from outside polarzoo's process meet its games and agents (the MCP
tool server, :mod:`polarzoo.baselines.arena.mcp`; process agents are
:mod:`polarzoo.baselines.agents.process`)."""
