"""The audit API: ``GET /api/audit/events`` (a page of events behind a keyset cursor)
and ``GET /api/audit/export`` (the whole export, streamed as CSV or JSON Lines)."""

from __future__ import annotations

from typing import Any

from django.http import StreamingHttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.exceptions import ValidationError
from rest_framework.negotiation import BaseContentNegotiation
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from .. import access, clock
from ..api.errors import ApiError
from ..api.serializers import Moment, Text
from ..api.views import TenantMember, _query, _user
from ..selectors.tasks import BAD_CURSOR, CURSOR_PATTERN, BadCursor
from .archived import ArchiveReadError
from .export import (
    FORMATS,
    ExportFilter,
    FilterNotPaged,
    IndexStale,
    audit_export,
    audit_page,
    export_filename,
)
from .export_words import EventSentences

_DATETIME_FORMATS = ["iso-8601", "%Y-%m-%d"]


class AuditQuery(serializers.Serializer):
    template = Text(required=False, max_length=64)
    status = Text(required=False, max_length=80)
    since = Moment(
        required=False,
        input_formats=_DATETIME_FORMATS,
        help_text="Events at or after (1970 to 2200, a UTC offset of at most 14 hours)",
    )
    until = Moment(
        required=False,
        input_formats=_DATETIME_FORMATS,
        help_text="Events before (1970 to 2200, a UTC offset of at most 14 hours)",
    )
    subject = Text(required=False, max_length=200, help_text="A subject id, or type:id")
    person = Text(required=False, max_length=150, help_text="A username that acted or submitted")


class AuditEventsQuery(AuditQuery):
    cursor = Text(pattern=CURSOR_PATTERN, required=False, max_length=512)
    limit = serializers.IntegerField(min_value=1, max_value=1000, default=100)


class AuditExportQuery(AuditQuery):
    format = serializers.ChoiceField(choices=sorted(FORMATS), default="csv")


class AuditEvent(serializers.Serializer):
    event_id = serializers.IntegerField()
    workflow_id = serializers.UUIDField()
    seq = serializers.IntegerField()
    type = serializers.CharField()
    step = serializers.CharField(allow_null=True)
    decision = serializers.CharField(allow_null=True)
    actor = serializers.CharField(allow_null=True, help_text="The username recorded")
    actor_name = serializers.CharField(allow_null=True, allow_blank=True)
    role = serializers.CharField(allow_blank=True)
    on_behalf_of = serializers.CharField(allow_null=True)
    comment = serializers.CharField(allow_blank=True)
    time = serializers.DateTimeField()
    template_key = serializers.CharField(allow_null=True)
    template_version = serializers.IntegerField(allow_null=True)
    subject_type = serializers.CharField(allow_null=True)
    subject_id = serializers.CharField(allow_null=True)
    status = serializers.CharField(allow_null=True)
    prev_hash = serializers.CharField(allow_blank=True)
    hash = serializers.CharField()
    archived = serializers.BooleanField(
        help_text="The event is read from the archive store: its request is archived "
        "(readable, never changed again)"
    )


class AuditEventPage(serializers.Serializer):
    events = AuditEvent(many=True)
    nextCursor = serializers.CharField(allow_null=True)


class _JsonErrors(BaseContentNegotiation):
    """The export's ``?format=`` names the file's format, not a renderer, and its body
    is CSV or JSON Lines whatever the Accept header says: errors are always JSON."""

    def select_renderer(self, request: Any, renderers: Any, format_suffix: Any = None) -> Any:
        return renderers[0], renderers[0].media_type

    def select_parser(self, request: Any, parsers: Any) -> Any:
        return parsers[0] if parsers else None


def _filters(data: dict[str, Any]) -> ExportFilter:
    return ExportFilter(
        template=data.get("template"),
        status=data.get("status"),
        since=data.get("since"),
        until=data.get("until"),
        subject=data.get("subject"),
        person=data.get("person"),
    )


class AuditEventsView(APIView):
    permission_classes = [TenantMember]

    @extend_schema(
        parameters=[AuditEventsQuery],
        responses={200: AuditEventPage},
        summary="Audit: every event of the organisation, a page at a time",
        description="Auditors and organisation admins only. Pages follow the event id; "
        "pass nextCursor as cursor for the next page. Archived requests' events are on "
        "the pages in their place (archived: true). With archived history, person is "
        "refused (400 FILTER_NOT_PAGED): use the export.",
    )
    def get(self, request: Request) -> Response:
        user = _user(request)
        access.check_may_audit(user)
        query = AuditEventsQuery(data=_query(request))
        if not query.is_valid():
            if "cursor" in query.errors:
                raise BadCursor(BAD_CURSOR)
            raise ValidationError(query.errors)
        q = query.validated_data
        try:
            page = audit_page(
                tenant_id=user.member_tenant_id,
                filters=_filters(q),
                limit=q["limit"],
                cursor=q.get("cursor"),
            )
        except FilterNotPaged as exc:
            raise ApiError(400, "FILTER_NOT_PAGED", str(exc)) from None
        except IndexStale as exc:
            raise ApiError(503, "ARCHIVE_INDEX_STALE", str(exc)) from None
        except ArchiveReadError as exc:
            raise ApiError(500, "ARCHIVE_UNREADABLE", str(exc)) from None
        return Response(AuditEventPage({"events": page.rows, "nextCursor": page.next_cursor}).data)


class AuditExportView(APIView):
    permission_classes = [TenantMember]
    content_negotiation_class = _JsonErrors

    @extend_schema(
        parameters=[AuditExportQuery],
        responses={
            (200, "text/csv"): OpenApiResponse(OpenApiTypes.STR, description="CSV, a header row"),
            (200, "application/x-ndjson"): OpenApiResponse(
                OpenApiTypes.STR, description="JSON Lines, one event per line"
            ),
        },
        summary="Audit: the whole export, streamed as CSV or JSON Lines",
        description="Auditors and organisation admins only. One row per event.",
    )
    def get(self, request: Request) -> StreamingHttpResponse:
        user = _user(request)
        access.check_may_audit(user)
        query = AuditExportQuery(data=_query(request))
        query.is_valid(raise_exception=True)
        q = query.validated_data
        return audit_response(
            tenant_id=user.member_tenant_id,
            tenant_slug=user.tenant.slug if user.tenant else "",
            filters=_filters(q),
            fmt=q["format"],
        )


def audit_response(
    *, tenant_id: int, tenant_slug: str, filters: ExportFilter, fmt: str
) -> StreamingHttpResponse:
    """The export as a streamed download with a file name."""
    response = StreamingHttpResponse(
        audit_export(
            tenant_id=tenant_id,
            filters=filters,
            fmt=fmt,
            sentences=EventSentences(tenant_id),
        ),
        content_type=FORMATS[fmt],
    )
    name = export_filename(tenant_slug=tenant_slug, fmt=fmt, at=clock.now())
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    response["Cache-Control"] = "no-store"
    return response
