"""API views: parse and validate, call one service or selector, shape the answer."""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple

from django.contrib.auth import authenticate
from django.http import HttpRequest, HttpResponse
from django.http.response import HttpResponseBase
from django.urls import reverse
from django.views.decorators.csrf import csrf_exempt
from django_filters.utils import translate_validation
from drf_spectacular.openapi import AutoSchema
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.parsers import MultiPartParser
from rest_framework.permissions import AllowAny, BasePermission
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.throttling import ScopedRateThrottle
from rest_framework.views import APIView
from rest_framework.viewsets import ViewSet

from .. import access
from ..audit.archived import workflow_archived
from ..definitions import definition_for, raw_definition_for
from ..http.lockout import lockout_response
from ..http.request_ids import REQUEST_ID_PATTERN
from ..models import ApiToken, HeldDecision, User, Workflow
from ..runtime.commands import CommandResult
from ..runtime.directory import TenantDirectory
from ..selectors.attachments import attachment_get
from ..selectors.drafts import draft_get, drafts_of
from ..selectors.tasks import BAD_CURSOR, BadCursor, task_list_for_user
from ..selectors.templates import workflow_templates_latest
from ..selectors.workflows import (
    workflow_assignees,
    workflow_get,
    workflow_history,
    workflow_now,
)
from ..services.admin_operations import workflow_add_approver
from ..services.attachments import ACCEPTED_TYPES, attachment_add
from ..services.comments import workflow_comment
from ..services.directory import DeactivationRefused, UserNotFound, user_deactivate_by_name
from ..services.drafts import draft_delete, draft_save, draft_submit, draft_update
from ..services.held_decisions import (
    NOT_HOLDABLE,
    NOT_HOLDABLE_TEXT,
    NOTHING_HELD,
    NOTHING_HELD_TEXT,
    HoldRefused,
    decision_hold,
    decision_undo,
    held_state,
)
from ..services.tokens import token_issue, token_revoke
from ..services.workflows import (
    IDEMPOTENCY_KEY_INVALID,
    IDEMPOTENCY_KEY_PATTERN,
    StartResult,
    idempotency_key_valid,
    workflow_cancel,
    workflow_decide,
    workflow_reassign,
    workflow_signal,
    workflow_start,
)
from ..web.search import SearchFilterBackend, WorkflowSearch
from ..web.uploads import attachment_response, stream_uploads
from ..words.decisions import outcome_at
from . import inbox_etag, start_files
from . import serializers as s
from .errors import NOT_FOUND, ApiError, json_error
from .parsers import LimitedJSONParser
from .rendering import compiled

INVALID_CREDENTIALS = "The username or password is wrong."
NOT_A_TOKEN = "Sign out by sending the token to revoke: Authorization: Bearer <token>."
SIGNAL_NAME_PATTERN = r"^[A-Za-z0-9_.:\-]{1,64}$"
SIGNAL_NAME_INVALID = "name: 1 to 64 letters, digits, '_', '.', ':' or '-'."

# Error answers are added to every operation by approvals.api.schema.add_error_responses.
WORKFLOW_ID = OpenApiParameter(
    "workflow_id", OpenApiTypes.UUID, OpenApiParameter.PATH, description="A workflow's id"
)
HELD_REQUEST_ID = OpenApiParameter(
    "request_id",
    {"type": "string", "pattern": REQUEST_ID_PATTERN, "minLength": 1, "maxLength": 128},
    OpenApiParameter.PATH,
    description="The requestId the decision was sent with (hold: true)",
)
SIGNAL_NAME = OpenApiParameter(
    "name",
    {"type": "string", "pattern": SIGNAL_NAME_PATTERN, "minLength": 1, "maxLength": 64},
    OpenApiParameter.PATH,
    description="The signal's name, as the workflow template's signal step names it",
)
IDEMPOTENCY_KEY = OpenApiParameter(
    "Idempotency-Key",
    {"type": "string", "pattern": IDEMPOTENCY_KEY_PATTERN, "minLength": 1, "maxLength": 255},
    OpenApiParameter.HEADER,
    required=False,
    description="Repeat a start safely: the same key and body give the first answer again",
)
IF_NONE_MATCH = OpenApiParameter(
    "If-None-Match",
    OpenApiTypes.STR,
    OpenApiParameter.HEADER,
    required=False,
    description="The ETag of an earlier answer: 304 with no body if nothing it shows changed",
)


