"""Step kinds, one per module. Adding a kind is adding a module and a line here."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from . import action, approval, signal, wait
from .action import ActionStep, Activity
from .approval import ApprovalStep, ApproverRule
from .base import Step
from .signal import SignalStep
from .wait import WaitStep

PARSERS: dict[str, Callable[[Mapping[str, Any], str], Step]] = {
    "approval": approval.parse,
    "action": action.parse,
    "wait": wait.parse,
    "signal": signal.parse,
}

__all__ = [
    "PARSERS",
    "ActionStep",
    "Activity",
    "ApprovalStep",
    "ApproverRule",
    "SignalStep",
    "Step",
    "WaitStep",
]
