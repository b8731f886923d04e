"""The mail projection: which events tell whom what, written as outbox rows (a subject
and the facts the sender renders the bodies from) in the command's transaction. A
function of the events (and of the state before them, itself a fold of earlier events):
projecting the same events again writes nothing new, because each row is unique on
(workflow, event seq, recipient)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.core.mail import EmailMessage, get_connection
from django.db import transaction
from django.urls import reverse

from approvals.definitions import definition_for, raw_definition_for
from approvals.models import Workflow, WorkflowEvent
from approvals.runtime import store
from approvals.runtime.directory import TenantDirectory
from approvals.runtime.dispatch import mail_dispatch_on_commit
from approvals.words.held import not_recorded_words
from approvals.words.steps import nothing_undone, step_title
from templates_engine import State
from templates_engine import events as ev

from .format import amount_of, one_line
from .mail_words import facts, name_of, request_line
from .models import MailKind, MailMessage, NotificationMode

log = logging.getLogger(__name__)

_OUTCOMES: dict[type[ev.Event], MailKind] = {
    ev.WorkflowCompleted: MailKind.OUTCOME_APPROVED,
    ev.WorkflowRejected: MailKind.OUTCOME_REJECTED,
    ev.WorkflowCancelled: MailKind.OUTCOME_CANCELLED,
    ev.WorkflowRolledBack: MailKind.OUTCOME_FAILED,
    ev.CompensationFailed: MailKind.OUTCOME_FAILED,
}
# Events that tell somebody something; a command with none of them writes no mail.
_TOLD = (
    ev.ApprovalRequested,
    ev.TaskReassigned,
    ev.ApproverAdded,
    ev.Escalated,
    ev.ReminderSent,
    ev.SentBack,
    ev.CommentAdded,
    *_OUTCOMES,
)


@dataclass
class Notice:
    """One mail to write: who, about which event, and what the words need."""

    seq: int
    username: str
    kind: MailKind
    step: str = ""
    round: int = 0
    other: str = ""  # the person it went to or came from, the one who sent it back
    comment: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


def notices_of(
    old: State,
    events: Sequence[ev.Event],
    first_seq: int,
    submitter: str | None,
    deciders: frozenset[str] = frozenset(),
    new: State | None = None,
) -> list[Notice]:
    """Who is told what about ``events`` (the first at ``first_seq``). ``deciders`` are
    the people who decided a step before these events (a comment tells them too). Each
    notice carries the why its mail needs: who decided and their words, the deadline
    that passed, the step that failed; what happened in an earlier command (a rejection
    whose undo ran later) is marked ``looked_up`` for ``mail_project`` to read."""
    told = _Telling(
        submitter=submitter,
        deciders=deciders,
        holders={a.user for a in old.outstanding()} if old.step else set(),
        due=old.due_at,
    )
    for i, e in enumerate(events):
        seq = first_seq + i
        tell = _TELL.get(type(e))
        if tell is not None:
            tell(told, seq, e)
        elif type(e) in _OUTCOMES and submitter:
            before = events[i - 1].type if i else None
            told.ending(seq, e, submitter, before, new or old)
    return told.out


@dataclass
class _Telling:
    """The notices so far, and what the events so far leave for the ones after them:
    who holds the step, when it is due, the last decision and the last failure."""

    submitter: str | None
    deciders: frozenset[str]
    holders: set[str]
    due: float | None
    last_decision: ev.DecisionRecorded | None = None
    failed: ev.StepFailed | None = None
    out: list[Notice] = field(default_factory=list)

    def ending(
        self, seq: int, e: ev.Event, submitter: str, before: str | None, state: State
    ) -> None:
        """The submitter's mail about how the request ended; the holders' when the
        submitter withdrew it themselves."""
        if isinstance(e, ev.WorkflowCancelled) and e.actor == submitter:
            # they withdrew it themselves: the step's holders lose a task, and why
            self.out += [
                Notice(seq, u, MailKind.WITHDRAWN, "", 0, submitter, e.reason)
                for u in sorted(self.holders - {submitter})
            ]
            return
        outcome = _outcome(seq, e, submitter, self.last_decision, self.failed, state)
        if nothing_undone(before, e.type):
            outcome.extra["nothing_undone"] = True
        self.out.append(outcome)


def _decision_recorded(t: _Telling, seq: int, e: ev.DecisionRecorded) -> None:
    t.last_decision = e


def _step_failed(t: _Telling, seq: int, e: ev.StepFailed) -> None:
    t.failed = e


def _approval_requested(t: _Telling, seq: int, e: ev.ApprovalRequested) -> None:
    t.holders = {a.user for a in e.assignments}
    t.due = e.due_at
    extra: dict[str, Any] = {"due_at": e.due_at} if e.due_at else {}
    t.out += [
        Notice(seq, a.user, MailKind.TASK_ASSIGNED, e.step, seq, extra=extra) for a in e.assignments
    ]


def _task_reassigned(t: _Telling, seq: int, e: ev.TaskReassigned) -> None:
    escalated = e.reason == "escalated"
    kind = MailKind.ESCALATED if escalated else MailKind.TASK_ASSIGNED
    extra = {"due_at": t.due, "handed": e.reason, "by": e.actor or ""}
    t.out.append(Notice(seq, e.to_user, kind, e.step, seq, e.from_user, e.comment, extra))
    if escalated and e.replace:
        was_due = {"due_at": t.due}
        away = MailKind.ESCALATED_AWAY
        t.out.append(Notice(seq, e.from_user, away, e.step, 0, e.to_user, extra=was_due))


def _approver_added(t: _Telling, seq: int, e: ev.ApproverAdded) -> None:
    # an admin asked one more person: told as a new task, with who and why; their
    # stand-in is told instead while they are away, as on entering a step
    extra = {"due_at": t.due, "handed": "added", "by": e.actor}
    kind = MailKind.TASK_ASSIGNED
    added = {a.user for a in e.assignments} or {e.user}
    t.out += [Notice(seq, u, kind, e.step, seq, "", e.reason, dict(extra)) for u in sorted(added)]
    t.holders |= added


def _escalated(t: _Telling, seq: int, e: ev.Escalated) -> None:
    new_holders = {a.user for a in e.assignments}
    to = ", ".join(sorted(new_holders))
    # since when the task waits: looked up by the sender, not in the command
    extra = {"due_at": t.due, "since_before": seq}
    t.out += [
        Notice(seq, u, MailKind.ESCALATED, e.step, seq, extra=dict(extra))
        for u in sorted(new_holders)
    ]
    if e.replace:
        gone = sorted(t.holders - new_holders)
        t.out += [
            Notice(seq, u, MailKind.ESCALATED_AWAY, e.step, 0, to, extra={"due_at": t.due})
            for u in gone
        ]
        t.holders = new_holders
    else:
        t.holders |= new_holders


def _reminder_sent(t: _Telling, seq: int, e: ev.ReminderSent) -> None:
    # A reminder only goes to who holds the step's current round, so its links may be
    # bound to the reminder itself: they stop working, as the first mail's do, once a
    # later round begins (notifications.links).
    extra = {"due_at": t.due, "since_before": seq}
    t.out += [Notice(seq, u, MailKind.REMINDER, e.step, seq, extra=dict(extra)) for u in e.users]


def _sent_back(t: _Telling, seq: int, e: ev.SentBack) -> None:
    if e.to_step is None and t.submitter:
        by = t.last_decision.actor if t.last_decision else ""
        comment = t.last_decision.comment if t.last_decision else ""
        t.out.append(Notice(seq, t.submitter, MailKind.SENT_BACK, e.step, 0, by, comment))


def _comment_added(t: _Telling, seq: int, e: ev.CommentAdded) -> None:
    t.out += _comment_notices(seq, e, t.submitter, t.holders, t.deciders)


# What each event tells, or leaves for the events after it; the endings are _OUTCOMES.
_TELL: dict[type[ev.Event], Callable[[_Telling, int, Any], None]] = {
    ev.DecisionRecorded: _decision_recorded,
    ev.StepFailed: _step_failed,
    ev.ApprovalRequested: _approval_requested,
    ev.TaskReassigned: _task_reassigned,
    ev.ApproverAdded: _approver_added,
    ev.Escalated: _escalated,
    ev.ReminderSent: _reminder_sent,
    ev.SentBack: _sent_back,
    ev.CommentAdded: _comment_added,
}


def _outcome(
    seq: int,
    e: ev.Event,
    submitter: str,
    decision: ev.DecisionRecorded | None,
    failed: ev.StepFailed | None,
    state: State,
) -> Notice:
    """The submitter's mail about how their request ended, with who and why."""
    kind = _OUTCOMES[type(e)]
    if isinstance(e, ev.WorkflowCancelled):
        if e.actor is None:  # ended after its undo ran: the cancel came before
            return Notice(seq, submitter, kind, extra={"looked_up": "cancel"})
        return Notice(seq, submitter, kind, "", 0, e.actor, e.reason)
    if isinstance(e, ev.WorkflowRejected):
        if decision is None or decision.decision != "reject":
            return Notice(seq, submitter, kind, extra={"looked_up": "reject"})
        return Notice(seq, submitter, kind, decision.step, 0, decision.actor, decision.comment)
    if isinstance(e, ev.CompensationFailed):
        return Notice(seq, submitter, kind, e.step, extra={"undo_failed": True})
    if isinstance(e, ev.WorkflowRolledBack):
        step = failed.step if failed else (state.failed_step or "")
        error = failed.error if failed else (state.error or "")
        message = failed.message if failed else ""
        return Notice(seq, submitter, kind, step, extra={"error": error, "message": message})
    by = decision.actor if decision else ""
    return Notice(seq, submitter, kind, "", 0, by, decision.comment if decision else "")