DRAFT_ID = OpenApiParameter(
    "draft_id", OpenApiTypes.UUID, OpenApiParameter.PATH, description="A draft's id"
)


def _workflow_uuid(value: str) -> uuid.UUID:
    """A workflow id from the path; anything that is not a UUID names no workflow."""
    try:
        return uuid.UUID(value)
    except (ValueError, TypeError, AttributeError):
        raise ApiError(404, "NOT_FOUND", NOT_FOUND) from None


class TenantMember(BasePermission):
    message = access.NO_TENANT

    def has_permission(self, request: Request, view: Any) -> bool:
        return access.is_member(request.user)


def _user(request: Request) -> User:
    user = request.user
    assert isinstance(user, User)
    return user


def _tag_request_id(request: Request) -> None:
    """Errors about a decision or signal carry its requestId, once it can be read.

    Malformed JSON raises ParseError here, for the handler to answer MALFORMED_JSON: DRF
    keeps an empty body after a failed parse, so swallowing the error would turn it into
    a misleading "requestId: This field is required."."""
    data = request.data
    rid = data.get("requestId") if isinstance(data, dict) else None
    if isinstance(rid, str) and 0 < len(rid) <= 128:
        request._request.api_request_id = rid  # type: ignore[attr-defined]


def _scope(request: Request) -> access.Scope | None:
    """The API token's limits, when the request came with a scoped token."""
    auth = request.auth
    return auth if hasattr(auth, "may_start") and hasattr(auth, "may_signal") else None


def _query(request: Request) -> dict[str, str]:
    """The query string as a plain dict: given a QueryDict, DRF reads ``?text=`` as no
    ``text`` at all, where the schema (minLength 1) says it is refused."""
    return request.query_params.dict()


def _decision_body(result: CommandResult) -> Any:
    return compiled(s.DecisionResponse)(result)


def _decision_message(result: CommandResult, decision: str, delegate_to: str) -> str:
    """What a decision did, in the words of the app's buttons, from what the command
    acted on (no read of the workflow; the requester's name from the directory the
    command read): "Sent Expense claim R-8 back to Alice."."""
    acted = result.acted_on
    if acted is None:
        return ""
    raw = raw_definition_for(acted.template_id)
    what = f"{definition_for(acted.template_id).title} {acted.subject_id}"
    if decision == "delegate":
        return f"Handed {what} to {delegate_to}."
    requester = ""
    if acted.submitter:
        directory = TenantDirectory(acted.tenant_id, acted.directory_version)
        person = directory.contacts({acted.submitter}).get(acted.submitter)
        requester = (person.first_name if person else "") or acted.submitter
    return outcome_at(raw, acted.step, decision, requester=requester).done_words(what) + "."


def _command_body(
    request: Request, workflow_id: str, shape: type[s.RequestBody]
) -> tuple[uuid.UUID, dict[str, Any]]:
    """The workflow a command names in its path, and its body checked against ``shape``
    (a 400 naming each bad field); errors carry the body's requestId once it is read."""
    _tag_request_id(request)
    wid = _workflow_uuid(workflow_id)
    body = shape(data=request.data)
    body.is_valid(raise_exception=True)
    return wid, body.validated_data


class TokenView(APIView):
    permission_classes = [AllowAny]
    authentication_classes: list[Any] = []
    throttle_classes = [ScopedRateThrottle]
    throttle_scope = "auth"

    @extend_schema(
        request=s.TokenRequest,
        responses={200: s.TokenResponse},
        summary="Exchange a username and password for a new API token",
    )
    def post(self, request: Request) -> Response | HttpResponse:
        body = s.TokenRequest(data=request.data)
        body.is_valid(raise_exception=True)
        # With the request, so django-axes counts failures and refuses locked-out tries.
        user = authenticate(
            request=request._request,
            username=body.validated_data["username"],
            password=body.validated_data["password"],
        )
        if getattr(request._request, "axes_locked_out", False):
            return lockout_response(request._request)
        if user is None:
            raise ApiError(401, "INVALID_CREDENTIALS", INVALID_CREDENTIALS)
        assert isinstance(user, User)
        token, secret = token_issue(user=user, name="api sign-in")
        return Response(s.TokenResponse({"token": secret, "expiresAt": token.expires_at}).data)


