"""Stable keys handed to the outside world."""

from __future__ import annotations


def activity_key(workflow_id: str, step: str, undo: bool) -> str:
    """The idempotency key of a step (or its undo) of a workflow: the same on every
    attempt, so the systems an activity calls can drop repeats."""
    return f"{workflow_id}/undo:{step}" if undo else f"{workflow_id}/{step}"
