"""Who may do what: the one rule module. Pages, the API, the admin and mail links ask
it; no view carries a rule of its own.

People and their roles
    Every user belongs to one organisation (``User.tenant``) and acts only inside it;
    superusers alone cross organisations (in the admin). A role is a Django group of
    the same name, held within the holder's own organisation:

    - everyone: an employee, who submits workflows and decides what is assigned or
      delegated to them;
    - ``finance-admins``: edit their organisation's workflow templates and delegations
      in the admin, and nothing else there;
    - ``auditors``: read every workflow and event of their organisation (pages, API, a
      read-only admin) and change nothing, not even by submitting;
    - ``org-admins``: read every workflow of their organisation, cancel workflows and
      reassign tasks, through the command path;
    - ``integrations``: accounts of other systems. They act through API tokens scoped
      to the workflow templates they may start and the signals they may send.

    ``is_staff`` grants nothing here.

Reading a workflow
    Its participants (submitter, assignees past and present, deciders, the approvers
    delegates acted for: the ``WorkflowParticipant`` read model), someone standing in
    now for one of its current assignees, the organisation's auditors and
    organisation admins, and holders of the workflow template role "see its runs".
    Sending a signal grants nothing.

A workflow template's roles
    django-guardian object permissions (``TemplateRole``) granted to groups and people
    by a finance admin, held on the template's first version so that publishing keeps
    them. Start: a template that names nobody may be started by every member of its
    organisation (as before roles existed); once it names someone, only they (and
    superusers; an integration account starts what its token names). Edit: finance
    admins edit every template that names no editor; once one is named, only the
    finance admins it names (a grant gives no one the finance-admin role). See its runs:
    read every workflow of the template, on any version. Grants count only inside the
    template's own organisation.

Reading a draft
    Its author alone: a request not yet submitted is nobody else's business.

Segregation of duties (the submitter never decides; four eyes across steps) is a rule
of the engine's assignment, in templates_engine; this module does not repeat it.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from django.contrib.auth.models import Permission
from django.contrib.contenttypes.models import ContentType
from django.db.models import BooleanField, Exists, OuterRef, Q, QuerySet
from django.db.models.expressions import RawSQL
from guardian.models import GroupObjectPermission, UserObjectPermission
from guardian.shortcuts import get_objects_for_user

from templates_engine import CommandRejected, Definition

from . import clock
from .models import (
    Delegation,
    Draft,
    PendingTask,
    User,
    Workflow,
    WorkflowParticipant,
    WorkflowTemplate,
)

FORBIDDEN_AUDITOR = "Auditors read; they change nothing."
FORBIDDEN_INTEGRATION_DECIDE = "Integration accounts do not decide approval steps."
FORBIDDEN_START = "You may not start workflows of {template!r}."
FORBIDDEN_START_NOT_NAMED = (
    "You may not start {title}: only the groups and people named under “Who may start "
    "this workflow template” may. Ask a finance admin of your organisation to add you."
)
FORBIDDEN_EDIT_ROLE = "Only finance admins of its organisation may change {title}."
FORBIDDEN_EDIT_NOT_NAMED = (
    "You may not change {title}: only the finance admins named under “Who may edit "
    "this workflow template” may. You can still read it."
)
FORBIDDEN_SIGNAL = "You may not send the signal {name!r} to this workflow."
FORBIDDEN_ATTACH = "Auditors read; they add no files."
FORBIDDEN_CANCEL = "Only the submitter or an organisation admin may cancel."
FORBIDDEN_REASSIGN = "Only an organisation admin may reassign tasks."
FORBIDDEN_DEACTIVATE = "Only an organisation admin may deactivate people."
FORBIDDEN_DEACTIVATE_SUPERUSER = "Only a superuser may deactivate a superuser."
# The directory sync's refusal (services.directory), all or nothing.
SUPERUSER_NOT_DEACTIVATED = (
    "{username!r} is a superuser: the directory sync does not deactivate superusers "
    "(a superuser does it, in the admin)."
)
FORBIDDEN_DELEGATE_TO_ONESELF = (
    "Nobody may make someone else's out-of-office delegation name themselves as the "
    "stand-in: they would then decide that person's steps in their name. Name someone "
    "else, or ask the person (or another admin) to set it."
)
FORBIDDEN_OPERATE = "Only an organisation admin may retry, settle or re-arm a workflow's work."
NO_TENANT = "This account belongs to no organisation."
FORBIDDEN_REASSIGN_SELF = (
    "You may not reassign a task to yourself: whoever moves a task may not be the one "
    "who receives it."
)
FORBIDDEN_ADD_SELF = (
    "You may not add yourself as an approver: whoever adds an approver may not be the "
    "one who approves."
)
CANNOT_HOLD_INACTIVE = "{name}'s account is deactivated, so {name} cannot be given tasks."
CANNOT_HOLD_AUDITOR = (
    "{name} is an auditor: auditors read and change nothing, so {name} cannot be given tasks."
)
CANNOT_HOLD_INTEGRATION = (
    "{name} is the account of another system, which decides no approval steps, so it "
    "cannot be given tasks."
)
# The code of the refusal (CannotHoldTasks) in the API's error envelope.
CANNOT_HOLD_TASKS = "CANNOT_HOLD_TASKS"
FORBIDDEN_AUDIT = "Only auditors and organisation admins may export the audit trail."
FORBIDDEN_ANALYTICS = (
    "Only finance admins, organisation admins and auditors may see how the process performs."
)


class Role(enum.StrEnum):
    FINANCE_ADMIN = "finance-admins"
    AUDITOR = "auditors"
    ORG_ADMIN = "org-admins"
    INTEGRATION = "integrations"


class TemplateRole(enum.StrEnum):
    """A workflow template's roles: django-guardian permission codenames on
    WorkflowTemplate (its first version)."""

    START = "start_workflowtemplate"
    EDIT = "edit_workflowtemplate"
    VIEW_RUNS = "view_workflowtemplate_runs"


# Who may send a signal when its step names no ``senders``.
DEFAULT_SIGNAL_SENDERS: tuple[Mapping[str, str], ...] = (
    {"role": Role.INTEGRATION},
    {"role": Role.ORG_ADMIN},
)


class Forbidden(PermissionError):
    """The caller may see the thing but not do this to it (403)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class Scope(Protocol):
    """What an API token allows, on top of its user's rights; None means no limit
    for a person's token. An integration account's token must name what it allows."""

    may_start: list[str] | None
    may_signal: list[str] | None


