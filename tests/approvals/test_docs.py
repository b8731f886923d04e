"""The API documents itself."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.django_db


def test_openapi_schema_lists_the_api(client):
    schema = client.get("/api/schema/?format=json").json()

    paths = set(schema["paths"])
    assert {
        "/api/workflows",
        "/api/workflows/{workflow_id}/decisions",
        "/api/me/tasks",
        "/api/workflows/{workflow_id}/signals/{name}",
    } <= paths
    decision = schema["paths"]["/api/workflows/{workflow_id}/decisions"]["post"]
    assert {"200", "409"} <= set(decision["responses"])


def test_swagger_ui_is_served_without_a_cdn(client):
    page = client.get("/api/docs/").content.decode()

    assert "swagger-ui" in page
    assert "cdn" not in page.lower()
