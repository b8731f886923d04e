"""Stable keys handed to the outside world."""

from __future__ import annotations


def activity_key(workflow_id: str, step: str, undo: bool, round: int = 1) -> str:
    """The idempotency key of one round of a step (or of its undo) of a workflow: the
    same on every attempt of that round, so the systems an activity calls can drop
    repeats, and different for each round (each entry into the step, as after a send
    back), so they do not drop a new round's call. The first round's key carries no
    round: ``<workflow>/<step>``, then ``<workflow>/<step>/2``; undos likewise
    (``<workflow>/undo:<step>``, ``<workflow>/undo:<step>/2``)."""
    base = f"{workflow_id}/undo:{step}" if undo else f"{workflow_id}/{step}"
    return base if round == 1 else f"{base}/{round}"
