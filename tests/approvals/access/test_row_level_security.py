"""Row-level security (migration 0035, approvals/runtime/tenant_scope.py): a query that
forgets its tenant filter, acting for one organisation, finds none of another's rows;
the database refuses a write of another's row; the app role with no tenant set sees
nothing; the cross-tenant role sees all. The tests connect as a superuser (which the
policies do not hold) and switch roles inside the test's transaction, as the app does.
"""

from __future__ import annotations

import uuid
from typing import Any

import psycopg
import pytest
from axes.models import AccessAttempt
from django.contrib.admin.models import CHANGE, LogEntry
from django.contrib.auth.models import Group
from django.contrib.contenttypes.models import ContentType
from django.db import DatabaseError, connection, transaction
from django.http import HttpRequest, JsonResponse
from django.test import Client
from django.urls import include, path

from approvals.models import PendingTask, User, Workflow, WorkflowEvent
from approvals.runtime import tenant_scope
from approvals.runtime.commands import command_execute
from approvals.services.tokens import token_issue
from approvals.services.workflows import workflow_start
from approvals.sql import TENANT_ISOLATION, TENANT_TABLES_SQL
from templates_engine import commands as cmd

from ..helpers import EXPENSE, second_organisation

pytestmark = [
    pytest.mark.django_db,
]

THROUGH_PARENT = {"approvals_apitoken", "notifications_notificationpreference"}
THROUGH_PARENT |= {"approvals_orggroup_members"}


def _unfiltered(request: HttpRequest) -> JsonResponse:
    """A read that forgets its tenant filter, as a page might by mistake."""
    tenants = sorted({t for t in Workflow.objects.values_list("tenant_id", flat=True)})
    return JsonResponse({"tenants": tenants, "workflows": Workflow.objects.count()})


def _session_probe(request: HttpRequest) -> JsonResponse:
    """A read that asks for the session, as the messages of a page may."""
    return JsonResponse({"keys": len(list(request.session.keys()))})


# The app's pages plus the probes: ``pytest.mark.urls(__name__)``.
urlpatterns = [
    path("rls-probe", _unfiltered),
    path("rls-session-probe", _session_probe),
    path("", include("config.urls")),
]


def _rows(sql: str, params: list[Any] | None = None) -> list[tuple[Any, ...]]:
    with connection.cursor() as cursor:
        cursor.execute(sql, params or [])
        return list(cursor.fetchall()) if cursor.description else []


def _tenant_tables() -> list[str]:
    return [name for (name,) in _rows(TENANT_TABLES_SQL)]


@pytest.fixture
def two(acme: Any) -> dict[str, Any]:
    """Acme (the demo: alice's expense waits for bob, so it has a task) and Globex
    (gina's vendor onboarding waits for a signal), both started through the command
    path."""
    globex, g = second_organisation()
    alice = User.objects.get(username="alice")
    data = {"amountPaise": 4_500_000, "currency": "INR", "department": "eng"}
    a = workflow_start(
        submitter=alice, template_key=EXPENSE, subject_type="expense", subject_id="R-1", data=data
    )
    return {"acme": acme, "globex": globex, "a": a.workflow_id, "g": g.workflow_id}


def _counts(table: str) -> dict[int, int]:
    return dict(_rows(f'SELECT tenant_id, count(*) FROM "{table}" GROUP BY tenant_id'))  # noqa: S608


def test_every_tenant_owned_table_has_the_policy_and_partitions_are_not_granted(db):
    forced = dict(
        _rows(
            "SELECT c.relname, c.relrowsecurity AND c.relforcerowsecurity FROM pg_class c"
            " JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = current_schema()"
        )
    )
    policies = set(
        _rows("SELECT c.relname, p.polname FROM pg_policy p JOIN pg_class c ON c.oid = p.polrelid")
    )
    tables = _tenant_tables()
    assert "approvals_workflow" in tables and "approvals_workflowevent" in tables
    missing = [
        t
        for t in [*tables, *sorted(THROUGH_PARENT)]
        if not forced.get(t)
        or (t, "tenant_isolation") not in policies
        or (t, "cross_tenant") not in policies
    ]
    assert missing == [], (
        f"{missing}: a table with a tenant_id needs row-level security; its migration"
        " adds it to approvals/sql/policies/tenant_isolation.sql and applies it"
    )
    partitions = _rows(
        "SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid"
        " WHERE i.inhparent = 'approvals_workflowevent'::regclass"
        " AND has_table_privilege('approvals_app', c.oid, 'SELECT')"
    )
    assert partitions == []
    assert _rows("SELECT rolbypassrls, rolsuper FROM pg_roles WHERE rolname = 'approvals_app'") == [
        (False, False)
    ]


