"""The conversation on a request: a comment is a Comment command through the one command
path (so it is in the history, the export and the hash chain); the mail projection tells
the other participants and the people it mentions."""

from __future__ import annotations

import uuid

from django.db.models.functions import Lower

from templates_engine import commands as cmd
from templates_engine.comments import mentions_in

from .. import access
from ..models import User, Workflow
from ..runtime.commands import CommandResult
from .workflows import readable_for, reader_addition

MENTION_UNKNOWN_CODE = "MENTION_UNKNOWN"
MENTION_CANNOT_READ_CODE = "MENTION_CANNOT_READ"
MENTION_UNKNOWN = "No one in your organisation is called @{name}; nothing was recorded."
MENTION_CANNOT_READ = (
    "{names} cannot see this request, so the comment cannot mention {them}; nothing was recorded."
)


class CommentRefused(Exception):
    """A comment refused before anything was recorded (a mention of someone unknown or
    of someone who may not read the request)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def workflow_comment(
    *,
    user: User,
    workflow_id: uuid.UUID | str,
    text: str,
    request_id: str,
    readable: access.ReadableWorkflow | None = None,
) -> CommandResult:
    """Record ``user``'s comment on the request. Raises WorkflowNotFound when the user
    may not read it (never a hint that it exists), access.Forbidden for an auditor,
    CommentRefused when a mention names someone unknown or someone who may not read
    the request, and CommandRejected (INVALID_COMMENT) for a text outside the limits.
    Nothing is recorded on any refusal; a repeated ``request_id`` is a duplicate.
    ``readable``: the read rule's answer when the caller (a page) asked it already; the
    rule is asked once per request, and not again with the lock."""
    readable = readable_for(user, workflow_id, readable)
    wf = readable.workflow
    access.check_may_comment(user, wf)
    mentions = _mentioned(user, mentions_in(text))
    _check_mentions(user, wf, mentions)

    return reader_addition(
        readable=readable,
        command=cmd.Comment(user.username, text, mentions),
        request_id=request_id,
        also=access.check_may_comment,
    )


def _mentioned(user: User, names: tuple[str, ...]) -> tuple[str, ...]:
    """The user names of the people ``names`` (as typed after @) mention, each once, the
    author left out: a name matches a user name whatever its capitals (@Farah is farah);
    a name that matches nobody is kept as typed, for ``_check_mentions`` to refuse."""
    if not names:
        return ()
    folded = {name.casefold() for name in names}
    known = {
        username.casefold(): username
        for username in User.objects.annotate(folded=Lower("username"))
        .filter(tenant_id=user.member_tenant_id, folded__in=folded)
        .values_list("username", flat=True)
    }
    found = dict.fromkeys(known.get(name.casefold(), name) for name in names)
    return tuple(name for name in found if name != user.username)


def _check_mentions(user: User, wf: Workflow, mentions: tuple[str, ...]) -> None:
    """Each person mentioned exists in the organisation and may read the request."""
    if not mentions:
        return
    people = {
        u.username: u
        for u in User.objects.filter(tenant_id=user.member_tenant_id, username__in=mentions)
    }
    for name in mentions:
        if name not in people:
            raise CommentRefused(MENTION_UNKNOWN_CODE, MENTION_UNKNOWN.format(name=name))
    blind = [people[n] for n in mentions if not access.may_read_workflow(people[n], wf)]
    if blind:
        names = [p.get_full_name() or p.username for p in blind]
        listed = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
        them = names[0] if len(names) == 1 else "them"
        raise CommentRefused(
            MENTION_CANNOT_READ_CODE, MENTION_CANNOT_READ.format(names=listed, them=them)
        )
