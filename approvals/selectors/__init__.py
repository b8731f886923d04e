"""Reads. Every query is scoped to one tenant."""
