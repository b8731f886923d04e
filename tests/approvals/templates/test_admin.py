"""The workflow template pages of the admin, as a finance admin uses them: the
structured editor publishes the next version (or refuses at the field, publishing
nothing), the preview shows the diff and a try-it run without saving, the versions
can be compared, tried, retired and rolled back; auditors read and change nothing;
another organisation's versions do not exist."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from django.apps import apps
from django.contrib.messages import get_messages
from django.test import Client

from approvals.admin.templates import DIFF_VERSION_UNKNOWN, NOTHING_CHANGED, TRY_FORM_INVALID
from approvals.models import OrgGroup, Tenant, User, WorkflowTemplate
from approvals.web.definition_editor import (
    EDITOR_UNREADABLE,
    JOIN,
    complete,
    editor_schema,
    to_editor,
)

from ..helpers import EXPENSE, start_expense

pytestmark = pytest.mark.django_db

BASE = "/admin/approvals/workflowtemplate"


def _as(username: str) -> Client:
    client = Client()
    client.force_login(User.objects.get(username=username))
    return client


def _v(acme: Tenant, version: int) -> WorkflowTemplate:
    return WorkflowTemplate.objects.get(tenant=acme, key=EXPENSE, version=version)


def _editor_doc(template: WorkflowTemplate) -> dict[str, Any]:
    """What the structured editor posts for ``template``, untouched."""
    groups = list(OrgGroup.objects.filter(tenant=template.tenant).values_list("key", flat=True))
    users = list(User.objects.filter(tenant=template.tenant).values_list("username", flat=True))
    return complete(to_editor(template.definition), editor_schema(groups=groups, users=users))


def _post(client: Client, template: WorkflowTemplate, doc: Any, **extra: str) -> Any:
    body = {
        "definition": json.dumps(doc),
        "try_submitter": "alice",
        "try_data": json.dumps({"amountPaise": 4_500_000, "currency": "INR", "department": "x"}),
        **extra,
    }
    return client.post(f"{BASE}/{template.pk}/change/", body)


def _row_counts() -> dict[str, int]:
    return {m._meta.label: m._default_manager.count() for m in apps.get_models()}


def test_the_change_page_shows_editor_versions_and_diagram(acme: Tenant) -> None:
    page = _as("fiona").get(f"{BASE}/{_v(acme, 1).pk}/change/").content.decode()

    assert "data-django-jsonform" in page
    assert 'id="versions"' in page and "version 1</a> (newest)" in page
    assert '<svg class="diagram"' in page
    assert "Retire (no new requests)…" in page
    assert "Save and add another" not in page and "Save and continue editing" not in page


def _alone(acme: Tenant) -> dict[str, str]:
    """Four eyes on rules turned off: Save publishes, once confirmed."""
    Tenant.objects.filter(pk=acme.pk).update(template_four_eyes=False)
    return {"_save": "Save", "publish_confirmed": "yes"}


def test_saving_the_editor_publishes_the_next_version_when_four_eyes_are_off(
    acme: Tenant,
) -> None:
    doc = _editor_doc(_v(acme, 1))
    doc["steps"][0]["deadline"] = {"number": 3, "unit": "days"}

    response = _post(_as("fiona"), _v(acme, 1), doc, **_alone(acme))

    v2 = _v(acme, 2)
    assert response.status_code == 302
    assert response["Location"] == f"{BASE}/{v2.pk}/change/"
    assert v2.published_by == User.objects.get(username="fiona")
    assert v2.definition["steps"][0]["deadline"] == "P3D"
    # everything the editor did not touch is as it was
    before = _v(acme, 1).definition
    assert v2.definition["schema"] == before["schema"]
    assert v2.definition["steps"][1:] == before["steps"][1:]


def test_a_misspelt_group_is_refused_at_the_field_and_nothing_is_published(
    acme: Tenant,
) -> None:
    doc = _editor_doc(_v(acme, 1))
    doc["steps"][2]["approvers"][0]["group"] = "finanse"

    response = _post(_as("fiona"), _v(acme, 1), doc, _save="Save")

    assert response.status_code == 200
    page = response.content.decode()
    assert "Step 3, Finance, approver 1: there is no group &#x27;finanse&#x27;" in page
    # the editor's own error map points at the field
    widget = response.context["adminform"].form.fields["definition"].widget
    assert JOIN.join(["steps", "2", "approvers", "0", "group"]) in widget.error_map
    assert not WorkflowTemplate.objects.filter(key=EXPENSE, version=2).exists()


def test_the_json_is_one_click_away_and_checked_the_same(acme: Tenant) -> None:
    client = _as("fiona")
    page = client.get(f"{BASE}/{_v(acme, 1).pk}/change/?as=json").content.decode()
    assert 'class="wt-json"' in page and "\n  &quot;steps&quot;: [" in page  # pretty-printed

    doc = dict(_v(acme, 1).definition)
    doc["steps"] = [*doc["steps"], {"id": "pay", "kind": "action", "activity": "pay_out"}]
    response = client.post(
        f"{BASE}/{_v(acme, 1).pk}/change/?as=json",
        {"definition": json.dumps(doc), "try_submitter": "alice", "try_data": "{}"},
    )

    assert response.status_code == 200
    assert "Step 4, Pay: there is no activity &#x27;pay_out&#x27;" in response.content.decode()
    assert not WorkflowTemplate.objects.filter(key=EXPENSE, version=2).exists()


def test_preview_shows_the_diff_and_the_try_it_run_and_saves_nothing(acme: Tenant) -> None:
    doc = _editor_doc(_v(acme, 1))
    doc["steps"][1]["when"] = "data.amountPaise > 4000000"
    client = _as("fiona")
    before = _row_counts()

    response = _post(client, _v(acme, 1), doc, _preview="Preview", try_late="on")

    assert response.status_code == 200
    page = response.content.decode()
    assert "Preview only: nothing is published" in page
    when = "&quot;when&quot;: &quot;data.amountPaise &gt; {}&quot;"
    assert re.search(r'<div class="del">-\s+' + when.format(10000000), page)
    assert re.search(r'<div class="add">\+\s+' + when.format(4000000), page)
    assert "1 line in, 1 line out." in page
    # the VP step now runs for ₹45,000.00: victor took the manager step over when
    # its deadline passed, so four eyes rule him out and the VP step's fallback is asked
    assert "<td>VP</td><td>Asks Cora</td>" in page
    assert "Please correct" not in page
    assert _row_counts() == before


def test_diff_between_two_versions(acme: Tenant) -> None:
    doc = dict(_v(acme, 1).definition)
    doc["title"] = "Expense claims"
    from approvals.services.templates import workflow_template_publish

    workflow_template_publish(tenant=acme, definition=doc)

    page = _as("fiona").get(f"{BASE}/{_v(acme, 2).pk}/diff/?a=1&b=2").content.decode()

    assert '<div class="add">+   &quot;title&quot;: &quot;Expense claims&quot;' in page
    assert '<div class="del">-   &quot;title&quot;: &quot;Expense claim&quot;' in page


@pytest.mark.parametrize("reader", ["fiona", "audrey"], ids=["finance-admin", "auditor"])
def test_the_try_it_page_runs_a_version_and_writes_nothing(acme: Tenant, reader: str) -> None:
    client = _as(reader)  # signing in writes a session; the run must write nothing
    before = _row_counts()
    data = {"amountPaise": 4_500_000, "currency": "INR", "department": "eng"}

    response = client.post(
        f"{BASE}/{_v(acme, 1).pk}/try/",
        {"try_submitter": "alice", "try_data": json.dumps(data), "try_late": "on"},
    )

    page = response.content.decode()
    assert response.status_code == 200
    assert "Asks Bob" in page and "Reminds Bob" in page
    assert "Submitted by Alice" in page
    # people by their names, never a user name
    assert not re.search(
        r"(Asks|Reminds|Submitted by|escalated to|Approved by) (?!no one)[a-z]", page
    )
    assert "Deadline passed: escalated to Victor" in page
    assert "Finished: approved" in page
    assert _row_counts() == before


def test_try_it_assumes_everyone_prompt_shows_the_sample_and_never_a_raw_status(
    acme: Tenant,
) -> None:
    data = {"amountPaise": 4_500_000, "currency": "INR", "department": "eng"}

    response = _as("fiona").post(
        f"{BASE}/{_v(acme, 1).pk}/try/", {"try_submitter": "alice", "try_data": json.dumps(data)}
    )

    page = response.content.decode()
    assert "Everyone acts promptly" in page
    assert "Asks Bob" in page and "Reminds" not in page and "escalated" not in page
    assert "ends approved" in page
    assert "Submitted by Alice; Amount: ₹45,000.00; Department: Engineering." in page
    assert not re.search(r"ends [a-z]+_[a-z]+|COMPLETED|ROLLED_BACK", page)


def test_the_try_it_page_refuses_bad_data_clearly(acme: Tenant) -> None:
    response = _as("fiona").post(
        f"{BASE}/{_v(acme, 1).pk}/try/", {"try_submitter": "alice", "try_data": "[1, 2"}
    )

    assert "The sample data must be a JSON object" in response.content.decode()


def test_retire_then_roll_back_from_the_admin(acme: Tenant, api: Any) -> None:
    client = _as("fiona")
    v1 = _v(acme, 1)

    retired = client.post(f"{BASE}/{v1.pk}/retire/", {"confirmed": "yes"})
    assert retired.status_code == 302
    assert _v(acme, 1).retired_at is not None
    assert start_expense(api("alice"), 4_500_000).status_code == 422

    rolled = client.post(f"{BASE}/{v1.pk}/rollback/", {"confirmed": "yes"})
    v2 = _v(acme, 2)
    assert rolled["Location"] == f"{BASE}/{v2.pk}/change/"
    assert v2.definition == v1.definition and v2.retired_at is None
    assert start_expense(api("alice"), 4_500_000).status_code == 201


@pytest.mark.parametrize("action", ["retire", "rollback"], ids=["retire", "rollback"])
def test_auditors_cannot_retire_or_roll_back(acme: Tenant, action: str) -> None:
    response = _as("audrey").post(f"{BASE}/{_v(acme, 1).pk}/{action}/")

    assert response.status_code == 403
    assert WorkflowTemplate.objects.filter(key=EXPENSE).count() == 1
    assert _v(acme, 1).retired_at is None


def test_retire_asks_first_naming_the_effect(acme: Tenant, api: Any) -> None:
    start_expense(api("alice"), 4_500_000, subject="E-running")
    people = User.objects.filter(tenant=acme, is_active=True).exclude(
        groups__name__in=["auditors", "integrations"]
    )

    page = _as("fiona").get(f"{BASE}/{_v(acme, 1).pk}/retire/").content.decode()

    assert (
        f"Expense claim will no longer be offered to {people.count()} people; "
        "1 running request finishes, each on its own version."
    ) in page
    assert _v(acme, 1).retired_at is None


def test_roll_back_asks_first_naming_the_effect(acme: Tenant, api: Any) -> None:
    _post(_as("fiona"), _v(acme, 1), _deadline(_editor_doc(_v(acme, 1)), 3), **_alone(acme))
    start_expense(api("alice"), 4_500_000, subject="E-running")

    response = _as("fiona").get(f"{BASE}/{_v(acme, 1).pk}/rollback/")

    assert response.context["effect"] == (
        "Version 1 of Expense claim is published again as the newest version: new requests "
        "follow it; 1 running request keeps its version."
    )
    assert WorkflowTemplate.objects.filter(key=EXPENSE).count() == 2


def _deadline(doc: dict[str, Any], days: int) -> dict[str, Any]:
    doc["steps"][0]["deadline"] = {"number": days, "unit": "days"}
    return doc


def test_a_save_with_no_change_publishes_nothing_and_says_so(acme: Tenant) -> None:
    response = _post(_as("fiona"), _v(acme, 1), _editor_doc(_v(acme, 1)), _save="Save")

    assert response.status_code == 302
    assert WorkflowTemplate.objects.filter(key=EXPENSE).count() == 1
    shown = [m.message for m in get_messages(response.wsgi_request)]
    assert shown == [NOTHING_CHANGED.format(version=1)]


@pytest.mark.parametrize("page", ["diff/", "try/", "change/"], ids=["diff", "try", "change"])
def test_another_organisations_versions_do_not_exist(acme: Tenant, page: str) -> None:
    globex = Tenant.objects.create(slug="globex", name="Globex")
    other = WorkflowTemplate.objects.create(
        tenant=globex, key="x", version=1, title="x", definition={"key": "x", "steps": []}
    )

    response = _as("fiona").get(f"{BASE}/{other.pk}/{page}")

    assert response.status_code in (302, 404)  # the change page redirects to the index
    assert b"Globex" not in response.content


def test_rolling_back_to_what_is_already_newest_publishes_nothing(acme: Tenant) -> None:
    response = _as("fiona").post(
        f"{BASE}/{_v(acme, 1).pk}/rollback/", {"confirmed": "yes"}, follow=True
    )

    assert "Version 1 reads as the newest version does: nothing to publish." in (
        response.content.decode()
    )
    assert WorkflowTemplate.objects.filter(key=EXPENSE).count() == 1


def test_auditors_read_the_definition_pretty_printed_without_an_editor(acme: Tenant) -> None:
    page = _as("audrey").get(f"{BASE}/{_v(acme, 1).pk}/change/").content.decode()

    assert '<pre class="wt-pretty">{\n  &quot;description&quot;' in page
    assert "data-django-jsonform" not in page
    assert "Edit as JSON" not in page and "Roll back" not in page and "Retire" not in page
    assert 'id="versions"' in page


@pytest.mark.parametrize("query", ["a=²", "b=²", "a=99", "a=-1", "a=" + "9" * 40])
def test_a_diff_of_versions_that_are_not_there_is_a_400_with_a_sentence(acme, query):
    template = _v(acme, 1)
    fiona = _as("fiona")
    before = _row_counts()

    response = fiona.get(f"{BASE}/{template.pk}/diff/?{query}")

    assert response.status_code == 400
    shown = [m.message for m in response.context["messages"]]
    assert shown == [DIFF_VERSION_UNKNOWN.format(last=1)]
    assert _row_counts() == before


def _days(value: Any) -> Any:
    return lambda doc: doc["steps"][0].__setitem__("deadline", {"number": value, "unit": "days"})


DEADLINE_INVALID = (
    "Step 1, Manager: the deadline must be a positive number of days, hours or minutes."
)


EDITOR_SHAPES = [
    pytest.param(_days([1]), DEADLINE_INVALID, id="days-a-list"),
    pytest.param(_days("two"), DEADLINE_INVALID, id="days-a-word"),
    pytest.param(_days(-1), DEADLINE_INVALID, id="days-negative"),
    pytest.param(_days(0), DEADLINE_INVALID, id="days-zero"),
    pytest.param(
        lambda doc: doc["steps"][0].__setitem__("reminders", [{"number": [1], "unit": "hours"}]),
        "Step 1, Manager: a reminder must be a positive number of days, hours or minutes.",
        id="reminder-hours-a-list",
    ),
    pytest.param(
        lambda doc: doc["steps"][0].__setitem__("deadline", {"number": 2, "unit": "weeks"}),
        "Step 1, Manager: the deadline: choose days, hours or minutes.",
        id="unit-unknown",
    ),
    pytest.param(lambda doc: doc.__setitem__("fields", 3), EDITOR_UNREADABLE, id="fields-a-number"),
    pytest.param(lambda doc: doc.__setitem__("steps", 3), EDITOR_UNREADABLE, id="steps-a-number"),
    pytest.param(
        lambda doc: doc.__setitem__("fields", [[1]]), EDITOR_UNREADABLE, id="field-a-list"
    ),
    pytest.param(
        lambda doc: doc["fields"][0].__setitem__("type", [1]), EDITOR_UNREADABLE, id="type-a-list"
    ),
    pytest.param(
        lambda doc: doc["steps"][0].__setitem__("id", [1]), EDITOR_UNREADABLE, id="step-id-a-list"
    ),
]


@pytest.mark.parametrize(("change", "message"), EDITOR_SHAPES)
def test_an_editor_shape_with_a_list_where_a_number_belongs_is_a_form_error(acme, change, message):
    template = _v(acme, 1)
    doc = _editor_doc(template)
    change(doc)
    fiona = _as("fiona")
    before = _row_counts()

    response = _post(fiona, template, doc)

    assert response.status_code == 200
    assert response.context["adminform"].form.errors["definition"] == [message]
    assert _row_counts() == before


@pytest.mark.parametrize("as_json", [True, False], ids=["json-editor", "structured-editor"])
def test_a_lone_surrogate_in_the_definition_is_a_form_error(acme, as_json):
    template = _v(acme, 1)
    definition = json.dumps({**template.definition, "title": "Trip \ud800"})
    assert "\\ud800" in definition  # sent escaped, as a browser would
    fiona = _as("fiona")
    before = _row_counts()

    response = fiona.post(
        f"{BASE}/{template.pk}/change/" + ("?as=json" if as_json else ""),
        {"definition": definition, "try_submitter": "alice", "try_data": "{}"},
    )

    assert response.status_code == 200
    errors = response.context["adminform"].form.errors["definition"]
    assert errors == ["title: Text contains a lone UTF-16 surrogate."]
    assert _row_counts() == before


def test_try_it_takes_the_sample_request_as_employees_fill_it_in(acme: Tenant) -> None:
    fiona = _as("fiona")
    url = f"{BASE}/{_v(acme, 1).pk}/try/"
    claim = {"try_submitter": "alice", "try-currency": "INR", "try-department": "Sales"}
    before = _row_counts()

    response = fiona.post(url, {**claim, "try-amountPaise": "1,50,000"})

    vp = [r for r in response.context["trial_rows"] if r.step == "VP"]
    assert vp and not any(r.what.startswith("Skipped") for r in vp)  # ₹1,50,000 > 1,00,000

    response = fiona.post(url, {**claim, "try-amountPaise": "lots"})

    assert response.context["problem"] == TRY_FORM_INVALID
    assert "Enter an amount such as 45000.00." in response.content.decode()
    assert _row_counts() == before


def test_a_new_workflow_template_opens_with_its_builders_and_sections(acme: Tenant) -> None:
    page = _as("fiona").get(f"{BASE}/add/").content.decode()

    assert 'id="conditions"' in page and 'id="try"' in page
    assert 'href="#versions"' not in page  # nothing published yet
    assert "Save and add another" not in page