def test_an_unfiltered_read_acting_for_a_tenant_finds_its_rows_and_none_of_another(two):
    acme, globex = two["acme"].pk, two["globex"].pk
    tables = _tenant_tables()
    before = {t: _counts(t) for t in tables}  # the superuser's view: every tenant
    assert before["approvals_workflow"] == {acme: 1, globex: 1}
    assert before["approvals_pendingtask"].get(acme) and not before["approvals_pendingtask"].get(
        globex
    )
    for tenant in (acme, globex):
        with transaction.atomic(), tenant_scope.acting_for(tenant):
            for table in tables:
                seen = _rows(
                    f'SELECT count(*), count(*) FILTER (WHERE tenant_id <> %s) FROM "{table}"',
                    [tenant],
                )  # noqa: S608
                assert seen == [(before[table].get(tenant, 0), 0)], table
            # and through the ORM, with no filter at all
            assert {w.tenant_id for w in Workflow.objects.all()} == {tenant}
            assert set(WorkflowEvent.objects.values_list("tenant_id", flat=True)) == {tenant}
            assert all(t.tenant_id == tenant for t in PendingTask.objects.all())
            assert not User.objects.exclude(tenant_id=tenant).exists()
    # after the block the test's transaction is the superuser's again
    assert _rows("SELECT current_user")[0][0] != tenant_scope.APP_ROLE
    assert tenant_scope.acting_tenant() is None


def test_the_database_refuses_a_write_of_another_tenants_row(two):
    acme, globex = two["acme"].pk, two["globex"].pk
    with transaction.atomic(), tenant_scope.acting_for(globex):
        # another's row is not there to update or delete
        assert Workflow.objects.filter(pk=two["a"]).update(subject_id="moved") == 0
        assert PendingTask.objects.filter(tenant_id=acme).delete()[0] == 0
        # an INSERT of another's row, and a row moved to another tenant, are refused
        with pytest.raises(DatabaseError, match="row-level security"), transaction.atomic():
            _rows(
                "INSERT INTO approvals_orggroup (tenant_id, key, name) VALUES (%s, 'x', 'X')",
                [acme],
            )
        with pytest.raises(DatabaseError, match="row-level security"), transaction.atomic():
            Workflow.objects.filter(pk=two["g"]).update(tenant_id=acme)
        # its own rows it writes as before
        assert Workflow.objects.filter(pk=two["g"]).update(subject_id="V-2") == 1
    assert Workflow.objects.get(pk=two["a"]).subject_id == "R-1"


def test_the_app_role_with_no_tenant_set_sees_and_writes_nothing(two):
    with transaction.atomic():
        _rows("SET LOCAL ROLE approvals_app")
        for table in _tenant_tables():
            assert _rows(f'SELECT count(*) FROM "{table}"') == [(0,)], table  # noqa: S608
        with pytest.raises(DatabaseError, match="row-level security"), transaction.atomic():
            _rows(
                "INSERT INTO approvals_orggroup (tenant_id, key, name) VALUES (%s, 'x', 'X')",
                [two["acme"].pk],
            )
        _rows("RESET ROLE")


def test_the_cross_tenant_role_sees_every_tenant_and_a_role_in_neither_sees_none(two):
    # A login-less stand-in for the web login role, created in the test's transaction.
    member, outsider = (f"rls_probe_{uuid.uuid4().hex[:12]}" for _ in range(2))
    with transaction.atomic():
        for role in (member, outsider):
            _rows(f"CREATE ROLE {role} NOLOGIN")
            _rows(f"GRANT SELECT ON approvals_workflow TO {role}")
        _rows(f"GRANT approvals_system, approvals_app TO {member}")
        _rows(f"SET LOCAL ROLE {member}")
        assert _rows("SELECT count(DISTINCT tenant_id) FROM approvals_workflow") == [(2,)]
        # ... and, once it acts for a tenant (SET ROLE approvals_app), that tenant's only
        _rows(tenant_scope.ACT_SQL, [str(two["acme"].pk)])
        assert _rows("SELECT DISTINCT tenant_id FROM approvals_workflow") == [(two["acme"].pk,)]
        _rows(f"SET LOCAL ROLE {outsider}")
        assert _rows("SELECT count(*) FROM approvals_workflow") == [(0,)]
        _rows("RESET ROLE")
        transaction.set_rollback(True)


