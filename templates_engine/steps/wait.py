"""``wait``: a durable timer; the workflow sleeps for a duration, then moves on."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .. import events as ev
from ..durations import parse_duration
from ..errors import DefinitionError
from .base import Step, check_fields, common

if TYPE_CHECKING:
    from ..builder import Builder


@dataclass(frozen=True)
class WaitStep(Step):
    duration: float

    kind = "wait"

    def enter(self, b: Builder) -> None:
        b.emit(ev.WaitStarted(self.id, (b.timer(self.id, "wait", self.duration),)))

    def on_timer(self, b: Builder, kind: str, key: str) -> None:
        b.emit(ev.StepCompleted(self.id))
        b.advance_after(self.id)


def parse(doc: Mapping[str, Any], path: str) -> WaitStep:
    check_fields(doc, path, {"duration"})
    step_id, when = common(doc, path)
    if "duration" not in doc:
        raise DefinitionError(f"{path}.duration", "is required")
    return WaitStep(
        id=step_id, when=when, duration=parse_duration(doc["duration"], f"{path}.duration")
    )