_ROLES_ATTR = "_approvals_roles"


def roles_of(user: Any) -> frozenset[str]:
    """The user's roles, read once per request (cached on the user object)."""
    cached = getattr(user, _ROLES_ATTR, None)
    if cached is None:
        if not getattr(user, "is_authenticated", False) or not user.is_active:
            cached = frozenset()
        else:
            names = user.groups.filter(name__in=[r.value for r in Role]).values_list(
                "name", flat=True
            )
            cached = frozenset(names)
        setattr(user, _ROLES_ATTR, cached)
    return cached


def roles_known(user: Any, names: Iterable[str]) -> None:
    """Prime the cache of ``roles_of`` with the group names a query already read (the
    token lookup reads them with the token, so a request asks for them no more)."""
    wanted = {r.value for r in Role}
    setattr(user, _ROLES_ATTR, frozenset(n for n in names if n in wanted))


def has_role(user: Any, role: Role) -> bool:
    return role.value in roles_of(user)


def is_member(user: Any) -> bool:
    """Signed in, active, and in an organisation."""
    return bool(
        getattr(user, "is_authenticated", False)
        and user.is_active
        and getattr(user, "tenant_id", None) is not None
    )


def _read_only(user: User) -> bool:
    return has_role(user, Role.AUDITOR) and not user.is_superuser


def reads_everything(user: User) -> bool:
    """Auditors, organisation admins and superusers read every workflow of their
    organisation."""
    return user.is_superuser or bool(roles_of(user) & {Role.AUDITOR, Role.ORG_ADMIN})


# -- reading -------------------------------------------------------------------------


def workflows_readable(user: User) -> QuerySet[Workflow]:
    """The workflows of the user's organisation the user may read: the set
    ``may_read_workflow`` answers one at a time (participants, a stand-in for a current
    assignee, holders of ``view_workflowtemplate`` on the workflow template)."""
    qs = Workflow.objects.filter(tenant_id=user.member_tenant_id)
    if reads_everything(user):
        return qs
    mine = WorkflowParticipant.objects.filter(
        tenant_id=user.member_tenant_id, user=user, workflow_id=OuterRef("pk")
    )
    absent = _absent_now(user, user.member_tenant_id)
    standing_in = PendingTask.objects.filter(workflow_id=OuterRef("pk"), assignee_id__in=absent)
    granted = _templates_granted(user).values("key")
    return qs.filter(Exists(mine) | Exists(standing_in) | Q(template_key__in=granted))


def _templates_granted(user: User) -> QuerySet[WorkflowTemplate]:
    """The first versions of the organisation's workflow templates whose every workflow
    the user may read (the role "see its runs", to them or one of their groups)."""
    tenant = user.member_tenant_id
    earlier = WorkflowTemplate.objects.filter(
        tenant_id=tenant, key=OuterRef("key"), version__lt=OuterRef("version")
    )
    return get_objects_for_user(
        user,
        f"approvals.{TemplateRole.VIEW_RUNS}",
        klass=WorkflowTemplate.objects.filter(tenant_id=tenant).filter(~Exists(earlier)),
        accept_global_perms=False,
    )


# Up to this many workflows a person reads from their own side are passed as values.
OWN_LISTED_MAX = 5000


def workflows_readable_from_own(user: User) -> QuerySet[Workflow]:
    """``workflows_readable``, asked from the person's side when that side is small (see
    ``own_workflow_ids``): the same set, as the workflows of those ids."""
    ids = own_workflow_ids(user)
    return workflows_readable(user) if ids is None else workflows_of_ids(user, ids)