def _comment_notices(
    seq: int,
    e: ev.CommentAdded,
    submitter: str | None,
    holders: set[str],
    deciders: frozenset[str],
) -> list[Notice]:
    """A comment tells the people it mentions, and the other participants: the
    submitter, who holds the step now and who decided one before; never its author."""
    mentioned = [u for u in e.mentions if u != e.actor]
    others = ({submitter} if submitter else set()) | holders | deciders
    others -= {e.actor, *mentioned}
    out = [Notice(seq, u, MailKind.MENTIONED, "", 0, e.actor, e.comment) for u in mentioned]
    out += [Notice(seq, u, MailKind.COMMENT, "", 0, e.actor, e.comment) for u in sorted(others)]
    return out


def message_id(*, workflow_id: Any, seq: int, user_id: int) -> str:
    """Stable per event and recipient, so a resend is recognisably the same mail."""
    return f"<wf-{workflow_id}-{seq}-{user_id}@approvals.{mail_domain()}>"


def mail_domain() -> str:
    return _host_of(settings.APPROVALS_BASE_URL)


@lru_cache(maxsize=8)
def _host_of(url: str) -> str:
    return urlsplit(url).hostname or "localhost"


def mail_project(
    *,
    wf: Workflow,
    old: State,
    events: Sequence[ev.Event],
    first_seq: int,
    now: Any,
    directory: TenantDirectory | None = None,
    new: State | None = None,
) -> None:
    """Write the outbox rows ``events`` call for, in the caller's transaction, and hand
    the immediate ones to the sender after commit. The people come from the command's
    directory, which usually knows them already."""
    if not any(isinstance(e, _TOLD) for e in events):
        return
    directory = directory or TenantDirectory(wf.tenant_id)
    submitter = (new or old).submitter or _started_by(events)
    deciders = (
        _deciders_before(wf, first_seq)
        if any(isinstance(e, ev.CommentAdded) for e in events)
        else frozenset()
    )
    notices = notices_of(old, events, first_seq, submitter, deciders, new)
    if not notices:
        return
    _look_up(wf, first_seq, notices)
    names = {n.username for n in notices} | {u for n in notices for u in n.other.split(", ") if u}
    # who handed a task over or added an approver, named in the mail
    names |= {by for n in notices if (by := str(n.extra.get("by") or ""))}
    if submitter:
        names.add(submitter)
    people = directory.contacts(names)
    submitter_contact = people.get(submitter) if submitter else None
    title = definition_for(wf.template_id).title
    rows = []
    for n in notices:
        user = people.get(n.username)
        if user is None or not user.is_active or not user.email:
            continue  # nobody to write to; the inbox still shows the task
        digest = user.mode == NotificationMode.DIGEST
        subject, ctx = facts(
            wf=wf,
            notice=n,
            recipient=user,
            people=people,
            title=title,
            submitter=submitter_contact,
        )
        rows.append(
            (
                wf.tenant_id,
                wf.pk,
                n.seq,
                user.pk,
                n.kind,
                digest,
                user.email,
                subject,
                ctx,
                message_id(workflow_id=wf.pk, seq=n.seq, user_id=user.pk),
                now,
                now,
            )
        )
    if not rows:
        return
    store.insert(MailMessage, _MAIL_COLUMNS, rows, on_conflict_ignore=True)
    if seqs := sorted({row[2] for row in rows if not row[5]}):
        mail_dispatch_on_commit(workflow_id=wf.pk, seqs=seqs)


