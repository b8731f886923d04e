"""Handing due activity attempts to whoever runs them, after the command commits.

The command path only writes the outbox row (``ActivityAttempt``); running it is the
workers' business. So the runtime does not import the workers: they register the
function that sends attempts on their way (``attempts_dispatcher_set``, called from
``ApprovalsConfig.ready``), and the runtime calls it after commit. With nothing
registered the attempts wait in the outbox, where the sweeper finds them.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from django.db import transaction

log = logging.getLogger(__name__)

AttemptsDispatcher = Callable[..., None]  # called as dispatcher(attempt_ids=[...])

_dispatcher: AttemptsDispatcher | None = None


def attempts_dispatcher_set(dispatcher: AttemptsDispatcher | None) -> None:
    """Register the function that sends due attempts to the workers (one, replacing
    any registered before)."""
    global _dispatcher
    _dispatcher = dispatcher


def attempts_dispatch_on_commit(*, attempt_ids: list[int]) -> None:
    """Send the attempts once the current transaction commits (at once outside one)."""
    ids = list(attempt_ids)
    transaction.on_commit(lambda: _dispatch(ids))


def _dispatch(attempt_ids: list[int]) -> None:
    if _dispatcher is None:
        log.warning("no activity dispatcher registered; the sweeper will send %s", attempt_ids)
        return
    _dispatcher(attempt_ids=attempt_ids)


# Mail works the same way: the command path writes the outbox rows (notifications.
# messages), the workers register what sends them (notifications.sender).
MailDispatcher = Callable[..., None]  # called as dispatcher(workflow_id=..., seqs=[...])

_mail_dispatcher: MailDispatcher | None = None


def mail_dispatcher_set(dispatcher: MailDispatcher | None) -> None:
    """Register the function that sends a command's mail rows after commit."""
    global _mail_dispatcher
    _mail_dispatcher = dispatcher


def mail_dispatch_on_commit(*, workflow_id: object, seqs: list[int]) -> None:
    """Send the mail rows of these events once the transaction commits; with nothing
    registered they wait for the mail sweeper."""

    def send() -> None:
        if _mail_dispatcher is None:
            log.warning("no mail dispatcher registered; the sweeper will send them")
            return
        _mail_dispatcher(workflow_id=workflow_id, seqs=seqs)

    transaction.on_commit(send)
