"""``approval``: people decide. Rules name who; the mode says how many must approve."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .. import errors
from .. import events as ev
from ..commands import Command, Decide, Reassign
from ..durations import parse_duration
from ..errors import CommandRejected, DefinitionError
from ..expressions import Condition, ConditionError, DataNotEvaluable
from ..segregation import exclusion, refuse_unless_eligible
from ..state import REJECTED, RUNNING, SUBMITTER_STEP, State
from .base import Step, check_fields, common

if TYPE_CHECKING:
    from ..builder import Builder

# NOT_YOUR_STEP names the step the workflow waits for by its title (Definition.step_title).
NOT_WAITING_FOR = "This request is waiting for the {step} step; it is not yours to decide."
NOT_THEIR_DELEGATE = (
    "This request is waiting for the {step} step; you do not stand in for {principal} on it."
)
NO_APPROVERS = "no one can be assigned to this step"
NO_ELIGIBLE_APPROVERS = (
    "no one can be assigned to this step: segregation of duties ruled out its approvers "
    "and its fallback"
)
NO_RULE_APPLIES = (
    "no one can be assigned to this step: none of its approver rules applies to this request"
)
QUORUM_SHORT = (
    "no one can be assigned to this step: its quorum needs {required} different approvers "
    "and its rules name {found} for this request"
)
QUORUM_OVER_RULES = (
    "asks for {quorum} approvals, but its approvers can never name more than {most} "
    "different people; lower the quorum or add a group"
)
MAX_REMINDERS = 10
TOO_MANY_REMINDERS = (
    f"has more than {MAX_REMINDERS} reminders; each one mails the approvers and writes a"
    " timer on every start"
)
RULE_SHAPE = 'must be one of {"manager": "submitter"}, {"group": NAME}, {"user": NAME}'
RULE_WHEN = ', optionally with "when": a condition on the data'
REASON_REQUIRED = (
    "Give a reason to {decision} (the person it goes back to reads it); nothing was recorded."
)
REASON_REQUIRED_SHAPE = "must be true or false"
# Decisions that turn a request back; they carry the approver's reason unless the step
# says ``"reason_required": false``.
TURNING_BACK = {"reject": "reject", "send_back": "send back"}
# A hand-over (a delegation, a reassignment) may carry a note for its receiver.
HANDOVER_NOTE_MAX = 1000
HANDOVER_NOTE_TOO_LONG = (
    f"A hand-over note holds at most {HANDOVER_NOTE_MAX:,} characters; this one has "
    "{count:,}. Nothing was recorded."
)
ALREADY_APPROVED = "{user} has already approved the {step} step"
NOT_A_MEMBER = "{user} is not an active member of this organisation"
ALREADY_HOLDS = "{user} already holds an open task on the {step} step"
STAND_IN_HOLDS = (
    "{user} already has an open task on the {step} step: {holder} holds it for them "
    "while they are away"
)
ON_REJECT_END = "end"
TO_SUBMITTER = "submitter"


@dataclass(frozen=True)
class ApproverRule:
    """One of: the manager of the submitter (or of the assignee, for escalation), the
    members of a group, or a named user. An entry of a step's ``approvers`` may carry a
    ``when`` condition on the data: the rule names people only when it holds."""

    kind: str  # manager | group | user
    value: str
    when: Condition | None = None

    @classmethod
    def parse(
        cls, doc: object, path: str, *, allow_assignee: bool = False, allow_when: bool = False
    ) -> ApproverRule:
        when = None
        if allow_when and isinstance(doc, Mapping) and "when" in doc:
            when = Condition(doc["when"], f"{path}.when")
            doc = {k: v for k, v in doc.items() if k != "when"}
        if not isinstance(doc, Mapping) or len(doc) != 1:
            raise DefinitionError(path, RULE_SHAPE + (RULE_WHEN if allow_when else ""))
        ((kind, value),) = doc.items()
        if kind not in ("manager", "group", "user") or not isinstance(value, str) or not value:
            raise DefinitionError(path, f"unknown approver rule {kind!r}")
        allowed = ("submitter", "assignee") if allow_assignee else ("submitter",)
        if kind == "manager" and value not in allowed:
            raise DefinitionError(f"{path}.manager", f"must be one of {', '.join(allowed)}")
        return cls(kind, value, when)

    def resolve(self, b: Builder, assignee: str | None = None) -> list[str]:
        directory = b.ctx.directory
        if self.kind == "user":
            return [self.value] if directory.user_exists(self.value) else []
        if self.kind == "group":
            return list(directory.members_of(self.value))
        whose = assignee if self.value == "assignee" else b.state.submitter
        manager = directory.manager_of(whose) if whose else None
        return [manager] if manager else []

    def to_dict(self) -> dict[str, str]:
        doc = {self.kind: self.value}
        if self.when is not None:
            doc["when"] = self.when.source
        return doc


@dataclass(frozen=True)
class ApprovalStep(Step):
    approvers: tuple[ApproverRule, ...]
    mode: str  # any | all | quorum
    quorum: int
    deadline: float | None
    reminders: tuple[float, ...]
    escalate_to: ApproverRule
    escalation: str  # reassign | add
    on_reject: str
    send_back_to: str
    # Who gets the step when segregation of duties rules out all its approvers; empty
    # means the submitter's manager.
    fallback: tuple[ApproverRule, ...] = ()
    # A rejection or a send-back without a comment is refused unless this is False.
    reason_required: bool = True

    kind = "approval"

    def references(self) -> list[tuple[str, str]]:
        return [
            (name, target)
            for name, target in (("on_reject", self.on_reject), ("send_back_to", self.send_back_to))
            if target not in (ON_REJECT_END, TO_SUBMITTER)
        ]

    def conditions(self) -> list[Condition]:
        return super().conditions() + [r.when for r in self.approvers if r.when is not None]

    # -- entering ---------------------------------------------------------------

    def assign(
        self,
        b: Builder,
        rules: Iterable[tuple[int, ApproverRule]],
        excluded: dict[str, str],
        lost: set[int],
    ) -> list[ev.Assignment]:
        """Resolve ``rules`` (slot, rule) to assignments. People segregation of duties
        rules out are left out and recorded in ``excluded`` (user -> reason), and the
        slots they would have stood on in ``lost``; an out-of-office delegate who may not
        hold the step leaves the task with the person the rule named."""
        now, directory = b.ctx.now, b.ctx.directory
        out: list[ev.Assignment] = []
        seen: set[tuple[str, int]] = set()
        for slot, rule in rules:
            for user in rule.resolve(b):
                if _excluded(b, self.id, user, excluded):
                    lost.add(slot)
                    continue
                delegate = directory.delegate_for(user, now)
                if delegate is not None and _excluded(b, self.id, delegate, excluded):
                    delegate = None
                holder = delegate or user
                if (holder, slot) not in seen:
                    seen.add((holder, slot))
                    out.append(ev.Assignment(holder, slot, user if delegate else None))
        return out

    def applying(self, b: Builder) -> list[tuple[int, ApproverRule]] | None:
        """The entries of ``approvers`` (slot, rule) whose ``when`` holds for this
        request. A condition that cannot be evaluated fails the step (None), as a step
        condition does; data CEL cannot hold refuses the command."""
        rules = list(enumerate(self.approvers))
        if all(rule.when is None for _, rule in rules):
            return rules
        names = None  # the data in CEL's types, converted for the first condition
        out: list[tuple[int, ApproverRule]] = []
        for slot, rule in rules:
            if rule.when is not None:
                try:
                    if names is None:
                        names = rule.when.activation(b.condition_data(), b.state.submitter)
                    holds = rule.when.evaluate_in(names)
                except DataNotEvaluable as exc:
                    raise CommandRejected(errors.INVALID_DATA, str(exc)) from exc
                except ConditionError as exc:
                    b.fail_step(self.id, "ConditionError", str(exc))
                    return None
                if not holds:
                    continue
            out.append((slot, rule))
        return out

    def required(self, slots: Sequence[int] | None = None) -> int:
        """Approvals needed: in mode ``all`` one per entry that applies (``slots``;
        default every entry), else one or the quorum."""
        if self.mode == "all":
            return len(self.approvers) if slots is None else len(slots)
        return self.quorum if self.mode == "quorum" else 1

    def short(self, assignments: Sequence[ev.Assignment], slots: Sequence[int]) -> bool:
        """True when ``assignments`` cannot complete the step in its mode, ``slots``
        being the entries that apply."""
        if not assignments:
            return True
        if self.mode == "all":
            filled = {a.slot for a in assignments}
            return not filled.issuperset(slots) or not _fillable(assignments, slots, set())
        if self.mode == "quorum":
            return len({a.user for a in assignments}) < self.quorum
        return False

    def enter(self, b: Builder) -> None:
        applying = self.applying(b)
        if applying is None:
            return
        slots = [slot for slot, _ in applying]
        excluded: dict[str, str] = {}
        lost: set[int] = set()
        assignments = self.assign(b, applying, excluded, lost)
        fallback = bool(lost) and self.short(assignments, slots)
        if fallback:
            # The step's own approvers were ruled out: the fallback stands on the slots
            # they left (one slot is enough unless every slot needs its own approval).
            lost_slots = sorted(lost) if self.mode == "all" else [min(lost)]
            rules = self.fallback or (SUBMITTERS_MANAGER,)
            extra = self.assign(
                b, [(slot, rule) for slot in lost_slots for rule in rules], excluded, set()
            )
            known = {(a.user, a.slot) for a in assignments}
            assignments += [a for a in extra if (a.user, a.slot) not in known]
        if excluded:
            b.emit(ev.ApproversExcluded(self.id, tuple(excluded.items()), fallback))
        if self.short(assignments, slots):
            b.fail_step(self.id, "NoApprovers", self._shortfall(assignments, slots, fallback))
            return
        timers = [b.timer(self.id, "reminder", after, i) for i, after in enumerate(self.reminders)]
        if self.deadline is not None:
            timers.append(b.timer(self.id, "deadline", self.deadline))
        due_at = b.ctx.now + self.deadline if self.deadline is not None else None
        b.emit(
            ev.ApprovalRequested(
                self.id, tuple(assignments), self.required(slots), self.mode, due_at, tuple(timers)
            )
        )

    def _shortfall(
        self, assignments: Sequence[ev.Assignment], slots: Sequence[int], fallback: bool
    ) -> str:
        """Why the step could not be assigned, in the words of its StepFailed."""
        if fallback:
            return NO_ELIGIBLE_APPROVERS
        if not slots:
            return NO_RULE_APPLIES
        if self.mode == "quorum" and assignments:
            found = len({a.user for a in assignments})
            return QUORUM_SHORT.format(required=self.quorum, found=found)
        return NO_APPROVERS

    # -- commands ---------------------------------------------------------------

    def on_command(self, b: Builder, command: Command) -> None:
        if isinstance(command, Decide):
            self.on_decide(b, command)
        elif isinstance(command, Reassign):
            _check_note(command.comment)
            holder = _outstanding(b, command.from_user)
            if holder is None:
                raise CommandRejected(
                    errors.NOT_YOUR_STEP, f"{command.from_user} holds no open task on {self.id}"
                )
            receivers = (command.to_user, *command.also_to) if command.left else (command.to_user,)
            for user in receivers:
                _check_user(b, user)
                refuse_unless_eligible(b.definition, b.state, user, self.id)
            reason = ev.HANDED_ON if command.left else "reassigned"
            for i, user in enumerate(dict.fromkeys(receivers)):
                b.emit(
                    ev.TaskReassigned(
                        self.id,
                        command.from_user,
                        user,
                        command.actor,
                        reason,
                        # the leaver stays on their slots until the last receiver's event
                        replace=i == len(set(receivers)) - 1,
                        comment=command.comment,
                    )
                )
        else:
            super().on_command(b, command)

    def add_approver(self, b: Builder, user: str, actor: str, reason: str) -> None:
        """An admin adds ``user`` beside the step's holders (the workflow waits in this
        step; operations checked). In mode ``all`` they stand on every slot still open
        (``_outstanding`` picks the one that leaves the others fillable when they
        decide); otherwise on the first slot: any approval counts there, and a quorum
        counts people. While ``user`` is out of office their stand-in holds the task
        for them, as on entering the step (``_added_holder``)."""
        _check_note(reason)
        name = b.definition.step_title(self.id)
        if not b.ctx.directory.user_exists(user):
            raise CommandRejected(errors.UNKNOWN_USER, NOT_A_MEMBER.format(user=user))
        if _decided(b, user):
            raise CommandRejected(
                errors.ALREADY_DECIDED, ALREADY_APPROVED.format(user=user, step=name)
            )
        for a in b.state.outstanding():
            if user in (a.user, a.on_behalf_of):
                words = ALREADY_HOLDS if a.user == user else STAND_IN_HOLDS
                raise CommandRejected(
                    errors.ALREADY_ASSIGNED, words.format(user=user, step=name, holder=a.user)
                )
        refuse_unless_eligible(b.definition, b.state, user, self.id)
        holder = self._added_holder(b, user, actor)
        slots = sorted({a.slot for a in b.state.assignments})
        if b.state.mode == "all":
            filled = {slot for _, slot in b.state.approvals}
            slots = [slot for slot in slots if slot not in filled]
        else:
            slots = slots[:1]
        behalf = user if holder != user else None
        assignments = tuple(ev.Assignment(holder, slot, behalf) for slot in slots)
        b.emit(ev.ApproverAdded(self.id, user, actor, reason, assignments))

    def _added_holder(self, b: Builder, user: str, actor: str) -> str:
        """Who holds the task of ``user``, added by ``actor``: their out-of-office stand-in
        now, as ``assign`` gives it, or ``user`` when they have none. A stand-in who may
        not hold the step leaves it with ``user`` (segregation of duties, recorded as on
        entering it), as does one who would add nobody new: who already holds a task on
        the step or approved it, or the admin who adds (never her own approver)."""
        delegate = b.ctx.directory.delegate_for(user, b.ctx.now)
        if delegate is None or delegate == user:
            return user
        excluded: dict[str, str] = {}
        if _excluded(b, self.id, delegate, excluded):
            b.emit(ev.ApproversExcluded(self.id, tuple(excluded.items())))
            return user
        holding = {a.user for a in b.state.outstanding()}
        if delegate == actor or delegate in holding or _decided(b, delegate):
            return user
        return delegate

    def on_decide(self, b: Builder, cmd: Decide) -> None:
        # Whose step it is comes first: someone who holds no task on it is told so
        # (NOT_YOUR_STEP), even where segregation of duties would also rule them out.
        # Segregation of duties answers where the step does reach the person: an
        # assignee a history gave it to, a delegate, and the principal a decision on
        # behalf of names (nobody acts for the submitter, whoever holds the task).
        if cmd.on_behalf_of not in (None, cmd.actor):
            refuse_unless_eligible(b.definition, b.state, cmd.on_behalf_of, self.id, deciding=True)
        holder = _holder_for(b, cmd)
        for person in (cmd.actor, holder.on_behalf_of):
            if person is not None:
                refuse_unless_eligible(b.definition, b.state, person, self.id, deciding=True)
        if cmd.decision == "delegate":
            if not cmd.delegate_to:
                raise CommandRejected(errors.INVALID_DECISION, "delegate needs delegateTo")
            _check_note(cmd.comment)
            if cmd.delegate_to == holder.user:
                raise CommandRejected(errors.INVALID_DECISION, "cannot delegate to yourself")
            _check_user(b, cmd.delegate_to)
            refuse_unless_eligible(b.definition, b.state, cmd.delegate_to, self.id)
            b.emit(
                ev.TaskReassigned(
                    self.id,
                    holder.user,
                    cmd.delegate_to,
                    cmd.actor,
                    "delegated",
                    comment=cmd.comment,
                )
            )
            return
        if cmd.decision in TURNING_BACK and self.reason_required and not cmd.comment.strip():
            raise CommandRejected(
                errors.REASON_REQUIRED, REASON_REQUIRED.format(decision=TURNING_BACK[cmd.decision])
            )
        on_behalf_of = holder.on_behalf_of or (holder.user if holder.user != cmd.actor else None)
        b.emit(
            ev.DecisionRecorded(
                self.id, cmd.actor, cmd.decision, holder.slot, on_behalf_of, cmd.comment
            )
        )
        if cmd.decision == "approve":
            if _complete(b):
                b.emit(ev.StepCompleted(self.id))
                b.advance_after(self.id)
        elif cmd.decision == "reject":
            if self.on_reject == ON_REJECT_END:
                b.turn_back(REJECTED, f"rejected by {cmd.actor} on {self.id}")
            else:
                send_back(b, self, self.on_reject)
        else:  # send_back
            send_back(b, self, self.send_back_to)

    def on_timer(self, b: Builder, kind: str, key: str) -> None:
        outstanding = b.state.outstanding()
        if kind == "reminder":
            b.emit(ev.ReminderSent(self.id, key, tuple(sorted({a.user for a in outstanding}))))
            return
        added: list[ev.Assignment] = []
        excluded: dict[str, str] = {}
        # someone who already approved this step cannot approve it again
        approved = {actor for actor, _ in b.state.approvals}
        for a in outstanding:
            for user in self.escalate_to.resolve(b, assignee=a.user):
                if user == a.user or user in approved:
                    continue
                if _excluded(b, self.id, user, excluded):
                    continue
                if all(x.user != user or x.slot != a.slot for x in added):
                    added.append(ev.Assignment(user, a.slot))
        if excluded:
            b.emit(ev.ApproversExcluded(self.id, tuple(excluded.items())))
        replace = self.escalation == "reassign"
        if replace and added and not _completable(b.state, added):
            # Taking the step from the late approvers would leave it unable to finish:
            # in mode all or a quorum each approval is a different person's, and one
            # target (the manager of several of them) can give only one. The target is
            # added beside them instead, so the step keeps someone who can still act.
            replace = False
        b.emit(ev.Escalated(self.id, key, tuple(added), replace))


SUBMITTERS_MANAGER = ApproverRule("manager", "submitter")


def send_back(b: Builder, step: Step, target: str) -> None:
    if target == TO_SUBMITTER:
        b.emit(ev.SentBack(step.id, None))
        return
    b.emit(ev.SentBack(step.id, target))
    b.advance(b.definition.index(target))


def _check_note(note: str) -> None:
    if len(note) > HANDOVER_NOTE_MAX:
        raise CommandRejected(
            errors.INVALID_COMMENT, HANDOVER_NOTE_TOO_LONG.format(count=len(note))
        )


def _holder_for(b: Builder, cmd: Decide) -> ev.Assignment:
    """The assignment ``cmd.actor`` decides on, or CommandRejected."""
    if cmd.on_behalf_of and cmd.on_behalf_of != cmd.actor:
        holder = _outstanding(b, cmd.on_behalf_of)
        if holder is None and _decided(b, cmd.on_behalf_of):
            raise CommandRejected(
                errors.ALREADY_DECIDED, f"{cmd.on_behalf_of} has already approved {b.state.step}"
            )
        if holder is None or b.ctx.directory.delegate_for(cmd.on_behalf_of, b.ctx.now) != cmd.actor:
            raise CommandRejected(
                errors.NOT_YOUR_STEP,
                NOT_THEIR_DELEGATE.format(step=_waiting_for(b), principal=cmd.on_behalf_of),
            )
        return holder
    holder = _outstanding(b, cmd.actor)
    if holder is None:
        if _decided(b, cmd.actor):
            raise CommandRejected(
                errors.ALREADY_DECIDED, f"{cmd.actor} has already approved {b.state.step}"
            )
        raise CommandRejected(
            errors.NOT_YOUR_STEP,
            NOT_WAITING_FOR.format(step=_waiting_for(b)),
        )
    return holder


def _waiting_for(b: Builder) -> str:
    """The title of the step the workflow waits for."""
    return b.definition.step_title(b.state.step or "")


def _decided(b: Builder, user: str) -> bool:
    """True when ``user`` approved this step, in person or through a delegate."""
    approved = {actor for actor, _ in b.state.approvals}
    return user in approved or any(
        a.on_behalf_of == user and a.user in approved for a in b.state.assignments
    )


def _outstanding(b: Builder, user: str) -> ev.Assignment | None:
    """The open assignment ``user`` acts on. In mode ``all`` one person may stand on
    several slots; pick a slot that leaves the others fillable by other people."""
    mine = [a for a in b.state.outstanding() if a.user == user]
    if len(mine) > 1 and b.state.mode == "all":
        filled = {slot for _, slot in b.state.approvals}
        used = {actor for actor, _ in b.state.approvals} | {user}
        # the slots of the entries that applied (not 0..required-1: an entry whose
        # ``when`` did not hold has no slot)
        slots = sorted({x.slot for x in b.state.assignments})
        for a in mine:
            rest = [s for s in slots if s not in filled and s != a.slot]
            if _fillable(b.state.assignments, rest, used):
                return a
    return mine[0] if mine else None


def _fillable(assignments: Iterable[ev.Assignment], slots: Iterable[int], used: set[str]) -> bool:
    """True when each of ``slots`` can get a different person not in ``used``: a
    bipartite matching of slots to people (augmenting paths; the sets are tiny)."""
    candidates: dict[int, list[str]] = {}
    for a in assignments:
        if a.user not in used:
            candidates.setdefault(a.slot, []).append(a.user)
    holder: dict[str, int] = {}

    def place(slot: int, seen: set[str]) -> bool:
        for user in candidates.get(slot, ()):
            if user not in seen:
                seen.add(user)
                if user not in holder or place(holder[user], seen):
                    holder[user] = slot
                    return True
        return False

    return all(place(slot, set()) for slot in slots)


def _completable(state: State, added: Sequence[ev.Assignment]) -> bool:
    """True when the current approval step could still finish, with different people
    for its approvals, once ``added`` replace its outstanding assignees (the Escalated
    event's ``replace``)."""
    approved = {actor for actor, _ in state.approvals}
    holders = [a for a in state.assignments if a.user in approved] + list(added)
    if state.mode == "all":
        filled = {slot for _, slot in state.approvals}
        open_slots = sorted({a.slot for a in state.assignments} - filled)
        return _fillable(holders, open_slots, approved)
    people = {a.user for a in holders} - approved
    return len(people) >= state.required - len(state.approvals)


# Why nobody can finish an approval step (``unfinishable``).
NO_OPEN_TASK = "no_open_task"
ALL_LEFT = "all_left"
TOO_FEW = "too_few"


def unfinishable(state: State, can_act: Callable[[str], bool]) -> str | None:
    """Why the approval step ``state`` waits in can never finish with the people who
    hold its open tasks, ``can_act`` saying who of them can act now (an active
    account): NO_OPEN_TASK when nobody holds one, ALL_LEFT when nobody who holds one
    can act, TOO_FEW when those who can are fewer than the different people its
    approvals still need; None when it can finish (or it waits in no approval step).
    The rule an escalation keeps (``_completable``), asked of the people left."""
    if state.status != RUNNING or not state.assignments or state.step == SUBMITTER_STEP:
        return None
    outstanding = state.outstanding()
    usable = [a for a in outstanding if can_act(a.user)]
    if _completable(state, usable):
        return None
    if not outstanding:
        return NO_OPEN_TASK
    return ALL_LEFT if not usable else TOO_FEW


def _complete(b: Builder) -> bool:
    s = b.state
    if s.mode == "all":
        return len({slot for _, slot in s.approvals}) >= s.required
    return len(s.approvals) >= s.required


def _check_user(b: Builder, user: str) -> None:
    if not b.ctx.directory.user_exists(user):
        raise CommandRejected(errors.UNKNOWN_USER, f"no user {user!r}")


def _excluded(b: Builder, step: str, user: str, excluded: dict[str, str]) -> bool:
    """True when segregation of duties rules ``user`` out of ``step``; the reason is
    recorded in ``excluded``."""
    reason = exclusion(b.state, user, step, distinct=b.definition.distinct_approvers)
    if reason is None:
        return False
    excluded.setdefault(user, reason)
    return True


def parse(doc: Mapping[str, Any], path: str) -> ApprovalStep:
    check_fields(
        doc,
        path,
        {
            "approvers",
            "mode",
            "quorum",
            "deadline",
            "reminders",
            "escalate_to",
            "escalation",
            "on_reject",
            "send_back_to",
            "fallback",
            "reason_required",
        },
    )
    step_id, when = common(doc, path)
    rules = doc.get("approvers")
    if not isinstance(rules, Sequence) or isinstance(rules, str) or not rules:
        raise DefinitionError(f"{path}.approvers", "must be a non-empty list of approver rules")
    approvers = tuple(
        ApproverRule.parse(r, f"{path}.approvers[{i}]", allow_when=True)
        for i, r in enumerate(rules)
    )
    mode = doc.get("mode", "any")
    if mode not in ("any", "all", "quorum"):
        raise DefinitionError(f"{path}.mode", "must be any, all or quorum")
    quorum = doc.get("quorum", 1)
    if mode == "quorum" and (isinstance(quorum, bool) or not isinstance(quorum, int) or quorum < 1):
        raise DefinitionError(f"{path}.quorum", "must be an integer of at least 1")
    if mode == "quorum" and (most := _most_people(approvers)) is not None and quorum > most:
        # Refused here rather than capped at run time: a quorum is a promise of that many
        # different people, and a smaller set must not pass for it.
        raise DefinitionError(f"{path}.quorum", QUORUM_OVER_RULES.format(quorum=quorum, most=most))
    deadline = doc.get("deadline")
    reminders = doc.get("reminders", [])
    if not isinstance(reminders, list):
        raise DefinitionError(f"{path}.reminders", "must be a list of durations after the start")
    if len(reminders) > MAX_REMINDERS:
        raise DefinitionError(f"{path}.reminders", TOO_MANY_REMINDERS)
    fallback = doc.get("fallback")
    if fallback is not None and (
        not isinstance(fallback, Sequence) or isinstance(fallback, str) or not fallback
    ):
        raise DefinitionError(f"{path}.fallback", "must be a non-empty list of approver rules")
    reason_required = doc.get("reason_required", True)
    if not isinstance(reason_required, bool):
        raise DefinitionError(f"{path}.reason_required", REASON_REQUIRED_SHAPE)
    escalation = doc.get("escalation", "reassign")
    if escalation not in ("reassign", "add"):
        raise DefinitionError(f"{path}.escalation", "must be reassign or add")
    return ApprovalStep(
        id=step_id,
        when=when,
        approvers=approvers,
        mode=mode,
        quorum=quorum if mode == "quorum" else 1,
        deadline=None if deadline is None else parse_duration(deadline, f"{path}.deadline"),
        reminders=tuple(
            parse_duration(r, f"{path}.reminders[{i}]") for i, r in enumerate(reminders)
        ),
        escalate_to=ApproverRule.parse(
            doc.get("escalate_to", {"manager": "assignee"}),
            f"{path}.escalate_to",
            allow_assignee=True,
        ),
        escalation=escalation,
        on_reject=_target(doc.get("on_reject", ON_REJECT_END), f"{path}.on_reject"),
        send_back_to=_target(doc.get("send_back_to", TO_SUBMITTER), f"{path}.send_back_to"),
        fallback=tuple(
            ApproverRule.parse(r, f"{path}.fallback[{i}]") for i, r in enumerate(fallback or ())
        ),
        reason_required=reason_required,
    )


def _most_people(rules: Sequence[ApproverRule]) -> int | None:
    """The most different people ``rules`` can name with every condition holding, or
    None when a group is among them (its size is the directory's, known only later)."""
    if any(rule.kind == "group" for rule in rules):
        return None
    return len({(rule.kind, rule.value) for rule in rules})


def _target(value: object, path: str) -> str:
    if not isinstance(value, str) or not value:
        raise DefinitionError(path, "must be 'end', 'submitter' or an earlier step id")
    return value