def own_workflow_ids(user: User) -> list[Any] | None:
    """For someone who reads through taking part and standing in alone (no
    template-wide grant), the ids of the workflows they may read: their participations,
    and the open tasks of the people they stand in for now, each through its index.
    None for those who read everything or hold a grant, or past ``OWN_LISTED_MAX``.
    A common word matches tens of thousands of workflows, and checking the read rule on
    each took seconds (issue 21); the rows a person takes part in are a few hundred."""
    if reads_everything(user) or _templates_granted(user).exists():
        return None
    tenant = user.member_tenant_id
    absent = _absent_now(user, tenant)
    mine = WorkflowParticipant.objects.filter(tenant_id=tenant, user=user).values("workflow_id")
    standing_in = PendingTask.objects.filter(tenant_id=tenant, assignee_id__in=absent).values(
        "workflow_id"
    )
    ids = mine.union(standing_in).values_list("workflow_id", flat=True)
    listed = list(ids[: OWN_LISTED_MAX + 1])
    return None if len(listed) > OWN_LISTED_MAX else listed


def workflows_of_ids(user: User, ids: list[Any]) -> QuerySet[Workflow]:
    """The workflows of the user's organisation with these ids. The ids are one array
    (one parameter), an index the planner combines with a search's text index in a
    BitmapAnd, so only the rows both hold are read."""
    qs = Workflow.objects.filter(tenant_id=user.member_tenant_id)
    listed = RawSQL('"approvals_workflow"."id" = ANY(%s::uuid[])', [ids], BooleanField())
    return qs.filter(listed)


def workflow_readable(user: User, workflow_id: Any) -> Workflow | None:
    """The workflow of the user's organisation if the user may read it (None
    otherwise, or when there is none), fetched with whether the user takes part in it
    in the same query, so the read rule asks nothing more of a participant."""
    readable = workflow_read(user, workflow_id)
    return readable.workflow if readable is not None else None


@dataclass(frozen=True, slots=True)
class ReadableWorkflow:
    """The read rule's answer for one request: ``user`` may read ``workflow``. A request
    asks the rule once (``workflow_read``, ``readable_of``) and hands this down; the
    layers below (services, the command path's lock) take it instead of asking again."""

    user: User
    workflow: Workflow

    def is_for(self, user: User, workflow_id: Any) -> bool:
        """Whether this answers ``user`` reading ``workflow_id``."""
        return self.user.pk == user.pk and str(self.workflow.pk) == str(workflow_id)


def workflow_read(
    user: User, workflow_id: Any, *, related: Sequence[str] = ()
) -> ReadableWorkflow | None:
    """``workflow_readable``, as the answer a request carries down; ``related``: the
    workflow's relations the caller reads (``select_related``)."""
    mine = WorkflowParticipant.objects.filter(workflow_id=OuterRef("pk"), user_id=user.pk)
    rows = Workflow.objects.filter(tenant_id=user.member_tenant_id, pk=workflow_id)
    if related:
        rows = rows.select_related(*related)
    wf = rows.annotate(takes_part=Exists(mine)).first()
    if wf is None:
        return None
    facts = ReadFacts(takes_part=bool(getattr(wf, "takes_part")))  # noqa: B009
    return readable_of(user, wf, facts)


def readable_of(
    user: User, wf: Workflow, facts: ReadFacts | None = None
) -> ReadableWorkflow | None:
    """The read rule asked of a workflow already read (``facts``: what was read with
    it): the answer to carry down, or None."""
    return ReadableWorkflow(user, wf) if may_read_workflow(user, wf, facts or UNREAD) else None


@dataclass(frozen=True)
class ReadFacts:
    """What the read rule needs to know of one person and one workflow besides the
    person's roles, as already read with the workflow (None: not read, asked when
    needed): whether they take part, whether they stand in right now for one of its
    assignees, and whether they hold view permission on its workflow template."""

    takes_part: bool | None = None
    stands_in_now: bool | None = None
    holds_template_view: bool | None = None


UNREAD = ReadFacts()

# guardian's tables are shared by every organisation (no tenant column, no row-level
# security): a grant names a template version's id, and the tenant that counts is the
# template's, which every rule compares with the person's.
_TEMPLATES = WorkflowTemplate._meta.db_table
_PERMS = Permission._meta.db_table


def _first_version_pk(tenant: str, key: str) -> str:
    """SQL: the id (as guardian's text ``object_pk``) of the first version of the
    workflow template ``key`` of ``tenant`` (two column expressions)."""
    return (
        f"(SELECT CAST(f.id AS TEXT) FROM {_TEMPLATES} f WHERE f.tenant_id = {tenant}"
        f" AND f.key = {key} ORDER BY f.version LIMIT 1)"
    )


def _holds_sql(object_pk: str) -> str:
    """SQL: the person holds the role on ``object_pk``, themselves or through a group.
    Parameters: user id, content type, codename, user id, content type, codename."""
    return (
        f"(EXISTS (SELECT 1 FROM {UserObjectPermission._meta.db_table} up"
        f"  JOIN {_PERMS} pm ON pm.id = up.permission_id"
        "  WHERE up.user_id = %s AND up.content_type_id = %s AND pm.codename = %s"
        f"  AND up.object_pk = {object_pk})"
        f" OR EXISTS (SELECT 1 FROM {GroupObjectPermission._meta.db_table} gp"
        f"  JOIN {_PERMS} pm ON pm.id = gp.permission_id"
        f"  JOIN {User.groups.through._meta.db_table} ug ON ug.group_id = gp.group_id"
        "  WHERE ug.user_id = %s AND gp.content_type_id = %s AND pm.codename = %s"
        f"  AND gp.object_pk = {object_pk}))"
    )


