"""``sync_directory FILE``: people, managers, groups and the active flag from a CSV or
JSON export; manager and group changes apply to tasks assigned afterwards; a bad file
is refused with the row named and changes nothing. And the API's deactivation."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from approvals.models import OrgGroup, PendingTask, User, WorkflowEvent

from .test_deactivate import holders, memo_definition, start_memo, user

CSV_HEADER = "username,email,first_name,last_name,manager,groups,active\n"


def write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def sync(path: str) -> str:
    from io import StringIO

    out = StringIO()
    call_command("sync_directory", path, "--tenant", "acme", stdout=out)
    return out.getvalue()


def snapshot() -> list[tuple[Any, ...]]:
    people = User.objects.order_by("username").values_list(
        "username", "email", "manager__username", "is_active"
    )
    groups = OrgGroup.objects.order_by("key").values_list("key", "members__username")
    return [*people, *groups]


@pytest.mark.django_db
class TestSyncDirectory:
    def test_csv_creates_updates_sets_managers_and_groups(self, acme, tmp_path):
        path = write(
            tmp_path,
            "people.csv",
            CSV_HEADER
            + "nina,nina@acme.example,Nina,N,farah,finance;legal,true\n"
            + "alice,alice@acme.example,Alice,A,victor,,yes\n",
        )

        out = sync(path)

        nina = user("nina")
        assert "created nina" in out
        assert nina.manager == user("farah") and nina.is_active and nina.tenant == acme
        assert not nina.has_usable_password()
        assert set(nina.org_groups.values_list("key", flat=True)) == {"finance", "legal"}
        assert user("alice").manager == user("victor")

    def test_json_deactivates_and_hands_the_tasks_on(self, acme, tmp_path):
        from approvals.services.templates import workflow_template_publish

        workflow_template_publish(tenant=acme, definition=memo_definition({"manager": "submitter"}))
        wid = start_memo("alice", 1)
        path = write(
            tmp_path,
            "people.json",
            json.dumps({"users": [{"username": "bob", "manager": "victor", "active": False}]}),
        )

        out = sync(path)

        assert f"deactivated bob; tasks handed on: {wid} -> victor" in out
        assert not user("bob").is_active
        assert holders(wid) == {"victor"}
        event = WorkflowEvent.objects.get(workflow_id=wid, type="TaskReassigned")
        assert event.role == "system" and event.payload["from_user"] == "bob"

    def test_a_manager_change_applies_to_tasks_assigned_after_it(self, acme, tmp_path):
        from approvals.services.templates import workflow_template_publish

        workflow_template_publish(tenant=acme, definition=memo_definition({"manager": "submitter"}))
        before = start_memo("alice", 1)
        sync(write(tmp_path, "p.csv", CSV_HEADER + "alice,,,,farah,,true\n"))
        after = start_memo("alice", 2)

        assert holders(before) == {"bob"}
        assert holders(after) == {"farah"}
        requested = WorkflowEvent.objects.get(workflow_id=after, type="ApprovalRequested")
        assert [a["user"] for a in requested.payload["assignments"]] == ["farah"]

    def test_a_group_change_applies_to_tasks_assigned_after_it(self, acme, tmp_path):
        from approvals.services.templates import workflow_template_publish

        workflow_template_publish(tenant=acme, definition=memo_definition({"group": "finance"}))
        before = start_memo("alice", 1)
        sync(write(tmp_path, "p.csv", CSV_HEADER + "farah,,,,victor,,true\n"))
        after = start_memo("alice", 2)

        assert holders(before) == {"fiona", "farah"}
        assert holders(after) == {"fiona"}

    @pytest.mark.parametrize(
        ("name", "text", "message"),
        [
            ("a.csv", CSV_HEADER + "nina,,,,nobody,,true\n", "manager 'nobody'"),
            ("b.csv", CSV_HEADER + "nina,,,,,,maybe\n", "line 2: active must be true or false"),
            ("c.csv", CSV_HEADER + ",x@y,,,,,true\n", "line 2: no username"),
            ("d.csv", CSV_HEADER + "nina,,,,,,true\nnina,,,,,,true\n", "'nina' appears twice"),
            ("e.csv", CSV_HEADER + "nina,,,,nina,,true\n", "their own manager"),
            ("f.csv", CSV_HEADER + "nina,,,,,fin ance,true\n", "group key 'fin ance'"),
            ("g.json", "{not json", "not valid JSON"),
            ("h.json", '{"people": []}', "a list of people"),
            ("i.json", '[{"username": "nina"}, 3]', "entry 2: not an object"),
            # bob cannot leave while nobody may take his task: refused, nothing changes
            (
                "j.csv",
                CSV_HEADER + "nina,,,,,,true\nbob,,,,,,false\n",
                "bob cannot be deactivated",
            ),
        ],
        ids=[
            "unknown-manager",
            "bad-active",
            "no-username",
            "duplicate",
            "own-manager",
            "bad-group",
            "bad-json",
            "json-not-list",
            "json-not-object",
            "nobody-to-take",
        ],
    )
    def test_a_bad_file_is_refused_and_changes_nothing(self, acme, tmp_path, name, text, message):
        from approvals.services.templates import workflow_template_publish

        workflow_template_publish(tenant=acme, definition=memo_definition({"manager": "submitter"}))
        wid = start_memo("alice", 1)
        before = snapshot()

        with pytest.raises(CommandError, match=message):
            sync(write(tmp_path, name, text))

        assert snapshot() == before
        assert holders(wid) == {"bob"}

    @pytest.mark.parametrize(
        ("name", "text", "message"),
        [
            pytest.param("n.csv", CSV_HEADER + "ni\x00na,,,,,,true\n", "line 2: ", id="csv-nul"),
            pytest.param(
                "n2.csv",
                CSV_HEADER + "nina,n\x00@a.example,,,,,true\n",
                "line 2: ",
                id="csv-nul-email",
            ),
            pytest.param("n.json", '[{"username": "ni\\u0000na"}]', "NUL", id="json-escaped-nul"),
            pytest.param(
                "n2.json", '[{"username": "ni\x00na"}]', "not valid JSON", id="json-raw-nul"
            ),
            pytest.param("s.json", '[{"username": "\\ud800"}]', "surrogate", id="json-surrogate"),
            pytest.param(
                "deep.json", "[" * 100_000 + "]" * 100_000, "nested deeper", id="json-deep"
            ),
            pytest.param(
                "deep2.json",
                '{"users": ' + "[" * 40 + "]" * 40 + "}",
                "nested deeper",
                id="json-40-deep",
            ),
            pytest.param(
                "long.csv",
                CSV_HEADER + "n" * 151 + ",,,,,,true\n",
                "line 2: username is longer",
                id="long-name",
            ),
            pytest.param(
                "long2.csv",
                CSV_HEADER + "nina," + "e" * 255 + ",,,,,true\n",
                "line 2: email is longer",
                id="long-email",
            ),
            pytest.param(
                "huge.csv",
                CSV_HEADER + "nina," + "e" * 200_000 + ",,,,,true\n",
                "line 2: ",
                id="huge-field",
            ),
            pytest.param(
                "g.json",
                '[{"username": "nina", "groups": 5}]',
                "entry 1: groups",
                id="groups-number",
            ),
        ],
    )
    def test_a_file_past_a_limit_is_refused_in_one_line_and_changes_nothing(
        self, acme, tmp_path, name, text, message
    ):
        before = snapshot()

        with pytest.raises(CommandError, match=re.escape(message)):
            sync(write(tmp_path, name, text))

        assert snapshot() == before

    def test_an_unknown_organisation_is_refused(self, acme, tmp_path):
        with pytest.raises(CommandError, match="No organisation"):
            call_command("sync_directory", write(tmp_path, "p.csv", CSV_HEADER), "--tenant", "nope")


@pytest.mark.django_db
class TestDeactivateApi:
    def test_an_organisation_admin_deactivates(self, acme, api):
        from approvals.services.templates import workflow_template_publish

        workflow_template_publish(tenant=acme, definition=memo_definition({"manager": "submitter"}))
        wid = start_memo("alice", 1)

        reply = api("olga").post("/api/users/bob/deactivate", {"reason": "left"}, format="json")

        assert reply.status_code == 200, reply.content
        assert reply.json() == {
            "username": "bob",
            "handedOn": [{"workflowId": wid, "step": "review", "toUser": "victor"}],
        }
        assert not PendingTask.objects.filter(assignee__username="bob").exists()

    @pytest.mark.parametrize(
        ("who", "target", "status", "code"),
        [
            ("alice", "bob", 403, "FORBIDDEN"),
            ("audrey", "bob", 403, "FORBIDDEN"),
            ("olga", "olga", 403, "FORBIDDEN"),
            ("olga", "nobody", 404, "NOT_FOUND"),
        ],
        ids=["employee", "auditor", "oneself", "unknown"],
    )
    def test_refusals_change_nothing(self, acme, api, who, target, status, code):
        reply = api(who).post(f"/api/users/{target}/deactivate", {}, format="json")
        assert reply.status_code == status, reply.content
        assert reply.json()["error"]["code"] == code
        assert User.objects.filter(is_active=False).count() == 0

    def test_nobody_to_take_a_task_is_a_409(self, acme, api):
        from approvals.services.templates import workflow_template_publish

        workflow_template_publish(tenant=acme, definition=memo_definition({"manager": "submitter"}))
        wid = start_memo("alice", 1)
        User.objects.filter(username="bob").update(manager=None)

        reply = api("olga").post("/api/users/bob/deactivate", {}, format="json")

        assert reply.status_code == 409
        assert reply.json()["error"]["code"] == "DEACTIVATION_REFUSED"
        assert user("bob").is_active and holders(wid) == {"bob"}