def test_a_command_acts_for_its_workflows_tenant_and_leaves_the_transaction_as_it_was(two):
    seen: list[Any] = []

    def note(wf: Workflow, facts: Any) -> None:
        seen.append((_rows("SELECT current_user")[0][0], tenant_scope.acting_tenant()))

    command_execute(
        tenant_id=two["globex"].pk,
        workflow_id=two["g"],
        command=cmd.Signal("contract_signed", {}),
        authorize=note,
    )
    assert seen == [(tenant_scope.APP_ROLE, two["globex"].pk)]
    assert _rows("SELECT current_user")[0][0] != tenant_scope.APP_ROLE
    assert tenant_scope.acting_tenant() is None


@pytest.mark.urls(__name__)
def test_a_members_page_read_that_forgets_its_filter_sees_only_their_organisation(two):
    for who, tenant in (("alice", two["acme"].pk), ("gina", two["globex"].pk)):
        client = Client()
        client.force_login(User.objects.get(username=who))
        assert client.get("/rls-probe").json() == {"tenants": [tenant], "workflows": 1}
    # a superuser crosses tenants (the admin's role)
    root = User.objects.create_superuser("root", password="pw")
    client = Client()
    client.force_login(root)
    assert client.get("/rls-probe").json()["tenants"] == sorted([two["acme"].pk, two["globex"].pk])


@pytest.mark.urls(__name__)
def test_an_api_read_with_a_bearer_token_acts_for_the_tokens_organisation(two):
    for who, tenant in (("alice", two["acme"].pk), ("gina", two["globex"].pk)):
        _, secret = token_issue(user=User.objects.get(username=who))
        auth = {"HTTP_AUTHORIZATION": f"Bearer {secret}"}
        assert Client().get("/rls-probe", **auth).json() == {"tenants": [tenant], "workflows": 1}
        # the API view takes the person the middleware found, and still answers
        assert Client().get("/api/me/tasks", **auth).status_code == 200
    # a token beside someone else's session: the token's person, as the API decides
    _, gina_secret = token_issue(user=User.objects.get(username="gina"))
    both = Client()
    both.force_login(User.objects.get(username="alice"))
    probe = both.get("/rls-probe", HTTP_AUTHORIZATION=f"Bearer {gina_secret}").json()
    assert probe == {"tenants": [two["globex"].pk], "workflows": 1}
    # a refused token is still the view's 401, and no read acts for anyone
    bad = {"HTTP_AUTHORIZATION": "Bearer not-a-token"}
    assert Client().get("/api/me/tasks", **bad).status_code == 401
    assert Client().get("/rls-probe", **bad).json()["workflows"] == 2


@pytest.mark.urls(__name__)
@pytest.mark.parametrize(
    "header", ["Bearer", "Bearer a b", "Bearer tökén", "Bearer 令牌", "bearer   "]
)
def test_a_malformed_bearer_header_leaves_the_read_acting_for_no_one(two, header):
    """The API answers it 401 (approvals.api.auth.bearer_token, the one parser); the
    scope neither takes the session's person for it nor refuses the request."""
    client = Client()
    client.force_login(User.objects.get(username="alice"))

    assert client.get("/rls-probe", HTTP_AUTHORIZATION=header).json()["workflows"] == 2
    assert client.get("/api/me/tasks", HTTP_AUTHORIZATION=header).status_code == 401


@pytest.mark.urls(__name__)
def test_a_lowercase_bearer_keyword_scopes_and_a_basic_header_leaves_the_session(two):
    _, gina_secret = token_issue(user=User.objects.get(username="gina"))
    client = Client()
    client.force_login(User.objects.get(username="alice"))

    lower = client.get("/rls-probe", HTTP_AUTHORIZATION=f"bearer {gina_secret}").json()
    basic = client.get("/rls-probe", HTTP_AUTHORIZATION="Basic YWxpY2U6ZGVtbw==").json()

    assert lower == {"tenants": [two["globex"].pk], "workflows": 1}
    assert basic == {"tenants": [two["acme"].pk], "workflows": 1}  # alice's session


