"""``signal``: wait for a named external signal (a webhook), with an optional timeout.
The signal's payload is kept in the workflow data under ``signals.<name>``. A signal
that arrived before the step began (``SignalArrivedEarly``, kept in arrival order) is
taken when it begins: the step completes at once with the oldest one of its name.

``senders`` names who may send the signal: ``{"role": NAME}`` or ``{"user": NAME}``
rules. The engine only keeps them; the app enforces them before the command is sent
(a step with none leaves the app's default: integrations and organisation admins)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .. import events as ev
from ..commands import Command, Signal
from ..durations import parse_duration
from ..errors import DefinitionError
from ..retry import TIMEOUT
from .base import Step, check_fields, common, require_str

if TYPE_CHECKING:
    from ..builder import Builder


@dataclass(frozen=True)
class SignalStep(Step):
    signal: str
    timeout: float | None
    senders: tuple[Mapping[str, str], ...] = ()

    kind = "signal"

    def enter(self, b: Builder) -> None:
        early = b.state.early_signal(self.signal)
        if early is not None:
            # It arrived before the step began: the step takes it at once, as if it
            # came on time, and never waits (so it sets no timeout).
            b.emit(ev.SignalAwaited(self.id, self.signal))
            self._take(b, early, early=True)
            return
        timers = () if self.timeout is None else (b.timer(self.id, "signal_timeout", self.timeout),)
        b.emit(ev.SignalAwaited(self.id, self.signal, timers))

    def on_command(self, b: Builder, command: Command) -> None:
        if not isinstance(command, Signal):
            super().on_command(b, command)
            return
        self._take(b, command.payload, early=False)

    def _take(self, b: Builder, payload: Mapping[str, Any], *, early: bool) -> None:
        b.emit(ev.SignalReceived(self.signal, dict(payload), self.id, early))
        b.emit(ev.StepCompleted(self.id))
        b.advance_after(self.id)

    def on_timer(self, b: Builder, kind: str, key: str) -> None:
        b.fail_step(self.id, TIMEOUT, f"no {self.signal!r} signal in time")


def parse(doc: Mapping[str, Any], path: str) -> SignalStep:
    check_fields(doc, path, {"signal", "timeout", "senders"})
    step_id, when = common(doc, path)
    timeout = doc.get("timeout")
    return SignalStep(
        id=step_id,
        when=when,
        signal=require_str(doc, "signal", path),
        timeout=None if timeout is None else parse_duration(timeout, f"{path}.timeout"),
        senders=_senders(doc.get("senders", []), f"{path}.senders"),
    )


def _senders(doc: object, path: str) -> tuple[Mapping[str, str], ...]:
    if not isinstance(doc, list):
        raise DefinitionError(path, 'must be a list of {"role": NAME} or {"user": NAME}')
    rules: list[Mapping[str, str]] = []
    for i, rule in enumerate(doc):
        if (
            not isinstance(rule, Mapping)
            or len(rule) != 1
            or next(iter(rule)) not in ("role", "user")
            or not isinstance(next(iter(rule.values())), str)
            or not next(iter(rule.values()))
        ):
            raise DefinitionError(f"{path}[{i}]", 'must be {"role": NAME} or {"user": NAME}')
        rules.append(dict(rule))
    return tuple(rules)
