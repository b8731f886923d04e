"""The mail projection: which events tell whom what, written as outbox rows (a subject
and the facts the sender renders the bodies from) in the command's transaction. A
function of the events (and of the state before them, itself a fold of earlier events):
projecting the same events again writes nothing new, because each row is unique on
(workflow, event seq, recipient)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings

from approvals.definitions import definition_for
from approvals.models import Workflow, WorkflowEvent
from approvals.runtime import store
from approvals.runtime.directory import Contact, TenantDirectory
from approvals.runtime.dispatch import mail_dispatch_on_commit
from templates_engine import State
from templates_engine import events as ev

from .format import amount_of, one_line
from .models import TASK_KINDS, MailKind, MailMessage, NotificationMode

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
) -> list[Notice]:
    """Who is told what about ``events`` (the first at ``first_seq``). ``deciders`` are
    the people who decided a step before these events (a comment tells them too)."""
    out: list[Notice] = []
    last_decision: ev.DecisionRecorded | None = None
    holders = {a.user for a in old.outstanding()} if old.step else set()
    for i, e in enumerate(events):
        seq = first_seq + i
        if isinstance(e, ev.DecisionRecorded):
            last_decision = e
        elif isinstance(e, ev.ApprovalRequested):
            holders = {a.user for a in e.assignments}
            due = {"due_at": e.due_at} if e.due_at else {}
            out += [
                Notice(seq, a.user, MailKind.TASK_ASSIGNED, e.step, seq, extra=due)
                for a in e.assignments
            ]
        elif isinstance(e, ev.TaskReassigned):
            escalated = e.reason == "escalated"
            kind = MailKind.ESCALATED if escalated else MailKind.TASK_ASSIGNED
            out.append(Notice(seq, e.to_user, kind, e.step, seq, e.from_user, e.comment))
            if escalated and e.replace:
                out.append(Notice(seq, e.from_user, MailKind.ESCALATED_AWAY, e.step, 0, e.to_user))
        elif isinstance(e, ev.Escalated):
            new = {a.user for a in e.assignments}
            to = ", ".join(sorted(new))
            out += [Notice(seq, u, MailKind.ESCALATED, e.step, seq) for u in sorted(new)]
            if e.replace:
                gone = sorted(holders - new)
                out += [Notice(seq, u, MailKind.ESCALATED_AWAY, e.step, 0, to) for u in gone]
                holders = new
            else:
                holders |= new
        elif isinstance(e, ev.ReminderSent):
            # A reminder only goes to who holds the step's current round, so its links
            # may be bound to the reminder itself: they stop working, as the first mail's
            # do, once a later round begins (notifications.links).
            out += [Notice(seq, u, MailKind.REMINDER, e.step, seq) for u in e.users]
        elif isinstance(e, ev.SentBack) and e.to_step is None and submitter:
            by = last_decision.actor if last_decision else ""
            comment = last_decision.comment if last_decision else ""
            out.append(Notice(seq, submitter, MailKind.SENT_BACK, e.step, 0, by, comment))
        elif isinstance(e, ev.CommentAdded):
            out += _comment_notices(seq, e, submitter, holders, deciders)
        elif type(e) in _OUTCOMES and submitter:
            if isinstance(e, ev.WorkflowCancelled) and e.actor == submitter:
                # they withdrew it themselves: the step's holders lose a task, and why
                out += [
                    Notice(seq, u, MailKind.WITHDRAWN, "", 0, submitter, e.reason)
                    for u in sorted(holders - {submitter})
                ]
                continue
            by = last_decision.actor if last_decision else ""
            comment = last_decision.comment if last_decision else ""
            out.append(Notice(seq, submitter, _OUTCOMES[type(e)], "", 0, by, comment))
    return out


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


def _name(user: Any) -> str:
    if user is None:
        return "someone"
    return user.get_full_name() or user.username


def _step_label(step: str) -> str:
    return step.replace("_", " ").replace("-", " ").capitalize() if step else ""


def message_id(*, workflow_id: Any, seq: int, user_id: int) -> str:
    """Stable per event and recipient, so a resend is recognisably the same mail."""
    return f"<wf-{workflow_id}-{seq}-{user_id}@approvals.{mail_domain()}>"


def mail_domain() -> str:
    return urlsplit(settings.APPROVALS_BASE_URL).hostname or "localhost"


_HEADLINES = {
    MailKind.TASK_ASSIGNED: ("Please approve", "{what} from {requester} waits for you"),
    MailKind.REMINDER: ("Reminder", "{what} from {requester} still waits for you"),
    MailKind.ESCALATED: ("Escalated to you", "{what} from {requester} now waits for you"),
    MailKind.ESCALATED_AWAY: ("Escalated", "{what} from {requester} was passed on to {other}"),
    MailKind.SENT_BACK: ("Sent back", "{other} sent your {what} back for changes"),
    MailKind.OUTCOME_APPROVED: ("Approved", "Your {what} was approved"),
    MailKind.OUTCOME_REJECTED: ("Rejected", "Your {what} was rejected"),
    MailKind.OUTCOME_CANCELLED: ("Cancelled", "Your {what} was cancelled"),
    MailKind.OUTCOME_FAILED: ("Failed", "Your {what} could not be completed"),
    MailKind.COMMENT: ("Comment", "{other} commented on {what} from {requester}"),
    MailKind.MENTIONED: ("Mentioned", "{other} mentioned you on {what} from {requester}"),
    MailKind.WITHDRAWN: ("Withdrawn", "{other} withdrew {what}; it no longer waits for you"),
}
# Mails about a comment or a withdrawal: the request is named by its summary line, and
# the subject leads with who wrote.
_COMMENT_SUBJECTS = {
    MailKind.COMMENT: "{other} commented: {what}",
    MailKind.MENTIONED: "{other} mentioned you: {what}",
    MailKind.WITHDRAWN: "{other} withdrew {what}",
}


def facts(
    *,
    wf: Workflow,
    notice: Notice,
    recipient: Contact,
    people: dict[str, Contact],
    title: str,
    submitter: Contact | None,
) -> tuple[str, dict[str, Any]]:
    """The subject of one mail and the facts its bodies are rendered from (plain JSON:
    the row keeps them, and the sender renders outside the command's transaction)."""
    amount = amount_of(wf.data)
    what = f"{title} {amount}".strip() if amount else title
    requester = _name(submitter)
    other_user = people.get(notice.other)
    other = _name(other_user) if other_user else notice.other
    label, line = _HEADLINES[notice.kind]
    headline = line.format(what=what, requester=requester, other=other or "someone else")
    subject = f"{label}: {what} from {requester}"
    if notice.kind in (MailKind.SENT_BACK,) or notice.kind.startswith("outcome_"):
        subject = f"{label}: your {what}"
    if notice.kind in _COMMENT_SUBJECTS:
        what = wf.summary or what
        headline = line.format(what=what, requester=requester, other=other or "someone")
        subject = _COMMENT_SUBJECTS[notice.kind].format(other=other or "someone", what=what)
    # The links themselves are minted when the mail is rendered (bodies.py): the
    # row keeps what they grant, so a link's age counts from the mail that carries it.
    link = None
    if notice.kind in TASK_KINDS and notice.round:
        link = {"step": notice.step, "round": notice.round, "user": recipient.pk}
    subject = one_line(subject)
    ctx = {
        "recipient": _name(recipient),
        "subject": subject,
        "headline": headline,
        "title": title,
        "amount": amount,
        "requester": requester,
        "reference": f"{wf.subject_type} {wf.subject_id}",
        "step": _step_label(notice.step),
        "other": other,
        "comment": notice.comment,
        "due_at": notice.extra.get("due_at"),  # shown in the recipient's zone
        "zone": recipient.time_zone,
        "workflow": str(wf.pk),
        "link": link,
    }
    return one_line(subject)[:300], ctx


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
    notices = notices_of(old, events, first_seq, submitter, deciders)
    if not notices:
        return
    names = {n.username for n in notices} | {n.other for n in notices if n.other}
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
