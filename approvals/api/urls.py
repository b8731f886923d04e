from typing import Any

from django.urls import URLPattern, path, re_path

from ..audit import api as audit
from . import views


def _command_urls() -> list[URLPattern]:
    """One URL per command of ``WorkflowCommandViewSet``: its @action's path under the
    workflow, its name, and the action's own view name (as DRF's routers make them)."""
    commands = views.WorkflowCommandViewSet
    actions: list[Any] = commands.get_extra_actions()
    return [
        path(
            f"workflows/<str:workflow_id>/{act.url_path}",
            commands.as_view(dict(act.mapping), **act.kwargs),
            name=act.url_name,
        )
        for act in actions
    ]


urlpatterns = [
    path("auth/token", views.TokenView.as_view(), name="api-token"),
    path("auth/logout", views.LogoutView.as_view(), name="api-logout"),
    path("templates", views.TemplateCollectionView.as_view(), name="api-templates"),
    path("workflows", views.WorkflowCollectionView.as_view(), name="api-workflows"),
    path("workflows/<str:workflow_id>", views.WorkflowDetailView.as_view(), name="api-workflow"),
    *_command_urls(),
    path(
        "workflows/<str:workflow_id>/held/<str:request_id>",
        views.HeldDecisionView.as_view(),
        name="api-held",
    ),
    path(
        "workflows/<str:workflow_id>/attachments",
        views.AttachmentCollectionView.as_view(),
        name="api-attachments",
    ),
    path(
        "workflows/<str:workflow_id>/attachments/<str:sha256>",
        views.AttachmentDownloadView.as_view(),
        name="api-attachment",
    ),
    path("drafts", views.DraftCollectionView.as_view(), name="api-drafts"),
    path("drafts/<str:draft_id>", views.DraftDetailView.as_view(), name="api-draft"),
    path("drafts/<str:draft_id>/submit", views.DraftSubmitView.as_view(), name="api-draft-submit"),
    path("users/<str:username>/deactivate", views.DeactivateView.as_view(), name="api-deactivate"),
    path("me/tasks", views.MyTasksView.as_view(), name="api-my-tasks"),
    path("audit/events", audit.AuditEventsView.as_view(), name="api-audit-events"),
    path("audit/export", audit.AuditExportView.as_view(), name="api-audit-export"),
    # workflow ids are <str:>, not <uuid:>: the views answer a non-UUID with the JSON 404
    # Last: an unknown /api/ path gets the envelope's 404 even when DEBUG would show
    # Django's technical 404 page (which bypasses handler404).
    re_path(r"^.*$", views.api_not_found, name="api-not-found"),
]