def _named_sql(object_pk: str) -> str:
    """SQL: anyone (a person or a group) holds the role on ``object_pk``.
    Parameters: content type, codename, content type, codename."""
    return (
        f"(EXISTS (SELECT 1 FROM {UserObjectPermission._meta.db_table} up"
        f"  JOIN {_PERMS} pm ON pm.id = up.permission_id"
        "  WHERE up.content_type_id = %s AND pm.codename = %s"
        f"  AND up.object_pk = {object_pk})"
        f" OR EXISTS (SELECT 1 FROM {GroupObjectPermission._meta.db_table} gp"
        f"  JOIN {_PERMS} pm ON pm.id = gp.permission_id"
        "  WHERE gp.content_type_id = %s AND pm.codename = %s"
        f"  AND gp.object_pk = {object_pk}))"
    )


def _template_ct() -> int:
    return int(ContentType.objects.get_for_model(WorkflowTemplate).pk)  # cached by Django


# The three facts as columns of a query that reads the workflow as ``w`` (the command
# path's lock composes them: one round trip); ``read_facts_params`` gives their values.
READ_FACTS_SQL = (
    f"EXISTS (SELECT 1 FROM {WorkflowParticipant._meta.db_table} p"
    "  WHERE p.workflow_id = w.id AND p.user_id = %s),"
    f" EXISTS (SELECT 1 FROM {PendingTask._meta.db_table} t"
    f"  JOIN {Delegation._meta.db_table} d ON d.user_id = t.assignee_id"
    "  WHERE t.workflow_id = w.id AND d.delegate_id = %s"
    "  AND d.starts_at <= %s AND d.ends_at > %s), "
    + _holds_sql(_first_version_pk("w.tenant_id", "w.template_key"))
)
READ_FACTS_COLUMNS = 3


def read_facts_params(user: User | None, now: Any) -> list[Any]:
    """The parameters of ``READ_FACTS_SQL`` for ``user`` at ``now``."""
    user_id = user.pk if user is not None else None
    ct, view = _template_ct(), TemplateRole.VIEW_RUNS.value
    return [*(user_id, user_id, now, now), *(user_id, ct, view, user_id, ct, view)]


# The start's facts as columns of a query that reads the newest version of the
# workflow template as ``t`` (the start's first round trip composes them): whether the
# template names anyone who may start it, and whether the person is one of them.
START_FACTS_SQL = (
    _named_sql(_first_version_pk("t.tenant_id", "t.key"))
    + ", "
    + _holds_sql(_first_version_pk("t.tenant_id", "t.key"))
)
START_FACTS_COLUMNS = 2


def start_facts_params(user: User) -> list[Any]:
    """The parameters of ``START_FACTS_SQL`` for ``user``."""
    ct, start = _template_ct(), TemplateRole.START.value
    return [ct, start, ct, start, user.pk, ct, start, user.pk, ct, start]


@dataclass(frozen=True)
class RoleFacts:
    """Of one workflow template and one role: does the template name anyone for it,
    and is the person one of them (themselves or through a group)."""

    named: bool
    holds: bool


def role_facts_of(values: Sequence[Any]) -> RoleFacts:
    named, holds = (bool(v) for v in values)
    return RoleFacts(named, holds)


def role_facts(
    user: User, tenant_id: int, keys: Iterable[str], role: TemplateRole
) -> dict[str, RoleFacts]:
    """``RoleFacts`` of each workflow template of ``keys`` of the organisation
    ``tenant_id`` for ``role``, in three queries whatever the number of keys."""
    keys = list(dict.fromkeys(keys))
    firsts = dict(
        WorkflowTemplate.objects.filter(tenant_id=tenant_id, key__in=keys)
        .order_by("key", "version")
        .distinct("key")
        .values_list("key", "pk")
    )
    pks = [str(pk) for pk in firsts.values()]
    ct = _template_ct()
    people = UserObjectPermission.objects.filter(
        content_type_id=ct, permission__codename=role.value, object_pk__in=pks
    ).values_list("object_pk", "user_id")
    groups = GroupObjectPermission.objects.filter(
        content_type_id=ct, permission__codename=role.value, object_pk__in=pks
    ).values_list("object_pk", "group_id")
    named: set[str] = set()
    held: set[str] = set()
    mine = set(user.groups.values_list("pk", flat=True)) if user.pk else set()
    for pk, person in people:
        named.add(pk)
        if person == user.pk:
            held.add(pk)
    for pk, group in groups:
        named.add(pk)
        if group in mine:
            held.add(pk)
    out = {}
    for key in keys:
        pk = str(firsts[key]) if key in firsts else ""
        out[key] = RoleFacts(named=pk in named, holds=pk in held)
    return out