class LogoutView(APIView):
    @extend_schema(
        request=None,
        responses={204: None},
        summary="Revoke the API token this request is made with",
    )
    def post(self, request: Request) -> Response:
        if not isinstance(request.auth, ApiToken):
            raise ApiError(400, "NOT_A_TOKEN", NOT_A_TOKEN)
        token_revoke(token=request.auth)
        return Response(status=204)


@csrf_exempt
def api_not_found(request: HttpRequest, path: str = "") -> HttpResponse:
    """Any other path under /api/: the envelope's 404, whatever DEBUG says."""
    return json_error(request, 404, "NOT_FOUND", NOT_FOUND)


class _SearchSchema(AutoSchema):
    """GET on the collection is the search: its query parameters are the FilterSet's
    (approvals.web.search), documented by drf-spectacular's django-filter extension."""

    def get_filter_backends(self) -> list[Any]:
        return [SearchFilterBackend] if self.method == "GET" else []


class _SearchPage(NamedTuple):
    """What the search answers (``serializers.WorkflowSearchResponse``)."""

    workflows: list[Workflow]


def _started(result: StartResult) -> Response:
    """A start's answer: 201 and the workflow's Location (200 when the start policy
    answered with a running one); a repeat of an Idempotency-Key says so."""
    response = Response(compiled(s.StartResponse)(result), status=200 if result.existing else 201)
    response["Location"] = f"/api/workflows/{result.workflow_id}"
    if result.replayed:
        response["Idempotent-Replayed"] = "true"
    return response


class WorkflowCollectionView(APIView):
    permission_classes = [TenantMember]
    schema = _SearchSchema()
    filterset_class = WorkflowSearch
    queryset = Workflow.objects.none()  # the model, for the schema; the search scopes itself
    parser_classes = [LimitedJSONParser, MultiPartParser]  # multipart: a start with files

    def initialize_request(self, request: HttpRequest, *args: Any, **kwargs: Any) -> Request:
        start_files.prepare(request)  # before anything reads the body
        return super().initialize_request(request, *args, **kwargs)

    @extend_schema(
        request={"application/json": s.StartRequestBody},  # multipart: see the description
        parameters=[IDEMPOTENCY_KEY],
        responses={
            201: s.StartResponse,
            200: OpenApiResponse(
                s.StartResponse,
                description=(
                    "The start policy use_existing: the workflow already running for the "
                    "subject (existing: true)"
                ),
            ),
        },
        summary="Start a workflow",
        description=(
            "With files: send multipart/form-data, this JSON in a part named `body` and "
            "each file in a part named `file`; the files are checked before anything "
            "starts and the answer lists them under `files`."
        ),
    )
    def post(self, request: Request) -> Response:
        raw, files = start_files.body_and_files(request)
        body = s.StartRequestBody(data=raw)
        body.is_valid(raise_exception=True)
        key = request.headers.get("Idempotency-Key")
        if key is not None and not idempotency_key_valid(key):
            raise ApiError(400, "BAD_IDEMPOTENCY_KEY", IDEMPOTENCY_KEY_INVALID)
        v = body.validated_data
        result = workflow_start(
            submitter=_user(request),
            template_key=v["template"],
            subject_type=v["subject"]["type"],
            subject_id=v["subject"]["id"],
            data=v["data"],
            idempotency_key=key,
            scope=_scope(request),
        )
        response = _started(result)
        if files:
            response.data = {
                **response.data,
                "files": start_files.record(
                    user=_user(request),
                    result=result,
                    files=files,
                    request_id=key or uuid.uuid4().hex,
                ),
            }
        return response

    @extend_schema(
        parameters=[s.WorkflowSearchQuery],
        responses={200: s.WorkflowSearchResponse},
        summary="Search workflows",
        operation_id="workflows_search",
    )
    def get(self, request: Request) -> Response:
        search = SearchFilterBackend().get_filterset(request, self.queryset, self)
        assert search is not None
        if not search.is_valid():
            raise translate_validation(search.errors)
        page = s.WorkflowSearchQuery(data=_query(request))
        page.is_valid(raise_exception=True)
        rows = search.results(
            limit=page.validated_data["limit"], offset=page.validated_data["offset"]
        )
        return Response(compiled(s.WorkflowSearchResponse)(_SearchPage(rows)))


