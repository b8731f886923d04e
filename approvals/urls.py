from django.contrib.auth import views as auth_views
from django.urls import path

from . import (
    absence_pages,
    analytics_pages,
    attachment_pages,
    conversation_pages,
    draft_pages,
    pages,
    views,
)
from .admin_login import SignInForm
from .audit import pages as audit_pages
from .web import route_preview

urlpatterns = [
    path("", pages.inbox, name="inbox"),
    path("workflows/", pages.my_workflows, name="my-workflows"),
    path("workflows/new", pages.workflow_new, name="workflow-new"),
    path("workflows/new/route", route_preview.workflow_route, name="workflow-route"),
    path("workflows/<uuid:workflow_id>", pages.workflow_detail, name="workflow"),
    path("workflows/<uuid:workflow_id>/decide", pages.decide, name="workflow-decide"),
    path(
        "workflows/<uuid:workflow_id>/resubmit",
        pages.workflow_resubmit,
        name="workflow-resubmit",
    ),
    path(
        "workflows/<uuid:workflow_id>/files",
        attachment_pages.workflow_attach,
        name="workflow-attach",
    ),
    path(
        "workflows/<uuid:workflow_id>/files/<str:sha256>",
        attachment_pages.workflow_file,
        name="workflow-file",
    ),
    path(
        "workflows/<uuid:workflow_id>/files/<str:sha256>/preview",
        attachment_pages.workflow_file_preview,
        name="workflow-file-preview",
    ),
    path(
        "workflows/<uuid:workflow_id>/comments",
        conversation_pages.workflow_comment_page,
        name="workflow-comment",
    ),
    path(
        "workflows/<uuid:workflow_id>/withdraw",
        conversation_pages.workflow_withdraw_page,
        name="workflow-withdraw",
    ),
    path("drafts/<uuid:draft_id>/submit", draft_pages.draft_submit_page, name="draft-submit"),
    path("drafts/<uuid:draft_id>/delete", draft_pages.draft_delete_page, name="draft-delete"),
    path(
        "drafts/<uuid:draft_id>/files/<str:sha256>",
        attachment_pages.draft_file,
        name="draft-file",
    ),
    path("search", pages.search, name="search"),
    path("search/export.csv", pages.search_export, name="search-export"),
    path("account/out-of-office", pages.out_of_office, name="out-of-office"),
    path(
        "account/out-of-office/<int:delegation_id>/end",
        absence_pages.absence_end,
        name="out-of-office-end",
    ),
    path(
        "account/out-of-office/<int:delegation_id>/change",
        absence_pages.absence_change,
        name="out-of-office-change",
    ),
    path(
        "account/out-of-office/<int:delegation_id>/delete",
        absence_pages.absence_delete,
        name="out-of-office-delete",
    ),
    path("people", pages.people, name="people"),
    path("audit/verify", audit_pages.verify_page, name="audit-verify"),
    path("analytics", analytics_pages.analytics_page, name="analytics"),
    path(
        "accounts/login/",
        auth_views.LoginView.as_view(authentication_form=SignInForm),
        name="login",
    ),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("healthz", views.healthz, name="healthz"),
    path("metrics", views.metrics, name="metrics"),
]
