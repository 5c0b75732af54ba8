"""Test-only games written to polarzoo's game interface (proof that a new game is one folder)."""