class TemplateCollectionView(APIView):
    permission_classes = [TenantMember]

    @extend_schema(
        responses={200: s.TemplateListResponse},
        summary="Workflow templates I may start",
        description=(
            "The newest version of each workflow template of the organisation the caller "
            "may start (its start role, and a token's scope), by key."
        ),
    )
    def get(self, request: Request) -> Response:
        user = _user(request)
        latest = workflow_templates_latest(tenant_id=user.member_tenant_id)
        startable = access.templates_startable(user, latest, _scope(request))
        seen = access.templates_runs_seen(user, startable)
        rows = [
            {
                "key": t.key,
                "title": t.title,
                "version": t.version,
                "may_start": True,
                "may_see_runs": t.key in seen,
            }
            for t in startable
        ]
        return Response(s.TemplateListResponse({"templates": rows}).data)


class WorkflowDetailView(APIView):
    permission_classes = [TenantMember]

    @extend_schema(
        parameters=[WORKFLOW_ID],
        responses={200: s.WorkflowDetail},
        summary=(
            "A workflow: state, open steps with assignees and due times, the next timer, "
            "the running activity's attempts, pinned template version and full history"
        ),
    )
    def get(self, request: Request, workflow_id: str) -> Response:
        wf = workflow_get(user=_user(request), workflow_id=_workflow_uuid(workflow_id))
        if wf is None:
            raise ApiError(404, "NOT_FOUND", NOT_FOUND)
        history = workflow_history(workflow=wf)
        context = {
            "archived": workflow_archived(tenant_id=wf.tenant_id, workflow_id=wf.pk),
            "assignees": workflow_assignees(workflow=wf),
            "history": history,
            "now": workflow_now(workflow=wf, history=history),
        }
        return Response(s.WorkflowDetail(wf, context=context).data)


def _held_body(hold: HeldDecision) -> dict[str, Any]:
    return {
        "requestId": hold.request_id,
        "decision": hold.decision,
        "state": held_state(hold),
        "releaseAt": hold.release_at.isoformat(),
        "reason": hold.refused,
    }


class HeldDecisionView(APIView):
    """A decision held for its undo window: read it, or undo it inside the window."""

    permission_classes = [TenantMember]

    def _own(self, request: Request, workflow_id: str, request_id: str) -> HeldDecision:
        wid = _workflow_uuid(workflow_id)
        hold = HeldDecision.objects.filter(
            workflow_id=wid, request_id=request_id, actor=_user(request)
        ).first()
        if hold is None:
            raise HoldRefused(NOTHING_HELD, NOTHING_HELD_TEXT)
        return hold

    @extend_schema(
        parameters=[WORKFLOW_ID, HELD_REQUEST_ID],
        responses={200: s.HeldDecisionResponse},
        summary="Read a decision you sent with hold: true",
    )
    def get(self, request: Request, workflow_id: str, request_id: str) -> Response:
        return Response(_held_body(self._own(request, workflow_id, request_id)))

    @extend_schema(
        parameters=[WORKFLOW_ID, HELD_REQUEST_ID],
        responses={200: s.HeldDecisionResponse},
        summary="Undo a held decision inside its window (nothing is recorded)",
        description=(
            "409 TOO_LATE_TO_UNDO once it was recorded or its window has passed; "
            "404 NOTHING_HELD for a request id you hold nothing under."
        ),
    )
    def delete(self, request: Request, workflow_id: str, request_id: str) -> Response:
        wid = _workflow_uuid(workflow_id)
        hold = decision_undo(user=_user(request), workflow_id=wid, request_id=request_id)
        return Response(_held_body(hold))


