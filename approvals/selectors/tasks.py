"""The inbox: a user's open tasks, by due date, with an opaque keyset cursor that stays
correct while tasks are added and removed."""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, NamedTuple, TypeVar

from django.core import signing
from django.db.models import QuerySet

from .. import clock
from ..definitions import definition_for
from ..models import Delegation, PendingTask, Tenant, User, Workflow
from ..runtime import store
from ..words.data import subject_line
from ..words.zones import zone_named
from .standing_in import inbox_holders

CURSOR_SALT = "approvals.inbox.cursor"
# The shape of what signing.dumps gives: [.]payload:timestamp:signature, all URL-safe.
CURSOR_PATTERN = r"^\.?[A-Za-z0-9_\-]+:[A-Za-z0-9]+:[A-Za-z0-9_\-]+$"
_MAX_ID = 2**63 - 1  # the id column is a bigint
BAD_CURSOR = "The cursor is not valid; start again without one."


class BadCursor(ValueError):
    pass


class ListedWorkflow(NamedTuple):
    """What a list of tasks shows of a task's workflow."""

    id: uuid.UUID
    template_key: str
    template_id: int
    subject_type: str
    subject_id: str
    public_status: str
    summary: str
    amount_display: str


class ListedTask(NamedTuple):
    """An open task as the API's list shows it: the ``PendingTask`` fields of
    ``_LISTED``, under the same names, and its workflow's. (A tuple: building a model
    instance of each row cost more than reading the row.)"""

    pk: int
    tenant_id: int
    assignee_id: int
    workflow_id: uuid.UUID
    step: str
    on_behalf_of: str
    due_at: dt.datetime
    created_at: dt.datetime
    workflow: ListedWorkflow
    step_name: str  # the step's title, from the workflow's cached definition
    # The request in the specification's words: its title, reference and amount
    # (``Expense exp_88213, ₹45,000``), from the same definition.
    subject: str


Row = TypeVar("Row", ListedTask, PendingTask)


@dataclass(frozen=True)
class TaskPage(Generic[Row]):
    """A page of the inbox: ``ListedTask`` rows for the API, ``PendingTask`` instances
    for the inbox page, which reads further into each."""

    tasks: list[Row]
    next_cursor: str | None


def _encode(task: ListedTask | PendingTask) -> str:
    return signing.dumps([task.due_at.isoformat(), task.pk], salt=CURSOR_SALT, compress=True)


def _decode(cursor: str) -> tuple[dt.datetime, int]:
    """The (due_at, id) a cursor points after. A cursor signed with our key but holding
    values the query cannot take (an id past bigint, a naive time) is as bad as a forged
    one."""
    try:
        due, pk = signing.loads(cursor, salt=CURSOR_SALT)
        when = dt.datetime.fromisoformat(due)
    except (signing.BadSignature, ValueError, TypeError, OverflowError) as exc:
        raise BadCursor(BAD_CURSOR) from exc
    if isinstance(pk, bool) or not isinstance(pk, int) or not 0 < pk <= _MAX_ID:
        raise BadCursor(BAD_CURSOR)
    if when.tzinfo is None:
        raise BadCursor(BAD_CURSOR)
    return when, pk


# What a list of tasks shows of each: the task and its workflow's subject and status.
# The workflow's snapshot and data, and the template's definition, are the bulk of a
# row; reading them for 50 rows cost three times the rest of the request.
_LISTED = (
    "id",
    "tenant_id",
    "assignee_id",
    "workflow_id",
    "step",
    "on_behalf_of",
    "due_at",
    "created_at",
    "workflow__id",
    "workflow__template_key",
    "workflow__template_id",
    "workflow__subject_type",
    "workflow__subject_id",
    "workflow__public_status",
    # The request's line and amount, projected when its data was set (words/data.py).
    "workflow__summary",
    "workflow__amount_display",
)
# What the inbox page adds: the amount and the other key figures (the data, read
# through the template's schema), the template's title and who asked.
_DETAILED = (
    "workflow__data",
    "workflow__template__id",
    "workflow__template__title",
    "workflow__template__definition",
    "workflow__submitter__id",
    "workflow__submitter__username",
    "workflow__submitter__first_name",
    # who left and handed the task on (the inbox marks it), "" for most tasks
    "handed_on_from",
)


def task_list_for_user(
    *, user: User, limit: int = 50, cursor: str | None = None
) -> TaskPage[ListedTask]:
    """A page of ``user``'s open tasks, as the API lists them."""
    return _page(_listed, user, limit, cursor)


def _page(
    read: Callable[[User, int, tuple[dt.datetime, int] | None], list[Row]],
    user: User,
    limit: int,
    cursor: str | None,
) -> TaskPage[Row]:
    after = _decode(cursor) if cursor else None
    rows = read(user, limit + 1, after)
    has_more = len(rows) > limit
    rows = rows[:limit]
    return TaskPage(rows, _encode(rows[-1]) if has_more and rows else None)


