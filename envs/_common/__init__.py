"""Pieces shared by every environment: the turn-based AEC base class and render helpers."""
