"""Errors the engine raises."""

from __future__ import annotations


class DefinitionError(ValueError):
    """A workflow template definition that does not validate.

    ``path`` is a JSON path into the document (``$.steps[2].retry.max_attempts``).
    """

    def __init__(self, path: str, problem: str) -> None:
        super().__init__(f"{path}: {problem}")
        self.path = path
        self.problem = problem


class CommandRejected(Exception):
    """A command that cannot apply to the workflow as it stands; nothing happened.

    ``code`` is a stable machine-readable name (``NOT_YOUR_STEP``); the message is
    for people.
    """

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


# Codes of CommandRejected, shared with the API layer.
NOT_YOUR_STEP = "NOT_YOUR_STEP"
ALREADY_DECIDED = "ALREADY_DECIDED"
WORKFLOW_FINISHED = "WORKFLOW_FINISHED"
NOT_STARTED = "NOT_STARTED"
ALREADY_STARTED = "ALREADY_STARTED"
INVALID_DATA = "INVALID_DATA"
INVALID_DECISION = "INVALID_DECISION"
UNKNOWN_USER = "UNKNOWN_USER"
ALREADY_TURNING_BACK = "ALREADY_TURNING_BACK"
SEGREGATION_OF_DUTIES = "SEGREGATION_OF_DUTIES"
REASON_REQUIRED = "REASON_REQUIRED"
INVALID_COMMENT = "INVALID_COMMENT"
ALREADY_ASSIGNED = "ALREADY_ASSIGNED"
NO_EXCHANGE_RATE = "NO_EXCHANGE_RATE"