def read_facts_of(values: Sequence[Any]) -> ReadFacts:
    """The ``READ_FACTS_COLUMNS`` values a query read, as ReadFacts."""
    takes_part, stands_in_now, holds_view = (bool(v) for v in values)
    return ReadFacts(takes_part, stands_in_now, holds_view)


def may_read_workflow(user: User, wf: Workflow, facts: ReadFacts = UNREAD) -> bool:
    """The read rule: members of the workflow's organisation who read everything
    (auditors, organisation admins), take part in it, stand in now for one of its
    assignees, or hold the role "see its runs" of its workflow template. ``facts`` are
    what a
    query already read with the workflow; what it did not read is asked here, in turn."""
    if not is_member(user) or wf.tenant_id != user.tenant_id:
        return False
    if reads_everything(user):
        return True
    if facts.takes_part if facts.takes_part is not None else _takes_part(user, wf):
        return True
    if facts.stands_in_now if facts.stands_in_now is not None else _stands_in_now(user, wf):
        return True
    if facts.holds_template_view is not None:
        return facts.holds_template_view
    return role_facts(user, wf.tenant_id, [wf.template_key], TemplateRole.VIEW_RUNS)[
        wf.template_key
    ].holds


def _takes_part(user: User, wf: Workflow) -> bool:
    return WorkflowParticipant.objects.filter(workflow_id=wf.pk, user=user).exists()


def _stands_in_now(user: User, wf: Workflow) -> bool:
    """True when the user is, right now, the out-of-office delegate of one of the
    workflow's current assignees (who may then decide on their behalf)."""
    absent = _absent_now(user, wf.tenant_id)
    return PendingTask.objects.filter(workflow_id=wf.pk, assignee_id__in=absent).exists()


def _absent_now(user: User, tenant_id: int) -> QuerySet[Delegation, Any]:
    """The ids of the people of the organisation the user stands in for right now."""
    now = clock.now()
    return Delegation.objects.filter(
        tenant_id=tenant_id, delegate=user, starts_at__lte=now, ends_at__gt=now
    ).values("user_id")


def drafts_readable(user: User) -> QuerySet[Draft]:
    """The drafts ``user`` may read: their own, in their own organisation. A draft is
    nobody else's business (not an auditor's, not an admin's) until it is submitted."""
    if not is_member(user):
        return Draft.objects.none()
    return Draft.objects.filter(tenant_id=user.member_tenant_id, author_id=user.pk)


def may_read_draft(user: User, draft: Draft) -> bool:
    """The read rule of a draft: its author alone (who may also change, delete and
    submit it)."""
    return is_member(user) and draft.tenant_id == user.tenant_id and draft.author_id == user.pk


def may_audit(user: Any) -> bool:
    """May ``user`` export their organisation's whole history (the audit export)?
    Auditors, organisation admins and superusers, each for their own organisation."""
    return is_member(user) and reads_everything(user)


def check_may_audit(user: Any) -> None:
    if not may_audit(user):
        raise Forbidden(FORBIDDEN_AUDIT)


def may_analyse(user: Any) -> bool:
    """May ``user`` see their organisation's process analytics (volumes, waits,
    breaches)? Finance admins, organisation admins and auditors of an organisation,
    and superusers who belong to one."""
    analysts = {Role.FINANCE_ADMIN, Role.ORG_ADMIN, Role.AUDITOR}
    return is_member(user) and bool(user.is_superuser or roles_of(user) & analysts)


# -- acting ----------------------------------------------------------------------------


def check_may_start_at_all(user: User, template_key: str, scope: Scope | None = None) -> None:
    """The part of the start rule that needs no query: auditors start nothing, and a
    token starts only what it names. ``check_may_start_named`` is the rest."""
    if _read_only(user):
        raise Forbidden(FORBIDDEN_AUDITOR)
    if not _scope_allows(user, scope, "may_start", template_key):
        raise Forbidden(FORBIDDEN_START.format(template=template_key))


def may_start_named(user: User, facts: RoleFacts) -> bool:
    """The start role: a workflow template that names nobody may be started by every
    member of its organisation; one that names someone, by them alone (and superusers).
    An integration account starts what its token names (``_scope_allows``)."""
    if not facts.named or facts.holds or user.is_superuser:
        return True
    return has_role(user, Role.INTEGRATION)


def check_may_start_named(user: User, title: str, facts: RoleFacts) -> None:
    if not may_start_named(user, facts):
        raise Forbidden(FORBIDDEN_START_NOT_NAMED.format(title=title))


def check_may_start(user: User, template_key: str, scope: Scope | None = None) -> None:
    """The whole start rule, asking the database for the template's start role (a
    start asks it in its own first round trip instead: ``START_FACTS_SQL``)."""
    check_may_start_at_all(user, template_key, scope)
    tenant = user.member_tenant_id
    facts = role_facts(user, tenant, [template_key], TemplateRole.START)[template_key]
    if not may_start_named(user, facts):
        latest = (
            WorkflowTemplate.objects.filter(tenant_id=tenant, key=template_key)
            .order_by("-version")
            .values_list("title", flat=True)
            .first()
        )
        raise Forbidden(FORBIDDEN_START_NOT_NAMED.format(title=latest or template_key))