_MAIL_COLUMNS = (
    "tenant",
    "workflow",
    "event_seq",
    "recipient",
    "kind",
    "digest",
    "to_address",
    "subject",
    "context",
    "message_id",
    "next_attempt_at",
    "created_at",
)


# What a notice marked ``looked_up`` reads from the history before its command.
_LOOK_UP_TYPES = {
    "reject": ("DecisionRecorded",),
    "cancel": ("CompensationStarted",),
}


def _look_up(wf: Workflow, first_seq: int, notices: list[Notice]) -> None:
    """Fill in the why of the notices that need an earlier event: who rejected or
    cancelled a request whose undo ran before it ended. One read, and only for those
    (rare) mails. Since when a reminded or escalated task waits is the sender's to look
    up (``bodies.mail_context``): a timer's command reads no history."""
    wanted = {str(n.extra["looked_up"]) for n in notices if n.extra.get("looked_up")}
    types = sorted({t for w in wanted for t in _LOOK_UP_TYPES.get(w, ())})
    if not types:
        return
    earlier = list(
        WorkflowEvent.objects.filter(workflow_id=wf.pk, seq__lt=first_seq, type__in=types)
        .order_by("-seq")
        .values_list("type", "payload", "actor__username")[:200]
    )
    for n in notices:
        need = n.extra.pop("looked_up", None)
        for kind, payload, actor in earlier:
            if (
                need == "reject"
                and kind == "DecisionRecorded"
                and payload.get("decision") == "reject"
            ):
                n.step, n.other = str(payload.get("step") or ""), str(payload.get("actor"))
                n.comment = str(payload.get("comment") or "")
                break
            if need == "cancel" and kind == "CompensationStarted":
                # the engine's reason reads "cancelled by <who>: <their reason>"
                n.other = actor or ""
                n.comment = str(payload.get("reason") or "").partition(": ")[2]
                break