def test_the_policy_is_the_one_the_migration_helper_writes(db):
    (using,) = _rows(
        "SELECT pg_get_expr(p.polqual, p.polrelid) FROM pg_policy p"
        " WHERE p.polrelid = 'approvals_workflow'::regclass AND p.polname = 'tenant_isolation'"
    )[0]
    assert "approvals_acting_tenant()" in using and "tenant_id" in using
    assert "approvals_acting_tenant()" in TENANT_ISOLATION


# Readable on the login role only: every organisation's sessions and sign-in attempts.
UNREADABLE = ("django_session", "axes_accessattempt", "axes_accesslog", "axes_accessfailurelog")


def _shared_rows(two: dict[str, Any]) -> dict[str, int]:
    """A session, an admin log line, a sign-in attempt and a group link for a person of
    each organisation; returns the people's ids (acme's alice, globex's gina)."""
    people = {u.username: u for u in User.objects.filter(username__in=["alice", "gina"])}
    for who in people.values():
        client = Client()
        client.force_login(who)  # a row in django_session
        LogEntry.objects.create(
            user_id=who.pk,
            content_type=ContentType.objects.get_for_model(User),
            object_id=str(who.pk),
            object_repr=who.username,
            action_flag=CHANGE,
        )
        AccessAttempt.objects.create(
            username=who.username,
            ip_address="192.0.2.1",
            user_agent="probe",
            failures_since_start=1,
        )
        who.groups.add(Group.objects.get_or_create(name=f"probe-{who.username}")[0])
    return {name: u.pk for name, u in people.items()}


def test_under_the_app_role_no_shared_table_shows_another_organisations_rows(two):
    people = _shared_rows(two)
    acme, globex = two["acme"].pk, two["globex"].pk
    for tenant, mine, theirs in ((acme, "alice", "gina"), (globex, "gina", "alice")):
        with transaction.atomic(), tenant_scope.acting_for(tenant):
            assert _rows("SELECT id FROM approvals_tenant") == [(tenant,)]
            links = {u for (u,) in _rows("SELECT user_id FROM approvals_user_groups")}
            assert people[mine] in links and people[theirs] not in links
            logged = {u for (u,) in _rows("SELECT user_id FROM django_admin_log")}
            assert logged == {people[mine]}
            for table in UNREADABLE:
                with pytest.raises(DatabaseError, match="permission denied"), transaction.atomic():
                    _rows(f'SELECT count(*) FROM "{table}"')  # noqa: S608
    # the login role (here the superuser) still reads them all, as sign-in needs
    assert _rows("SELECT count(*) FROM django_session")[0][0] >= 2
    assert _rows("SELECT count(*) FROM approvals_tenant")[0][0] >= 2


def test_the_app_role_cannot_act_for_a_second_organisation_in_its_transaction(two):
    acme, globex = two["acme"].pk, two["globex"].pk
    with transaction.atomic(), tenant_scope.acting_for(acme):
        # asking for another through the function that seals the setting is refused ...
        with (
            pytest.raises(DatabaseError, match="cannot change the organisation"),
            transaction.atomic(),
        ):
            _rows("SELECT approvals_act_for(%s)", [globex])
        # ... and so is the setting changed by hand, at the next read of any table
        with pytest.raises(DatabaseError, match="without approvals_act_for"), transaction.atomic():
            _rows("SELECT set_config('approvals.tenant', %s, true)", [str(globex)])
            _rows("SELECT count(*) FROM approvals_workflow")
        # ... or with another organisation's seal (a seal holds for its own tenant only)
        with pytest.raises(DatabaseError, match="without approvals_act_for"), transaction.atomic():
            _rows("SELECT set_config('approvals.tenant', %s, true)", [str(globex)])
            _rows("SELECT tenant_id FROM approvals_workflow")
        # the seal's function is no one's to call, nor its key's
        with pytest.raises(DatabaseError, match="permission denied"), transaction.atomic():
            _rows("SELECT approvals_tenant_seal(%s)", [str(globex)])
        with pytest.raises(DatabaseError, match="permission denied"), transaction.atomic():
            _rows("SELECT approvals_tenant_seal_key()")
        # and the transaction still sees its own organisation only
        assert _rows("SELECT DISTINCT tenant_id FROM approvals_workflow") == [(acme,)]