def templates_startable(
    user: User, templates: Sequence[WorkflowTemplate], scope: Scope | None = None
) -> list[WorkflowTemplate]:
    """Those of the organisation's ``templates`` (newest versions) ``user`` may start:
    the new-request form's list and the API's. Three queries whatever their number."""
    if not is_member(user):
        return []
    allowed = [t for t in templates if may_start_at_all(user, t.key, scope)]
    facts = role_facts(user, user.member_tenant_id, [t.key for t in allowed], TemplateRole.START)
    return [t for t in allowed if may_start_named(user, facts[t.key])]


def may_start_at_all(user: User, template_key: str, scope: Scope | None = None) -> bool:
    """``check_may_start_at_all`` as a yes or no."""
    try:
        check_may_start_at_all(user, template_key, scope)
    except Forbidden:
        return False
    return True


def may_submit(user: Any) -> bool:
    """May ``user`` submit requests at all (the navigation's New request)? Everyone but
    auditors, who read and change nothing."""
    return not _read_only(user)


def may_hold_tasks(user: Any) -> bool:
    """Does the navigation offer ``user`` an inbox and Out of office? Everyone of an
    organisation who may be given a task (``task_holder_refusal``): not auditors, who
    read and change nothing, nor integration accounts."""
    return is_member(user) and task_holder_refusal(user) is None


def may_administer(user: Any) -> bool:
    """Does the navigation offer ``user`` the Administration link? Finance admins and
    organisation admins of an organisation, and superusers."""
    if not getattr(user, "is_authenticated", False) or not user.is_active:
        return False
    admins = {Role.FINANCE_ADMIN, Role.ORG_ADMIN}
    return bool(user.is_superuser or (is_member(user) and roles_of(user) & admins))


def may_start(user: User, template_key: str, scope: Scope | None = None) -> bool:
    try:
        check_may_start(user, template_key, scope)
    except (Forbidden, PermissionError):
        return False
    return True


def may_see_runs(user: User, template: WorkflowTemplate) -> bool:
    """Does ``user`` read every workflow of ``template`` (any version)? Those who read
    everything of its organisation, and holders of its role "see its runs"."""
    if not is_member(user) or template.tenant_id != user.tenant_id:
        return False
    if reads_everything(user):
        return True
    facts = role_facts(user, template.tenant_id, [template.key], TemplateRole.VIEW_RUNS)
    return facts[template.key].holds


def templates_runs_seen(user: User, templates: Sequence[WorkflowTemplate]) -> set[str]:
    """The keys of those of ``templates`` (of the user's organisation) whose every
    workflow ``user`` reads: ``may_see_runs`` for a list, in three queries."""
    if not is_member(user):
        return set()
    keys = [t.key for t in templates if t.tenant_id == user.tenant_id]
    if reads_everything(user):
        return set(keys)
    facts = role_facts(user, user.member_tenant_id, keys, TemplateRole.VIEW_RUNS)
    return {key for key, fact in facts.items() if fact.holds}


def edit_refusal(user: Any, template: WorkflowTemplate) -> str | None:
    """Why ``user`` may not change ``template`` (publish, draft, retire, roll back, name
    who holds its roles), or None when they may: finance admins of its organisation,
    all of them while it names no editor, else those it names; superusers."""
    title = template.title or template.key
    if not admin_may(user, "change", "workflowtemplate"):
        return FORBIDDEN_EDIT_ROLE.format(title=title)
    if user.is_superuser:
        return None
    if not is_member(user) or template.tenant_id != user.tenant_id:
        return FORBIDDEN_EDIT_ROLE.format(title=title)
    facts = role_facts(user, template.tenant_id, [template.key], TemplateRole.EDIT)
    if not facts[template.key].named or facts[template.key].holds:
        return None
    return FORBIDDEN_EDIT_NOT_NAMED.format(title=title)


def may_edit_template(user: Any, template: WorkflowTemplate) -> bool:
    return edit_refusal(user, template) is None


def check_may_decide(user: User) -> None:
    """May this account decide steps at all? Which steps are theirs, and segregation of
    duties, are the engine's answer."""
    if _read_only(user):
        raise Forbidden(FORBIDDEN_AUDITOR)
    if has_role(user, Role.INTEGRATION) and not user.is_superuser:
        raise Forbidden(FORBIDDEN_INTEGRATION_DECIDE)


def signal_senders(definition: Definition, name: str) -> tuple[Mapping[str, str], ...]:
    """The sender rules of the steps awaiting the signal ``name``; the default when
    the steps name none."""
    rules: list[Mapping[str, str]] = []
    found = False
    for step in definition.steps:
        if getattr(step, "signal", None) == name:
            found = True
            rules.extend(getattr(step, "senders", None) or DEFAULT_SIGNAL_SENDERS)
    return tuple(rules) if found else DEFAULT_SIGNAL_SENDERS


