"""/metrics access, the JSON 404 under /api/, production settings, Cache-Control, CSP."""

from __future__ import annotations

import os
import re
import secrets
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from django.test import Client, override_settings
from rest_framework.test import APIClient

from approvals.api.errors import NOT_FOUND
from approvals.models import User
from approvals.services.tokens import token_issue

ROOT = Path(__file__).resolve().parents[3]
OUTSIDER = "203.0.113.9"

# --- /metrics --------------------------------------------------------------------------


@pytest.mark.django_db
def test_metrics_refuses_a_remote_client_even_claiming_loopback() -> None:
    response = Client().get("/metrics", REMOTE_ADDR=OUTSIDER, HTTP_X_FORWARDED_FOR="127.0.0.1")

    assert response.status_code == 403
    assert b"approvals_" not in response.content


@pytest.mark.django_db
@pytest.mark.parametrize("loopback", ["127.0.0.1", "::1"])
def test_metrics_answers_loopback(loopback: str) -> None:
    response = Client().get("/metrics", REMOTE_ADDR=loopback)

    assert response.status_code == 200
    assert b"approvals_due_timers" in response.content


@pytest.mark.django_db
@override_settings(APPROVALS_METRICS_TOKEN="scrape-me-0123456789")
def test_metrics_answers_its_token_from_anywhere() -> None:
    good = Client().get(
        "/metrics", REMOTE_ADDR=OUTSIDER, HTTP_AUTHORIZATION="Bearer scrape-me-0123456789"
    )
    bad = Client().get("/metrics", REMOTE_ADDR=OUTSIDER, HTTP_AUTHORIZATION="Bearer scrape-me")

    assert good.status_code == 200 and b"approvals_due_timers" in good.content
    assert bad.status_code == 403


@pytest.mark.django_db
@override_settings(APPROVALS_TRUSTED_PROXY_COUNT=1)
def test_metrics_through_a_local_proxy_is_not_local() -> None:
    proxied = Client().get("/metrics", REMOTE_ADDR="127.0.0.1", HTTP_X_FORWARDED_FOR=OUTSIDER)
    direct = Client().get("/metrics", REMOTE_ADDR="127.0.0.1")

    assert proxied.status_code == 403
    assert direct.status_code == 200


# --- unknown /api/ paths ---------------------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize("debug", [True, False])
@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("get", "/api/nope"),
        ("post", "/api/workflows/not-a-uuid/decisions/extra"),
        ("get", "/api/v2/workflows/"),
        ("delete", "/api/auth/"),
    ],
)
def test_unknown_api_path_is_the_json_404(debug: bool, method: str, path: str) -> None:
    with override_settings(DEBUG=debug):
        response = getattr(APIClient(), method)(path, HTTP_X_REQUEST_ID="req-404")

    assert response.status_code == 404
    assert response["Content-Type"] == "application/json"
    assert response.json() == {
        "error": {"code": "NOT_FOUND", "message": NOT_FOUND, "requestId": "req-404"}
    }


@pytest.mark.django_db
def test_schema_does_not_list_the_catch_all() -> None:
    client = APIClient()
    client.force_login(User.objects.create_user(username="reader", password="x" * 20))

    paths = client.get("/api/schema/?format=json").json()["paths"]

    assert "/api/auth/logout" in paths
    assert all(".*" not in p and "{path}" not in p for p in paths), sorted(paths)
    assert not any(p.endswith("^") or p.endswith("$") for p in paths)


# --- settings for production -----------------------------------------------------------


def _manage(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    base = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("SECURE_", "SESSION_", "CSRF_", "APPROVALS_"))
        and k not in {"DEBUG", "SECRET_KEY", "DJANGO_SETTINGS_MODULE", "DJANGO_ALLOW_ASYNC_UNSAFE"}
    }
    return subprocess.run(
        [sys.executable, str(ROOT / "manage.py"), *args],
        cwd=ROOT,
        env={**base, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_check_deploy_is_clean_with_debug_off_and_a_secret() -> None:
    done = _manage("check", "--deploy", DEBUG="false", SECRET_KEY=secrets.token_urlsafe(50))

    assert done.returncode == 0, done.stderr
    assert "System check identified no issues (0 silenced)." in done.stdout
    assert "WARNINGS" not in done.stdout


def test_debug_is_off_by_default_and_the_default_key_is_refused() -> None:
    done = _manage("check")

    assert done.returncode != 0
    assert "ImproperlyConfigured: SECRET_KEY must be set when DEBUG is off" in done.stderr


def test_debug_on_runs_with_the_default_key() -> None:
    done = _manage("check", DEBUG="true")

    assert done.returncode == 0, done.stderr


# --- answers ---------------------------------------------------------------------------


@pytest.mark.django_db
def test_cache_control_on_an_authenticated_page_and_api_answer(acme: Any) -> None:
    page = Client()
    page.force_login(User.objects.get(username="alice"))
    _, secret = token_issue(user=User.objects.get(username="alice"))
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Bearer {secret}")

    for response in (page.get("/"), api.get("/api/workflows")):
        assert response.status_code == 200
        directives = {d.strip() for d in response["Cache-Control"].split(",")}
        assert {"private", "no-store"} <= directives
    # The inbox API answers a conditional GET (api/inbox_etag.py): its answer may be
    # kept by the client, to be revalidated every time, never by a shared cache.
    tasks = api.get("/api/me/tasks")
    directives = {d.strip() for d in tasks["Cache-Control"].split(",")}
    assert directives == {"private", "no-cache"}
    assert tasks.has_header("ETag")


@pytest.mark.django_db
def test_csp_header_and_docs_page_without_inline_code() -> None:
    client = Client()

    docs = client.get("/api/docs/")
    html = docs.content.decode()

    assert docs.status_code == 200
    assert "default-src 'self'" in docs["Content-Security-Policy"]
    assert "unsafe-inline" not in docs["Content-Security-Policy"]
    assert "<style" not in html
    scripts = re.findall(r"<script([^>]*)>", html)
    assert scripts and all("src=" in attrs for attrs in scripts)
    init = re.search(r'<script src="([^"]*script[^"]*)"', html)
    assert init is not None
    script = client.get(init.group(1).replace("&amp;", "&"))
    assert script.status_code == 200
    assert b"SwaggerUIBundle" in script.content


@pytest.mark.django_db
def test_admin_pages_carry_no_inline_script(acme: Any) -> None:
    client = Client()
    client.force_login(User.objects.get(username="admin"))

    for url in ("/admin/", "/admin/approvals/workflowtemplate/", "/admin/approvals/apitoken/"):
        response = client.get(url)
        assert response.status_code == 200, url
        assert "Content-Security-Policy" in response
        inline = [
            a
            for a in re.findall(r"<script([^>]*)>", response.content.decode())
            if "src=" not in a and "application/json" not in a
        ]
        assert inline == [], (url, inline)