@pytest.mark.urls(__name__)
def test_a_bearer_read_beside_a_session_cookie_reads_the_session_before_acting(two):
    """Sessions are not the app role's to read: the session a cookie names is read on
    the login role before the request acts for the token's organisation (the
    middleware before the scope asks for the person), so a page that asks for it
    later still has it."""
    _, gina_secret = token_issue(user=User.objects.get(username="gina"))
    client = Client()
    client.force_login(User.objects.get(username="alice"))

    answer = client.get("/rls-session-probe", HTTP_AUTHORIZATION=f"Bearer {gina_secret}")

    assert answer.status_code == 200
    assert answer.json()["keys"] >= 1  # alice's session, read before acting for Globex


def _own_connection() -> Any:
    """A connection of its own to the test database (the test's transaction is one
    transaction; a seal is bound to its transaction and backend)."""
    s = connection.settings_dict
    return psycopg.connect(
        host=s["HOST"] or "127.0.0.1", port=s["PORT"] or 5432, user=s["USER"], dbname=s["NAME"]
    )


SEALED = "SELECT current_setting('approvals.tenant'), current_setting('approvals.tenant_seal')"
FORGE = (
    "SELECT set_config('approvals.tenant', %s, true), set_config('approvals.tenant_seal', %s, true)"
)


def test_a_seal_copied_from_another_transaction_or_backend_is_refused(db):
    acme, globex = 1_000_001, 1_000_002  # the check needs no rows, only the settings
    with _own_connection() as one, _own_connection() as two:
        with one.transaction():
            one.execute(tenant_scope.ACT_SQL, [str(globex)])
            copied = one.execute(SEALED).fetchone()
            assert one.execute("SELECT approvals_acting_tenant()").fetchone() == (globex,)
        assert copied[0] == str(globex) and len(copied[1]) == 64
        # the same backend's next transaction, acting for another organisation
        with (
            pytest.raises(psycopg.errors.InsufficientPrivilege, match="without approvals_act_for"),
            one.transaction(),
        ):
            one.execute(tenant_scope.ACT_SQL, [str(acme)])
            one.execute(FORGE, list(copied))
            one.execute("SELECT approvals_acting_tenant()")
        # another backend, acting for another organisation or for none
        for act in (True, False):
            with (
                pytest.raises(
                    psycopg.errors.InsufficientPrivilege, match="without approvals_act_for"
                ),
                two.transaction(),
            ):
                if act:
                    two.execute(tenant_scope.ACT_SQL, [str(acme)])
                else:
                    two.execute(f"SET LOCAL ROLE {tenant_scope.APP_ROLE}")
                two.execute(FORGE, list(copied))
                # what every policy asks (a table read asks it only once it meets a
                # row, and this connection sees none of the test's)
                two.execute("SELECT approvals_acting_tenant()")
        # and the seal it was given holds in its own transaction
        with two.transaction():
            two.execute(tenant_scope.ACT_SQL, [str(acme)])
            assert two.execute("SELECT approvals_acting_tenant()").fetchone() == (acme,)


# The seal as approvals_tenant_seal computes it, from a key and a tenant, for the backend
# and transaction asking.
SEAL_OF = (
    "SELECT encode(sha256(textsend(%s::text) || int4send(pg_backend_pid())"
    " || timestamptz_send(transaction_timestamp()) || textsend(%s::text)"
    " || textsend(%s::text)), 'hex')"
)