@dataclass(frozen=True)
class _Command:
    """A command as its action reads it: who sends it, to which workflow, the body
    checked against the action's shape, and the API token's limits (None when the
    request came with a session or an unscoped token)."""

    user: User
    workflow_id: uuid.UUID
    body: dict[str, Any]
    scope: access.Scope | None
    path: dict[str, Any]  # the path's other parts (a signal's name)


def _answered(command: _Command, result: CommandResult) -> Response:
    return Response(_decision_body(result))


# The commands a person or a system sends about one workflow, each a POST under
# /api/workflows/{id}/. Every action goes through one flow, ``_run``: parse (the id in
# the path, the body against the action's serializer; errors carry the body's requestId
# once it is read), authorize (membership of the organisation at the door; the rest is
# the service's question to approvals.access, asked under the command's lock), run the
# command through its service, answer. The path and the URL name of each action are on
# its @action; approvals/api/urls.py makes a URL of each. (No docstrings here: the schema
# would take them for the operations' descriptions.)
class WorkflowCommandViewSet(ViewSet):
    permission_classes = [TenantMember]

    def _run(
        self,
        request: Request,
        workflow_id: str,
        shape: type[s.RequestBody],
        run: Callable[[_Command], Any],
        answer: Callable[[_Command, Any], Response] = _answered,
        **path: Any,
    ) -> Response:
        wid, body = _command_body(request, workflow_id, shape)
        command = _Command(_user(request), wid, body, _scope(request), path)
        return answer(command, run(command))

    @extend_schema(
        request=s.DecisionRequest,
        parameters=[WORKFLOW_ID],
        responses={200: s.DecidedResponse, 202: s.HeldDecisionResponse},
        summary="Approve, reject, send back or delegate the current step",
        description=(
            "Recorded at once (200). With hold: true the decision is held for the undo "
            "window and recorded once after it (202, Location of the held decision); "
            "while it is held, another holder's held decision is refused with 409 "
            "BEING_DECIDED. A decision recorded at once meanwhile wins: the held one is "
            "then refused when its window passes (state refused, with the reason)."
        ),
    )
    @action(
        detail=True,
        methods=["post"],
        url_path="decisions",
        url_name="api-decisions",
        name="Decision",
    )
    def decide(self, request: Request, workflow_id: str) -> Response:
        return self._run(request, workflow_id, s.DecisionRequest, _decide, _decided)

    @extend_schema(
        request=s.SignalRequest,
        parameters=[WORKFLOW_ID, SIGNAL_NAME],
        responses={200: s.DecisionResponse},
        summary="Deliver an external signal (a webhook)",
    )
    @action(
        detail=True,
        methods=["post"],
        url_path="signals/<str:name>",
        url_name="api-signal",
        name="Signal",
    )
    def signal(self, request: Request, workflow_id: str, name: str) -> Response:
        return self._run(request, workflow_id, s.SignalRequest, _signal, name=name)

    @extend_schema(
        request=s.CancelRequest,
        parameters=[WORKFLOW_ID],
        responses={200: s.DecisionResponse},
        summary="Cancel a workflow (its submitter or an organisation admin)",
    )
    @action(detail=True, methods=["post"], url_path="cancel", url_name="api-cancel", name="Cancel")
    def cancel(self, request: Request, workflow_id: str) -> Response:
        return self._run(request, workflow_id, s.CancelRequest, _cancel)

    @extend_schema(
        request=s.CommentRequest,
        parameters=[WORKFLOW_ID],
        responses={200: s.DecisionResponse},
        summary="Comment on a request (anyone who may read it, but auditors)",
        description=(
            "Recorded once per requestId in the request's history, on a running or a "
            "finished request. Mails the other participants, and each person the text "
            "mentions as @name."
        ),
    )
    @action(
        detail=True, methods=["post"], url_path="comments", url_name="api-comments", name="Comment"
    )
    def comment(self, request: Request, workflow_id: str) -> Response:
        return self._run(request, workflow_id, s.CommentRequest, _comment)

    @extend_schema(
        request=s.ReassignRequest,
        parameters=[WORKFLOW_ID],
        responses={200: s.DecisionResponse},
        summary="Move a task to another person (organisation admins)",
    )
    @action(
        detail=True, methods=["post"], url_path="reassign", url_name="api-reassign", name="Reassign"
    )
    def reassign(self, request: Request, workflow_id: str) -> Response:
        return self._run(request, workflow_id, s.ReassignRequest, _reassign)

    @extend_schema(
        request=s.AddApproverRequest,
        parameters=[WORKFLOW_ID],
        responses={200: s.DecisionResponse},
        summary="Add an approver to the step a request waits in (organisation admins)",
        description=(
            "The way out when nobody can finish a step: the person gets a task on it "
            "beside whoever holds one (their stand-in does while they are away), recorded "
            "once per requestId with who added them and why. The person must be an active "
            "member of the organisation who holds no task on the step and may approve it "
            "(not the submitter, nor the admin who adds them); the request must be running "
            "and wait in that step."
        ),
    )
    @action(
        detail=True,
        methods=["post"],
        url_path="approvers",
        url_name="api-add-approver",
        name="Add Approver",
    )
    def add_approver(self, request: Request, workflow_id: str) -> Response:
        return self._run(request, workflow_id, s.AddApproverRequest, _add_approver)