def _deciders_before(wf: Workflow, seq: int) -> frozenset[str]:
    """Who decided a step of ``wf`` before the event at ``seq`` (and whom a delegate
    decided for), from its history: read only for a comment, which tells them."""
    payloads = WorkflowEvent.objects.filter(
        workflow_id=wf.pk, type="DecisionRecorded", seq__lt=seq
    ).values_list("payload", flat=True)
    named = {p.get(k) for p in payloads for k in ("actor", "on_behalf_of")}
    return frozenset(n for n in named if isinstance(n, str) and n)


def _started_by(events: Sequence[ev.Event]) -> str | None:
    return next((e.submitter for e in events if isinstance(e, ev.WorkflowStarted)), None)


def mail_project_command(
    wf: Workflow,
    old: State,
    new: State,
    events: Sequence[ev.Event],
    now: Any,
    directory: TenantDirectory,
) -> None:
    """The hook the command path calls after appending ``events`` (``wf.version`` is
    already the seq of the last one)."""
    if events:
        mail_project(
            wf=wf,
            old=old,
            new=new,
            events=events,
            first_seq=wf.version - len(events) + 1,
            now=now,
            directory=directory,
        )


# A mail that answers no event (a held decision refused at release) is keyed by this
# ``event_seq``: events count from 1.
NO_EVENT_SEQ = 0
HELD_NOT_RECORDED_WHY = (
    "{reason} Nothing was recorded in your name; decide again if it is still yours to decide."
)