def may_signal(user: User, definition: Definition, name: str, scope: Scope | None = None) -> bool:
    if not is_member(user) or _read_only(user):
        return False
    if not _scope_allows(user, scope, "may_signal", name):
        return False
    return _matches(user, signal_senders(definition, name))


def _matches(user: User, rules: Iterable[Mapping[str, str]]) -> bool:
    if user.is_superuser:
        return True
    roles = roles_of(user)
    return any(rule.get("user") == user.username or rule.get("role") in roles for rule in rules)


def may_attach(readable: ReadableWorkflow) -> bool:
    """May the reader add a file to the request the read rule let them read? Whoever
    may read it (the submitter, the approvers, their stand-ins, holders of the
    template's view), except auditors, who change nothing."""
    return not _read_only(readable.user)


def check_may_attach(user: User) -> None:
    """``may_attach`` for a request ``user`` is known to read: raises Forbidden for an
    auditor."""
    if _read_only(user):
        raise Forbidden(FORBIDDEN_ATTACH)


def may_cancel(user: User, wf: Workflow) -> bool:
    if not is_member(user) or _read_only(user) or wf.tenant_id != user.tenant_id:
        return False
    return user.is_superuser or has_role(user, Role.ORG_ADMIN) or wf.submitter_id == user.pk


def check_may_comment(user: User, wf: Workflow) -> None:
    """May ``user`` write on the request's conversation? Anyone who may read it, except
    auditors (they change nothing, and a comment is a change to the history). Raises
    Forbidden; whether they may read at all is asked first (``may_read_workflow``)."""
    if _read_only(user):
        raise Forbidden(FORBIDDEN_AUDITOR)


def may_comment(readable: ReadableWorkflow) -> bool:
    """May the reader write on the conversation of the request the read rule let them
    read (``check_may_comment``)?"""
    try:
        check_may_comment(readable.user, readable.workflow)
    except Forbidden:
        return False
    return True


def may_withdraw(user: User, wf: Workflow) -> bool:
    """The submitter withdraws their own request while it runs (the cancel path)."""
    return wf.status == "RUNNING" and wf.submitter_id == user.pk and may_cancel(user, wf)


def may_set_outbound_hosts(user: Any, tenant_id: int | None = None) -> bool:
    """Setting which hosts workflow templates may call (``Tenant.outbound_hosts``):
    organisation admins, for their own organisation (any, when ``tenant_id`` is None:
    may they open the page at all); superusers."""
    if not may_use_admin(user):
        return False
    if user.is_superuser:
        return True
    own = tenant_id is None or tenant_id == user.tenant_id
    return is_member(user) and has_role(user, Role.ORG_ADMIN) and own


def may_reassign(user: User, wf: Workflow) -> bool:
    if not is_member(user) or wf.tenant_id != user.tenant_id:
        return False
    return user.is_superuser or has_role(user, Role.ORG_ADMIN)


def check_may_reassign_to(user: User, receiver: str) -> None:
    """Segregation of duties for a reassignment: whoever moves a task may not be the
    one who receives it (an organisation admin would otherwise hand herself a task and
    approve it)."""
    if receiver == user.username:
        raise Forbidden(FORBIDDEN_REASSIGN_SELF)


# -- who may be given tasks --------------------------------------------------------------


class CannotHoldTasks(CommandRejected):
    """The person named may never be given a task; nothing happened."""

    def __init__(self, message: str) -> None:
        super().__init__(CANNOT_HOLD_TASKS, message)


def task_holder_refusal(person: User) -> str | None:
    """Why ``person`` may never be given a task (as a delegate, an out-of-office
    stand-in, a reassignee or an approver a workflow template names), or None when they
    may: a deactivated person, an auditor and an integration account can never act on
    one."""
    name = person.get_full_name() or person.username
    if not person.is_active:
        return CANNOT_HOLD_INACTIVE.format(name=name)
    roles = roles_of(person)
    if Role.INTEGRATION in roles:
        return CANNOT_HOLD_INTEGRATION.format(name=name)
    if Role.AUDITOR in roles and not person.is_superuser:
        return CANNOT_HOLD_AUDITOR.format(name=name)
    return None


def approver_candidates(tenant_id: int) -> Any:
    """The people of the organisation a picker offers as an approver, a stand-in or a
    reassignee: those ``task_holder_refusal`` lets hold a task, without the
    deployment's operators (superusers), who run the system rather than approve in it.
    A queryset, so a picker can search it by name."""
    cannot = [Role.INTEGRATION.value, Role.AUDITOR.value]
    return (
        User.objects.filter(tenant_id=tenant_id, is_active=True, is_superuser=False)
        .exclude(groups__name__in=cannot)
        .distinct()
    )


def check_may_hold_tasks(person: User) -> None:
    """Raise CannotHoldTasks with ``task_holder_refusal``'s sentence."""
    reason = task_holder_refusal(person)
    if reason is not None:
        raise CannotHoldTasks(reason)


def check_may_hold_tasks_named(tenant_id: int, username: str) -> None:
    """``check_may_hold_tasks`` for the person of the organisation called
    ``username``; nobody by that name is left for the engine to refuse in its words."""
    person = User.objects.filter(tenant_id=tenant_id, username=username).first()
    if person is not None:
        check_may_hold_tasks(person)