# What each command runs: one service call with the parsed command.


def _decide(c: _Command) -> CommandResult | HeldDecision:
    v = c.body
    if v["hold"]:
        if v.get("data") is not None or v.get("delegateTo"):
            raise HoldRefused(NOT_HOLDABLE, NOT_HOLDABLE_TEXT)
        return decision_hold(
            user=c.user,
            workflow_id=c.workflow_id,
            decision=v["decision"],
            request_id=v["requestId"],
            comment=v["comment"],
            on_behalf_of=v.get("onBehalfOf"),
        )
    # Immediate, as before (no look-up of held decisions: two round trips and the
    # token's); a decision another holder holds is then refused when released.
    return workflow_decide(
        user=c.user,
        workflow_id=c.workflow_id,
        decision=v["decision"],
        request_id=v["requestId"],
        comment=v["comment"],
        on_behalf_of=v.get("onBehalfOf"),
        delegate_to=v.get("delegateTo"),
        data=v.get("data"),
    )


def _decided(c: _Command, done: CommandResult | HeldDecision) -> Response:
    """A decision held for the undo window: 202 and where to undo it; one recorded at
    once: the command's answer and what it did in words."""
    if isinstance(done, HeldDecision):
        where = reverse("api-held", args=[str(c.workflow_id), done.request_id])
        return Response(_held_body(done), status=202, headers={"Location": where})
    message = _decision_message(done, c.body["decision"], c.body.get("delegateTo") or "")
    return Response({**_decision_body(done), "message": message})


def _signal(c: _Command) -> CommandResult:
    name = c.path["name"]
    if not re.fullmatch(SIGNAL_NAME_PATTERN, name):
        raise ApiError(400, "VALIDATION_ERROR", SIGNAL_NAME_INVALID)
    return workflow_signal(
        user=c.user,
        workflow_id=c.workflow_id,
        name=name,
        payload=c.body["payload"],
        request_id=c.body["requestId"],
        scope=c.scope,
    )


def _cancel(c: _Command) -> CommandResult:
    return workflow_cancel(
        user=c.user,
        workflow_id=c.workflow_id,
        reason=c.body["reason"],
        request_id=c.body["requestId"],
    )


def _comment(c: _Command) -> CommandResult:
    return workflow_comment(
        user=c.user, workflow_id=c.workflow_id, text=c.body["text"], request_id=c.body["requestId"]
    )


def _reassign(c: _Command) -> CommandResult:
    return workflow_reassign(
        user=c.user,
        workflow_id=c.workflow_id,
        from_user=c.body["fromUser"],
        to_user=c.body["toUser"],
        request_id=c.body["requestId"],
        comment=c.body["comment"],
    )


def _add_approver(c: _Command) -> CommandResult:
    return workflow_add_approver(
        user=c.user,
        workflow_id=c.workflow_id,
        person=c.body["person"],
        step=c.body["step"],
        reason=c.body["reason"],
        request_id=c.body["requestId"],
    )


SHA256 = OpenApiParameter(
    "sha256",
    {"type": "string", "pattern": "^[0-9a-f]{64}$", "minLength": 64, "maxLength": 64},
    OpenApiParameter.PATH,
    description="The file's SHA-256, as the answer to its upload and the history give it",
)


