"""The last place on a request taken by several uploads at once: the count is checked
with the workflow row locked, so exactly one new file is recorded and the others are
refused in words (real threads, real PostgreSQL)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from approvals.models import User, WorkflowEvent
from approvals.services.attachments import REQUEST_FULL, AttachmentRefused, attachment_add

from ..files import png_bytes, upload
from ..pages.support import expense_started
from .support import in_thread, race

pytestmark = pytest.mark.django_db(transaction=True)

RACERS = 6


def test_only_one_of_several_uploads_takes_the_last_place(
    acme: Any,
    files_root: Path,
    settings: Any,
) -> None:
    settings.APPROVALS_FILES_PER_REQUEST = 2
    wid = expense_started("E-race-files")
    alice = User.objects.get(username="alice")
    attachment_add(
        user=alice,
        workflow_id=wid,
        upload=upload("first.png", png_bytes((5, 5))),
        request_id="race-first",
    )

    def racer(n: int) -> Callable[[], str]:
        def run() -> str:
            try:
                attachment_add(
                    user=User.objects.get(username="alice"),
                    workflow_id=wid,
                    upload=upload(f"r{n}.png", png_bytes((6 + n, 6))),
                    request_id=f"race-{n}",
                )
            except AttachmentRefused as exc:
                return exc.message
            return "recorded"

        return in_thread(run)

    outcomes = race([racer(n) for n in range(RACERS)])

    assert sorted(outcomes) == sorted(["recorded"] + [REQUEST_FULL.format(limit=2)] * (RACERS - 1))
    assert WorkflowEvent.objects.filter(workflow_id=wid, type="FileAttached").count() == 2
