"""Shared test helpers, reference implementations and subprocess scripts."""