class AttachmentCollectionView(APIView):
    permission_classes = [TenantMember]
    parser_classes = [MultiPartParser]

    def initialize_request(self, request: HttpRequest, *args: Any, **kwargs: Any) -> Request:
        # Before anything reads the body: each file streams to disk, cut off past the limit.
        request._attachment_upload = stream_uploads(request)  # type: ignore[attr-defined]
        return super().initialize_request(request, *args, **kwargs)

    @extend_schema(
        request={"multipart/form-data": s.AttachmentRequest},
        parameters=[WORKFLOW_ID],
        responses={200: s.AttachmentResponse},
        summary="Attach a file (a receipt, a quote) to a request",
    )
    def post(self, request: Request, workflow_id: str) -> Response:
        wid = _workflow_uuid(workflow_id)
        _tag_request_id(request)
        handler = request._request._attachment_upload  # type: ignore[attr-defined]
        body = s.AttachmentRequest(data=request.data)
        if handler.too_large or handler.sent > handler.most:
            # refused (404 first, for a request not theirs to read): a part cut off, or
            # parts past the count the handler keeps, of which it kept no file to read
            attachment_add(
                user=_user(request),
                workflow_id=wid,
                upload=None,
                request_id="",
                too_large=handler.too_large,
                sent=handler.sent,
            )
        body.is_valid(raise_exception=True)
        v = body.validated_data
        added = attachment_add(
            user=_user(request), workflow_id=wid, upload=v["file"], request_id=v["requestId"]
        )
        return Response(s.AttachmentResponse(added).data)


class AttachmentDownloadView(APIView):
    permission_classes = [TenantMember]

    @extend_schema(
        parameters=[WORKFLOW_ID, SHA256],
        responses={
            (200, content_type): OpenApiResponse(OpenApiTypes.BINARY, description="The file")
            for content_type in ACCEPTED_TYPES
        },
        summary="Download a file attached to a request (anyone who may read the request)",
    )
    def get(self, request: Request, workflow_id: str, sha256: str) -> HttpResponseBase:
        wid = _workflow_uuid(workflow_id)
        attachment = attachment_get(user=_user(request), workflow_id=wid, sha256=sha256)
        if attachment is None:
            raise ApiError(404, "NOT_FOUND", NOT_FOUND)
        return attachment_response(attachment)


USERNAME = OpenApiParameter(
    "username", OpenApiTypes.STR, OpenApiParameter.PATH, description="A person's user name"
)


class DeactivateView(APIView):
    permission_classes = [TenantMember]

    @extend_schema(
        request=s.DeactivateRequest,
        parameters=[USERNAME],
        responses={200: s.DeactivateResponse},
        summary="Deactivate a person; their open tasks go to their manager (organisation admins)",
    )
    def post(self, request: Request, username: str) -> Response:
        body = s.DeactivateRequest(data=request.data)
        body.is_valid(raise_exception=True)
        try:
            result = user_deactivate_by_name(
                by=_user(request), username=username, reason=body.validated_data["reason"]
            )
        except UserNotFound as exc:
            raise ApiError(404, "NOT_FOUND", str(exc)) from exc
        except DeactivationRefused as exc:
            raise ApiError(409, "DEACTIVATION_REFUSED", str(exc)) from exc
        return Response(s.DeactivateResponse(result).data)


class MyTasksView(APIView):
    permission_classes = [TenantMember]

    @extend_schema(
        parameters=[s.TaskListQuery, IF_NONE_MATCH],
        responses={
            200: s.TaskPageResponse,
            304: OpenApiResponse(description="Nothing changed since the ETag sent"),
        },
        summary="My open tasks, by due date",
    )
    def get(self, request: Request) -> HttpResponseBase:
        # Conditional (approvals.api.inbox_etag): the tag is read before the tasks, and a
        # client holding it gets a 304 after that one lookup.
        etag = inbox_etag.inbox_etag(
            _user(request),
            query=request.META.get("QUERY_STRING", ""),
            form=request.accepted_renderer.format,
            known=getattr(request._request, inbox_etag.KNOWN, None),
        )
        if inbox_etag.matches(request.META.get("HTTP_IF_NONE_MATCH"), etag):
            return inbox_etag.not_modified(etag)
        query = s.TaskListQuery(data=_query(request))
        if not query.is_valid():
            if "cursor" in query.errors:  # not of the shape we issue: forged like any other
                raise BadCursor(BAD_CURSOR)
            raise ValidationError(query.errors)
        page = task_list_for_user(
            user=_user(request),
            limit=query.validated_data["limit"],
            cursor=query.validated_data.get("cursor"),
        )
        response = Response(compiled(s.TaskPageResponse)(page))
        return inbox_etag.tagged(response, etag)