def held_not_recorded_mail(*, hold: Any, reason: str, now: Any) -> None:
    """Tell the person whose held decision was refused at release (the task was handed
    to someone else, the request withdrawn meanwhile) that it was not recorded and
    why, in the caller's transaction; sent after commit. One such mail per person and
    request (a second refusal on the same request adds none)."""
    wf = Workflow.objects.select_related("submitter").get(pk=hold.workflow_id)
    person = hold.actor
    if not person.is_active or not person.email:
        return
    title = definition_for(wf.template_id).title
    raw = raw_definition_for(wf.template_id)
    amount = amount_of(wf.data)
    what = request_line(wf.summary, title, amount, wf.subject_id)
    headline = not_recorded_words(hold.decision, what)
    ctx = {
        "recipient": name_of(person),
        "subject": one_line(f"Not recorded: your decision on {what}"),
        "headline": headline,
        "summary": what,
        "title": title,
        "amount": amount,
        "requester": name_of(wf.submitter),
        "reference": f"{title} {wf.subject_id}".strip(),
        "step": step_title(raw, hold.step) if hold.step else "",
        "why": HELD_NOT_RECORDED_WHY.format(reason=reason.rstrip(".") + "."),
        "zone": getattr(person, "time_zone", ""),
        "workflow": str(wf.pk),
    }
    row = (
        wf.tenant_id,
        wf.pk,
        NO_EVENT_SEQ,
        person.pk,
        MailKind.HELD_NOT_RECORDED,
        False,
        person.email,
        ctx["subject"],
        ctx,
        message_id(workflow_id=wf.pk, seq=NO_EVENT_SEQ, user_id=person.pk),
        now,
        now,
    )
    store.insert(MailMessage, _MAIL_COLUMNS, [row], on_conflict_ignore=True)
    mail_dispatch_on_commit(workflow_id=wf.pk, seqs=[NO_EVENT_SEQ])


DRAFT_REVIEW_SUBJECT = "{drafter} changed {title}: review and publish"
DRAFT_REVIEW_BODY = """Hello {recipient},

{drafter} changed the workflow template {title} and saved it as a draft. Four eyes are
on for your organisation, so it waits for another finance admin to read the change and
publish it (or discard it). Nothing changes for requests until then.

Review and publish: {url}
"""


def template_draft_mails(*, draft: Any, drafter: Any, reviewers: Sequence[Any]) -> None:
    """After commit, mail each of ``reviewers`` (the organisation's other finance
    admins) that ``drafter`` changed a workflow template, with the draft's review page.
    A mail that cannot be sent is logged; the draft stays listed under its template."""
    title = str(draft.definition.get("title") or draft.key)
    who = name_of(drafter) if drafter is not None else "Someone"
    url = settings.APPROVALS_BASE_URL + reverse(
        "admin:approvals_workflowtemplate_draft", args=[draft.pk]
    )
    mails = [
        EmailMessage(
            subject=one_line(DRAFT_REVIEW_SUBJECT.format(drafter=who, title=title)),
            body=DRAFT_REVIEW_BODY.format(
                recipient=name_of(person), drafter=who, title=title, url=url
            ),
            to=[person.email],
        )
        for person in reviewers
        if person.is_active and person.email
    ]

    def send() -> None:
        try:
            get_connection().send_messages(mails)
        except Exception:  # the draft is saved; its page lists it whatever the mail did
            log.exception("template draft %s: the review mails were not sent", draft.pk)

    if mails:
        transaction.on_commit(send)
