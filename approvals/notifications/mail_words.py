"""How a mail reads: its subject and the facts its bodies are rendered from, for one
notice (``messages.Notice``). Every mail leads with the request's summary line and says
who and why: who decided, sent back, cancelled or handed it over and their words; the
step that failed in the workflow template's words; since when a task waits and when it
is or was due (instants here, shown in the recipient's zone when rendered, ``bodies``)."""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING, Any

from approvals.definitions import raw_definition_for
from approvals.models import Workflow
from approvals.runtime.directory import Contact
from approvals.words.steps import (
    NOTHING_UNDONE,
    failure_sentence,
    step_title,
    undo_failure_sentence,
)

from .bodies import template_link_captions
from .format import amount_of, one_line
from .models import TASK_KINDS, MailKind

if TYPE_CHECKING:
    from .messages import Notice


def name_of(user: Any) -> str:
    if user is None:
        return "someone"
    return user.get_full_name() or user.username


@lru_cache(maxsize=4096)
def _step_label(template_id: int, step: str) -> str:
    """The title of ``step`` in the published workflow template ``template_id``: worked
    out once per template and step, as the definition is read once per template."""
    return step_title(raw_definition_for(template_id), step) if step else ""


# (subject label, first line) of each kind; {what} is the request's summary line.
_HEADLINES = {
    MailKind.TASK_ASSIGNED: ("Please approve", "{what} from {requester} waits for you"),
    MailKind.REMINDER: ("Reminder", "{what} from {requester} still waits for you"),
    MailKind.ESCALATED: (
        "Escalated to you",
        "{what} from {requester} was not decided in time and now waits for you",
    ),
    MailKind.ESCALATED_AWAY: (
        "Escalated",
        "{what} from {requester} was not decided in time and was passed on to {other}",
    ),
    MailKind.SENT_BACK: ("Sent back", "{other} sent your {what} back for changes"),
    MailKind.OUTCOME_APPROVED: ("Approved", "Your {what} was approved"),
    MailKind.OUTCOME_REJECTED: ("Rejected", "{other} rejected your {what}"),
    MailKind.OUTCOME_CANCELLED: ("Cancelled", "{other} cancelled your {what}"),
    MailKind.OUTCOME_FAILED: ("Could not be completed", "Your {what} could not be completed"),
    MailKind.COMMENT: ("Comment", "{other} commented on {what} from {requester}"),
    MailKind.MENTIONED: ("Mentioned", "{other} mentioned you on {what} from {requester}"),
    MailKind.WITHDRAWN: ("Withdrawn", "{other} withdrew {what}; it no longer waits for you"),
}
# A task someone handed over: who did, and how.
_HANDED = {
    "delegated": "{other} handed you {what} from {requester}",
    "reassigned": "{by} gave you {what} from {requester}, which {other} held",
    "handed_on": "{other} left, so {what} from {requester} now waits for you",
    "added": "{by} asked you to approve {what} from {requester} as well",
}
# The subject leads with who: "{label} by {other}: your {what}" for the submitter's
# mails; comments and withdrawals as before.
_BY_SUBJECTS = {
    MailKind.SENT_BACK,
    MailKind.OUTCOME_REJECTED,
    MailKind.OUTCOME_CANCELLED,
}
_COMMENT_SUBJECTS = {
    MailKind.COMMENT: "{other} commented: {what}",
    MailKind.MENTIONED: "{other} mentioned you: {what}",
    MailKind.WITHDRAWN: "{other} withdrew {what}",
}
# What the quoted words are, by kind: the reason for a rejection, the note with a
# send-back or a hand-over.
_WORDS_LABEL = {
    MailKind.SENT_BACK: "What to change",
    MailKind.OUTCOME_REJECTED: "Reason",
    MailKind.OUTCOME_CANCELLED: "Reason",
    MailKind.WITHDRAWN: "Reason",
    MailKind.TASK_ASSIGNED: "Note",
    MailKind.ESCALATED: "Note",
}
NO_REASON = "No reason was given."