def inbox_tasks(user: User, holders: list[int] | None = None) -> QuerySet[PendingTask]:
    """The tasks the inbox page lists for ``user``, with what it shows of each; the
    page's sorts and filters (selectors.inbox_lists) narrow and order this. ``holders``:
    ``standing_in.inbox_holders(user)`` when the caller has read it already."""
    return (
        # with the tasks of anyone out of office who names ``user`` to decide for them
        PendingTask.objects.filter(
            tenant_id=user.member_tenant_id,
            assignee_id__in=inbox_holders(user) if holders is None else holders,
        )
        .select_related("workflow__template", "workflow__submitter")
        .only(*_LISTED, *_DETAILED)
    )


# The API's list, in plain SQL: it is the busiest read there is, and building it through
# the ORM cost more than running it, as did building a model instance of each row
# (about 37 us a row). The same fields as ``_LISTED``, read into ``ListedTask``.
_TASK_FIELDS = tuple(n for n in _LISTED if not n.startswith("workflow__"))
_WORKFLOW_FIELDS = tuple(
    n.removeprefix("workflow__") for n in _LISTED if n.startswith("workflow__")
)
_STEP = _TASK_FIELDS.index("step")
_BEHALF = _TASK_FIELDS.index("on_behalf_of")
_DUE = _TASK_FIELDS.index("due_at")
# Whose tasks: the person's own (principal ""), and those of each colleague whose
# absence, on now, names the person to decide for them (``standing_in.principals_of``).
_HOLDERS_SQL = (
    "SELECT CAST(%s AS bigint) AS uid, '' AS principal"
    " UNION SELECT d.user_id, p.username"
    f" FROM {store.table(Delegation)} d JOIN {store.table(User)} p ON p.id = d.user_id"
    " WHERE d.tenant_id = %s AND d.delegate_id = %s AND d.starts_at <= %s AND d.ends_at > %s"
)
_COLUMNS = (
    f"{store.columns(PendingTask, 't', _TASK_FIELDS)},"
    f" {store.columns(Workflow, 'w', _WORKFLOW_FIELDS)}, h.principal, z.time_zone"
)
# Each holder's first tasks by the (tenant, assignee, due_at, id) index, then the few
# holders' pages merged: never a sort of all of a person's tasks.
_LIST_SQL = (
    f"SELECT {_COLUMNS} FROM ({_HOLDERS_SQL}) h CROSS JOIN LATERAL ("
    f"SELECT * FROM {store.table(PendingTask)} t"
    " WHERE t.tenant_id = %s AND t.assignee_id = h.uid{after}"
    " ORDER BY t.due_at, t.id LIMIT %s) t"
    f" JOIN {store.table(Workflow)} w ON w.id = t.workflow_id"
    # the organisation's zone, which the answer writes the times in
    f" CROSS JOIN (SELECT time_zone FROM {store.table(Tenant)} WHERE id = %s) z"
    " ORDER BY t.due_at, t.id LIMIT %s"
)
_FIRST_PAGE_SQL = _LIST_SQL.format(after="")
_LATER_PAGE_SQL = _LIST_SQL.format(after=" AND (t.due_at, t.id) > (%s, %s)")


def _listed(user: User, limit: int, after: tuple[dt.datetime, int] | None) -> list[ListedTask]:
    now = store.param(Delegation, "starts_at", clock.now())
    params: list[object] = [user.pk, user.member_tenant_id, user.pk, now, now]
    params.append(user.member_tenant_id)
    if after is not None:
        params += [store.param(PendingTask, "due_at", after[0]), after[1]]
    rows = store.fetch(
        _FIRST_PAGE_SQL if after is None else _LATER_PAGE_SQL,
        # the LIMIT of each holder's page, the organisation, and the merge's LIMIT
        [*params, limit, user.member_tenant_id, limit],
        prepare=True,
    )
    split = len(_TASK_FIELDS)
    task_values = store.converter(PendingTask, _TASK_FIELDS)
    workflow_values = store.converter(Workflow, _WORKFLOW_FIELDS)
    zone = (zone_named(rows[0][-1]) if rows else None) or dt.UTC
    out = []
    for row in rows:
        task = list(task_values(row[:split]))
        workflow = ListedWorkflow._make(workflow_values(row[split:-2]))
        if row[-2]:  # a colleague's task, held while they are away: decided for them
            task[_BEHALF] = row[-2]
        task[_DUE] = task[_DUE].astimezone(zone)
        # Definitions are cached by workflow template version: a dict lookup a row.
        definition = definition_for(workflow.template_id)
        name = definition.step_title(task[_STEP])
        subject = subject_line(
            title=definition.title,
            subject_id=workflow.subject_id,
            amount=workflow.amount_display,
        )
        out.append(ListedTask._make([*task, workflow, name, subject]))
    return out