def test_a_key_of_the_callers_own_does_not_seal_a_tenant(two):
    """The seal's functions name every object with its schema: a key table of the app
    role's own in pg_temp, first on its search_path, is not the one they read."""
    acme, globex = two["acme"].pk, two["globex"].pk
    (key,) = _rows("SELECT key FROM approvals_tenant_key")[0]  # the login role's to read
    with transaction.atomic(), tenant_scope.acting_for(acme):
        # the seal is the one SEAL_OF computes with the real key
        assert _rows(SEALED) == [(str(acme), _rows(SEAL_OF, [key, acme, key])[0][0])]
        with pytest.raises(DatabaseError, match="without approvals_act_for"), transaction.atomic():
            _rows("CREATE TEMP TABLE approvals_tenant_key (id smallint, key text)")
            _rows("INSERT INTO pg_temp.approvals_tenant_key VALUES (1, 'known')")
            _rows(
                "CREATE FUNCTION pg_temp.approvals_tenant_seal_key() RETURNS bytea"
                " LANGUAGE sql AS $$ SELECT textsend('known') $$"
            )
            _rows("SET LOCAL search_path = pg_temp, public, pg_catalog")
            (forged,) = _rows(SEAL_OF, ["known", globex, "known"])[0]
            _rows(FORGE, [str(globex), forged])
            _rows("SELECT count(*) FROM approvals_workflow")
        assert _rows("SELECT DISTINCT tenant_id FROM approvals_workflow") == [(acme,)]


def test_a_seal_made_up_or_of_another_tenant_is_refused(db):
    """Only the seal approvals_act_for wrote for this tenant, backend and transaction
    holds: not an empty one, not any other hex, not the tenant's own seal beside another
    spelling or another tenant."""
    acme, globex = 1_000_001, 1_000_002
    with _own_connection() as one, one.transaction():
        one.execute(tenant_scope.ACT_SQL, [str(acme)])
        tenant, seal = one.execute(SEALED).fetchone()
        forged = [
            (str(globex), seal),
            (f"0{acme}", seal),
            (f" {acme}", seal),
            (str(acme), ""),
            (str(acme), "0" * 64),
            (str(acme), seal.upper()),
            (str(acme), seal[:-1]),
        ]
        for bad_tenant, bad_seal in forged:
            with (
                pytest.raises(
                    psycopg.errors.InsufficientPrivilege, match="without approvals_act_for"
                ),
                one.transaction(),
            ):
                one.execute(FORGE, [bad_tenant, bad_seal])
                one.execute("SELECT approvals_acting_tenant()")
        # and the seal it was given still holds (each attempt was rolled back)
        assert (tenant, one.execute("SELECT approvals_acting_tenant()").fetchone()) == (
            str(acme),
            (acme,),
        )


def test_the_check_reads_the_key_once_per_session_and_not_per_call(db):
    """approvals_tenant_seal_key is evaluated when the check's expression is planned,
    and that plan is kept: checking the seal fifty times reads the key no more. (The
    first transaction plans the seal's two functions, each naming the key twice.)"""
    counts = (
        "SELECT count(*) FILTER (WHERE funcname = 'approvals_acting_tenant'),"
        " count(*) FILTER (WHERE funcname = 'approvals_tenant_seal_key')"
        " FROM pg_stat_xact_user_functions, generate_series(1, calls)"
    )
    with _own_connection() as one:
        one.execute("SET track_functions = 'all'")
        for tenant, planned in ((1_000_001, 4), (1_000_002, 0)):
            with one.transaction():
                before = one.execute(counts).fetchone()
                one.execute(tenant_scope.ACT_SQL, [str(tenant)])
                for _ in range(50):
                    assert one.execute("SELECT approvals_acting_tenant()").fetchone() == (tenant,)
                after = one.execute(counts).fetchone()
                assert (after[0] - before[0], after[1] - before[1]) == (50, planned)


def test_the_seal_is_made_and_checked_whatever_the_callers_search_path(db):
    """approvals_act_for, the seal's functions and the check name every object with its
    schema and set no search_path of their own: with public off the caller's path they
    still seal and check, and the seal is the one SEAL_OF computes."""
    tenant = 1_000_001
    with _own_connection() as one, one.transaction():
        (key,) = one.execute("SELECT key FROM approvals_tenant_key").fetchone()
        one.execute("SET LOCAL search_path = pg_temp")
        one.execute(
            tenant_scope.ACT_SQL.replace("approvals_act_for", "public.approvals_act_for"),
            [str(tenant)],
        )
        assert one.execute("SELECT public.approvals_acting_tenant()").fetchone() == (tenant,)
        (expected,) = one.execute(SEAL_OF, [key, tenant, key]).fetchone()
        assert one.execute(SEALED).fetchone() == (str(tenant), expected)