def _why(notice: Notice, template_id: int) -> str:
    """The sentence that says why, for the kinds whose why is not a person's words."""
    if notice.kind == MailKind.OUTCOME_FAILED:
        raw = raw_definition_for(template_id)
        if notice.extra.get("undo_failed"):
            return undo_failure_sentence(raw, notice.step) + "."
        undone = (
            f"{NOTHING_UNDONE[0].upper()}{NOTHING_UNDONE[1:]}."
            if notice.extra.get("nothing_undone")
            else "The steps already done were undone."
        )
        if not notice.step:
            return f"A step did not pass. {undone}"
        failure = failure_sentence(
            raw,
            notice.step,
            str(notice.extra.get("error") or ""),
            str(notice.extra.get("message") or ""),
        )
        return f"{failure}. {undone}"
    if notice.kind in (MailKind.ESCALATED, MailKind.ESCALATED_AWAY) and not notice.extra.get(
        "due_at"
    ):
        return "Nobody decided it in time."
    return ""


def _names_of(usernames: str, people: dict[str, Contact]) -> str:
    """``"cora, victor"`` (an escalation to several) -> ``"Cora and Victor"``."""
    named = [name_of(people[u]) if u in people else u for u in usernames.split(", ") if u]
    return " and ".join(named)


def request_line(summary: str, title: str, amount: str, subject_id: str) -> str:
    """The request as the mail names it: its summary line; the workflow template's title
    with it when the line is no more than the amount (a claim with no description)."""
    if summary and summary != amount:
        return summary
    return one_line(f"{title} {amount or subject_id}".strip())


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
    the row keeps them, and the sender renders outside the command's transaction).
    Every mail leads with the request's summary line and says who and why; times stay
    instants here and are shown in the recipient's zone when the mail is rendered.
    The steps' words are those of the workflow's published template."""
    amount = amount_of(wf.data)
    what = request_line(wf.summary, title, amount, wf.subject_id)
    requester = name_of(submitter)
    other = _names_of(notice.other, people) or "someone"
    by_user = people.get(str(notice.extra.get("by") or ""))
    by = name_of(by_user) if by_user else "An administrator"
    label, line = _HEADLINES[notice.kind]
    handed = str(notice.extra.get("handed") or "")
    if notice.kind == MailKind.TASK_ASSIGNED and handed in _HANDED:
        line = _HANDED[handed]
    headline = line.format(what=what, requester=requester, other=other, by=by)
    if notice.kind in _COMMENT_SUBJECTS:
        subject = _COMMENT_SUBJECTS[notice.kind].format(other=other, what=what)
    elif notice.kind in _BY_SUBJECTS:
        subject = f"{label} by {other}: your {what}"
    elif notice.kind.startswith("outcome_"):
        subject = f"{label}: your {what}"
    else:
        subject = f"{label}: {what} from {requester}"
    # The links themselves are minted when the mail is rendered (bodies.py): the
    # row keeps what they grant, so a link's age counts from the mail that carries it.
    link = captions = None
    if notice.kind in TASK_KINDS and notice.round:
        link = {"step": notice.step, "round": notice.round, "user": recipient.pk}
        captions = template_link_captions(wf.template_id, notice.step, submitter)
    words_label = _WORDS_LABEL.get(notice.kind, "Comment")
    if notice.comment and notice.kind in (MailKind.SENT_BACK, *_BY_SUBJECTS, MailKind.WITHDRAWN):
        words_label = f"{words_label} ({other})"
    comment = notice.comment
    if not comment and notice.kind in _BY_SUBJECTS:
        comment, words_label = "", "Reason"
    ctx = {
        "recipient": name_of(recipient),
        "subject": one_line(subject),
        "headline": headline,
        "summary": what,
        "title": title,
        "amount": amount,
        "requester": requester,
        "reference": f"{title} {wf.subject_id}".strip(),
        "step": _step_label(wf.template_id, notice.step),
        "other": other,
        "comment": comment,
        "comment_label": words_label,
        "no_reason": NO_REASON if notice.kind in _BY_SUBJECTS and not comment else "",
        "why": _why(notice, wf.template_id),
        "due_at": notice.extra.get("due_at"),  # shown in the recipient's zone
        "overdue": notice.kind in (MailKind.ESCALATED, MailKind.ESCALATED_AWAY),
        "since_at": notice.extra.get("since_at"),
        # since when the task waits: the sender looks it up (bodies.mail_context)
        "since_before": notice.extra.get("since_before"),
        "since_step": notice.step if notice.extra.get("since_before") else "",
        "zone": recipient.time_zone,
        "workflow": str(wf.pk),
        "link": link,
        "link_captions": captions,  # the links' words, so rendering reads nothing
    }
    return one_line(subject)[:300], ctx