# -- drafts --------------------------------------------------------------------------------


def _draft_fields(body: s.DraftBody) -> dict[str, Any]:
    v = body.validated_data
    subject = v.get("subject") or {}
    return {
        "template_key": v["template"],
        "subject_type": subject.get("type", ""),
        "subject_id": subject.get("id", ""),
        "data": v["data"],
    }


def _draft_id(value: str) -> uuid.UUID:
    """A draft id from the path; anything that is not a UUID names no draft."""
    return _workflow_uuid(value)


class DraftCollectionView(APIView):
    permission_classes = [TenantMember]

    @extend_schema(
        request=s.DraftBody,
        responses={201: s.DraftOut},
        summary="Save a request as a draft (not routed; only you see it)",
    )
    def post(self, request: Request) -> Response:
        body = s.DraftBody(data=request.data)
        body.is_valid(raise_exception=True)
        draft = draft_save(author=_user(request), scope=_scope(request), **_draft_fields(body))
        response = Response(s.DraftOut(draft).data, status=201)
        response["Location"] = f"/api/drafts/{draft.pk}"
        return response

    @extend_schema(
        responses={200: s.DraftListResponse},
        summary="My drafts not yet submitted, the most recently changed first",
        operation_id="drafts_list",
    )
    def get(self, request: Request) -> Response:
        drafts = drafts_of(user=_user(request))
        return Response(s.DraftListResponse({"drafts": drafts}).data)


class DraftDetailView(APIView):
    permission_classes = [TenantMember]

    @extend_schema(parameters=[DRAFT_ID], responses={200: s.DraftOut}, summary="One of my drafts")
    def get(self, request: Request, draft_id: str) -> Response:
        draft = draft_get(user=_user(request), draft_id=_draft_id(draft_id))
        if draft is None:
            raise ApiError(404, "NOT_FOUND", NOT_FOUND)
        return Response(s.DraftOut(draft).data)

    @extend_schema(
        request=s.DraftBody,
        parameters=[DRAFT_ID],
        responses={200: s.DraftOut},
        summary="Replace what one of my drafts holds",
    )
    def put(self, request: Request, draft_id: str) -> Response:
        did = _draft_id(draft_id)
        body = s.DraftBody(data=request.data)
        body.is_valid(raise_exception=True)
        draft = draft_update(
            author=_user(request), draft_id=did, scope=_scope(request), **_draft_fields(body)
        )
        return Response(s.DraftOut(draft).data)

    @extend_schema(parameters=[DRAFT_ID], responses={204: None}, summary="Delete one of my drafts")
    def delete(self, request: Request, draft_id: str) -> Response:
        draft_delete(author=_user(request), draft_id=_draft_id(draft_id))
        return Response(status=204)


class DraftSubmitView(APIView):
    permission_classes = [TenantMember]

    @extend_schema(
        request=None,
        parameters=[DRAFT_ID],
        responses={
            201: s.StartResponse,
            200: OpenApiResponse(
                s.StartResponse,
                description=(
                    "The start policy use_existing: the workflow already running for the "
                    "subject (existing: true)"
                ),
            ),
        },
        summary=(
            "Submit a draft: starts its workflow as POST /api/workflows does, with the "
            "draft's Idempotency-Key (a second submission answers as the first)"
        ),
    )
    def post(self, request: Request, draft_id: str) -> Response:
        result = draft_submit(
            author=_user(request), draft_id=_draft_id(draft_id), scope=_scope(request)
        )
        return _started(result)
