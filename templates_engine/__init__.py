"""The workflow engine: pure Python, no Django, no database, no clock, no network.

``decide(definition, state, command, ctx) -> list[Event]`` says what happens now,
``evolve(state, event) -> State`` how an event changes state, and
``replay(definition, events) -> State`` folds a history, and
``eligibility(definition, state, user)`` says whether segregation of duties lets a
person hold or decide the current step. ``templates_engine.testing`` runs definitions in
memory with a fake clock.
"""

from . import commands, events
from .context import Context, Delegation, Directory, StaticDirectory
from .decider import attempt_history, decide, replay
from .definition import Definition
from .errors import CommandRejected, DefinitionError
from .retry import HEARTBEAT_TIMEOUT, TIMEOUT, RetryPolicy
from .segregation import eligibility
from .start_policy import StartPolicy
from .state import (
    CANCELLED,
    COMPENSATING,
    COMPENSATION_FAILED,
    COMPLETED,
    NEW,
    REJECTED,
    ROLLED_BACK,
    RUNNING,
    SUBMITTER_STEP,
    TERMINAL,
    State,
    evolve,
    public_status,
)

__all__ = [
    "CANCELLED",
    "COMPENSATING",
    "COMPENSATION_FAILED",
    "COMPLETED",
    "NEW",
    "REJECTED",
    "ROLLED_BACK",
    "RUNNING",
    "SUBMITTER_STEP",
    "HEARTBEAT_TIMEOUT",
    "TERMINAL",
    "TIMEOUT",
    "CommandRejected",
    "Context",
    "Definition",
    "DefinitionError",
    "Delegation",
    "Directory",
    "RetryPolicy",
    "State",
    "StartPolicy",
    "StaticDirectory",
    "attempt_history",
    "commands",
    "decide",
    "eligibility",
    "events",
    "evolve",
    "public_status",
    "replay",
]
