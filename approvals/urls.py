from django.contrib.auth import views as auth_views
from django.urls import path

from . import views
from .admin.login import SignInForm
from .audit import export_pages
from .audit import pages as audit_pages
from .pages import (
    absence,
    analytics,
    conversation,
    drafts,
    files,
    held,
    inbox,
    request,
    search,
    start,
)
from .web import route_preview

urlpatterns = [
    path("", inbox.inbox, name="inbox"),
    path("workflows/", inbox.my_workflows, name="my-workflows"),
    path("workflows/new", start.workflow_new, name="workflow-new"),
    path("workflows/new/route", route_preview.workflow_route, name="workflow-route"),
    path("workflows/<uuid:workflow_id>", request.workflow_detail, name="workflow"),
    path("workflows/<uuid:workflow_id>/decide", request.decide, name="workflow-decide"),
    path(
        "workflows/<uuid:workflow_id>/held/<str:request_id>/undo",
        held.held_undo,
        name="held-undo",
    ),
    path(
        "workflows/<uuid:workflow_id>/held/<str:request_id>/release",
        held.held_release,
        name="held-release",
    ),
    path(
        "workflows/<uuid:workflow_id>/resubmit",
        request.workflow_resubmit,
        name="workflow-resubmit",
    ),
    path(
        "workflows/<uuid:workflow_id>/files",
        files.workflow_attach,
        name="workflow-attach",
    ),
    path(
        "workflows/<uuid:workflow_id>/files/<str:sha256>",
        files.workflow_file,
        name="workflow-file",
    ),
    path(
        "workflows/<uuid:workflow_id>/files/<str:sha256>/preview",
        files.workflow_file_preview,
        name="workflow-file-preview",
    ),
    path(
        "workflows/<uuid:workflow_id>/comments",
        conversation.workflow_comment_page,
        name="workflow-comment",
    ),
    path(
        "workflows/<uuid:workflow_id>/withdraw",
        conversation.workflow_withdraw_page,
        name="workflow-withdraw",
    ),
    path("drafts/<uuid:draft_id>/submit", drafts.draft_submit_page, name="draft-submit"),
    path("drafts/<uuid:draft_id>/delete", drafts.draft_delete_page, name="draft-delete"),
    path(
        "drafts/<uuid:draft_id>/files/<str:sha256>",
        files.draft_file,
        name="draft-file",
    ),
    path("search", search.search, name="search"),
    path("search/export.csv", search.search_export, name="search-export"),
    path("account/out-of-office", absence.out_of_office, name="out-of-office"),
    path(
        "account/out-of-office/<int:delegation_id>/end",
        absence.absence_end,
        name="out-of-office-end",
    ),
    path(
        "account/out-of-office/<int:delegation_id>/change",
        absence.absence_change,
        name="out-of-office-change",
    ),
    path(
        "account/out-of-office/<int:delegation_id>/delete",
        absence.absence_delete,
        name="out-of-office-delete",
    ),
    path("people", absence.people, name="people"),
    path("audit/verify", audit_pages.verify_page, name="audit-verify"),
    path("audit/export", export_pages.export_page, name="audit-export"),
    path(
        "workflows/<uuid:workflow_id>/history.csv",
        export_pages.workflow_history_export,
        name="workflow-history-export",
    ),
    path("analytics", analytics.analytics_page, name="analytics"),
    path(
        "accounts/login/",
        auth_views.LoginView.as_view(authentication_form=SignInForm),
        name="login",
    ),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("healthz", views.healthz, name="healthz"),
    path("metrics", views.metrics, name="metrics"),
]