def may_operate(user: User, wf: Workflow) -> bool:
    """Retry a failed step or undo, settle an undo by hand, re-arm a parked timer:
    organisation admins of the workflow's organisation; superusers."""
    if user.is_superuser:
        return True
    return has_role(user, Role.ORG_ADMIN) and user.tenant_id == wf.tenant_id


def may_set_retention(user: Any) -> bool:
    """May ``user`` set their organisation's retention and live window (the admin's
    "Retention and archive")? Organisation admins and finance admins, of their own
    organisation (a superuser only as a member of one)."""
    if not is_member(user):
        return False
    return bool(user.is_superuser or roles_of(user) & {Role.ORG_ADMIN, Role.FINANCE_ADMIN})


def may_deactivate_people(user: User) -> bool:
    """May ``user`` deactivate anyone at all? Asked before the person is looked up, so
    the answer tells someone who may not which colleagues exist."""
    return bool(user.is_superuser or (is_member(user) and has_role(user, Role.ORG_ADMIN)))


def may_deactivate(user: User | None, person: User) -> bool:
    """Deactivating someone (their tasks are handed on, their tokens revoked):
    organisation admins of the person's organisation, never themselves nor a superuser
    (an admin must not lock out whoever oversees her); superusers, anyone but
    themselves. ``user`` None is the directory sync, run for one organisation: its
    people, never a superuser."""
    if user is None:
        return not person.is_superuser
    if user.pk == person.pk:
        return False
    if user.is_superuser:
        return True
    if person.is_superuser or not is_member(user):
        return False
    return has_role(user, Role.ORG_ADMIN) and user.tenant_id == person.tenant_id


def deactivation_refusal(user: User, person: User) -> str | None:
    """Why ``user`` may not deactivate ``person`` (None: they may)."""
    if may_deactivate(user, person):
        return None
    if person.is_superuser and user.pk != person.pk:
        return FORBIDDEN_DEACTIVATE_SUPERUSER
    return FORBIDDEN_DEACTIVATE


def may_delegate_for(maker: User, user: User, delegate: User) -> bool:
    """May ``maker`` make (or change) ``user``'s out-of-office delegation to
    ``delegate``? Their own, to anyone the delegation rules allow; someone else's
    (a finance admin in the admin, a superuser) only to a third person: nobody gives
    themselves another's tasks to decide "on behalf of" them."""
    return maker.pk == user.pk or maker.pk != delegate.pk


def _scope_allows(user: User, scope: Scope | None, field: str, value: str) -> bool:
    allowed: Sequence[str] | None = getattr(scope, field, None) if scope is not None else None
    if allowed is None:
        # A person's session or unscoped token: their own rights. An integration
        # account acts only within what its token names.
        return not has_role(user, Role.INTEGRATION)
    return value in allowed


# -- the admin -------------------------------------------------------------------------

# What each role may do in the admin, by model name; superusers may do everything.
ADMIN_RIGHTS: dict[str, dict[str, frozenset[str]]] = {
    Role.FINANCE_ADMIN: {
        "workflowtemplate": frozenset({"view", "add", "change"}),
        "delegation": frozenset({"view", "add", "change", "delete"}),
        "startschedule": frozenset({"view", "add", "change", "delete"}),
        "exchangerate": frozenset({"view", "add", "change", "delete"}),
        "department": frozenset({"view", "add", "change", "delete"}),
    },
    # Organisation admins read the work and act on it only through the operations
    # pages (admin/operation_pages.py), which go through the command path; never by editing
    # rows. They keep the organisation's list of departments.
    Role.ORG_ADMIN: {
        **{
            model: frozenset({"view"})
            for model in ("workflow", "workflowevent", "pendingtask", "timer", "activityattempt")
        },
        "department": frozenset({"view", "add", "change", "delete"}),
    },
    Role.AUDITOR: {
        model: frozenset({"view"})
        for model in (
            "workflowtemplate",
            "workflow",
            "workflowevent",
            "pendingtask",
            "timer",
            "activityattempt",
            "delegation",
            "startschedule",
            "exchangerate",
            "department",
        )
    },
}


def may_use_admin(user: Any) -> bool:
    if not getattr(user, "is_authenticated", False) or not user.is_active:
        return False
    return user.is_superuser or (is_member(user) and bool(roles_of(user) & set(ADMIN_RIGHTS)))


def admin_may(user: Any, action: str, model_name: str) -> bool:
    """May ``user`` do ``action`` (view, add, change, delete) on ``model_name`` rows
    of their own organisation in the admin?"""
    if not may_use_admin(user):
        return False
    if user.is_superuser:
        return True
    return any(
        action in ADMIN_RIGHTS.get(role, {}).get(model_name, frozenset()) for role in roles_of(user)
    )


def admin_scope(user: Any, qs: QuerySet[Any]) -> QuerySet[Any]:
    """Rows of the user's own organisation (every row for a superuser)."""
    if user.is_superuser:
        return qs
    if not is_member(user):
        return qs.none()
    return qs.filter(tenant_id=user.tenant_id)
