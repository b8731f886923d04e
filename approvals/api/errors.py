"""One error envelope for every API error: ``{"error": {"code", "message",
"requestId"}}``. ``requestId`` is the decision's or signal's request id when the body
carried one, otherwise the request's correlation id (``X-Request-Id``)."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.http import Http404, HttpRequest, JsonResponse
from rest_framework import exceptions
from rest_framework.response import Response

from templates_engine import CommandRejected
from templates_engine import errors as engine_errors

from ..access import CANNOT_HOLD_TASKS, Forbidden
from ..runtime.commands import Busy, RequestIdReused, WorkflowNotFound
from ..selectors.tasks import BadCursor
from ..services import held_decisions as held
from ..services.admin_operations import ReasonRequired
from ..services.attachments import NO_FILE_CODE, TOO_LARGE_CODE, AttachmentRefused
from ..services.comments import CommentRefused
from ..services.drafts import (
    DRAFT_SUBMITTED_CODE,
    SUBJECT_INVALID_CODE,
    DraftNotFound,
    DraftRefused,
)
from ..services.workflows import (
    SIGNAL_PAYLOAD_TOO_LARGE,
    IdempotencyKeyReused,
    SignalRefused,
    SubjectTaken,
    TemplateNotFound,
    TemplateRetired,
    WorkflowAlreadyRunning,
)


class ApiError(Exception):
    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message


NOT_FOUND = "Not found."
UNSUPPORTED_BODY = "Send the body as application/json (a file as multipart/form-data)."
# A file of another type than those accepted is well-formed and refused: 422.
_ATTACHMENT_STATUS = {TOO_LARGE_CODE: 413, NO_FILE_CODE: 400}
FORBIDDEN = "You may not do this."

_REJECTION_STATUS = {
    engine_errors.NOT_YOUR_STEP: 409,
    engine_errors.ALREADY_DECIDED: 409,
    engine_errors.WORKFLOW_FINISHED: 409,
    engine_errors.NOT_STARTED: 409,
    engine_errors.ALREADY_STARTED: 409,
    engine_errors.INVALID_DATA: 422,
    engine_errors.INVALID_DECISION: 422,
    engine_errors.UNKNOWN_USER: 422,
    engine_errors.ALREADY_TURNING_BACK: 409,
    engine_errors.SEGREGATION_OF_DUTIES: 403,
    engine_errors.INVALID_COMMENT: 422,
    engine_errors.REASON_REQUIRED: 422,
    engine_errors.ALREADY_ASSIGNED: 409,
    engine_errors.NO_EXCHANGE_RATE: 422,
    CANNOT_HOLD_TASKS: 422,
}


_HOLD_STATUS = {held.NOTHING_HELD: 404, held.NOT_HOLDABLE: 422}


def request_id_of(request: Any) -> str:
    rid = getattr(request, "api_request_id", None) or getattr(request, "correlation_id", None)
    return str(rid or "")


def envelope(status: int, code: str, message: str, request_id: str) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, "requestId": request_id}}


def _translate(exc: Exception) -> tuple[int, str, str, Any]:
    if isinstance(exc, ApiError):
        return exc.status, exc.code, exc.message, None
    if isinstance(exc, CommandRejected):
        return _REJECTION_STATUS.get(exc.code, 409), exc.code, exc.message, None
    if isinstance(exc, WorkflowNotFound | DraftNotFound | Http404 | exceptions.NotFound):
        return 404, "NOT_FOUND", NOT_FOUND, None
    if isinstance(exc, TemplateRetired):
        return 422, "TEMPLATE_RETIRED", str(exc), None
    if isinstance(exc, TemplateNotFound):
        return 422, "UNKNOWN_TEMPLATE", str(exc), None
    if isinstance(exc, Forbidden):
        return 403, "FORBIDDEN", exc.message, None
    if isinstance(exc, RequestIdReused):
        return 422, "REQUEST_ID_REUSED", str(exc), None
    if isinstance(exc, SubjectTaken):
        running = isinstance(exc, WorkflowAlreadyRunning)
        code = "WORKFLOW_ALREADY_RUNNING" if running else "WORKFLOW_ALREADY_FINISHED"
        return 409, code, str(exc), None
    if isinstance(exc, AttachmentRefused):
        return _ATTACHMENT_STATUS.get(exc.code, 422), exc.code, exc.message, None
    if isinstance(exc, SignalRefused):
        status = 413 if exc.code == SIGNAL_PAYLOAD_TOO_LARGE else 409
        return status, exc.code, exc.message, None
    if isinstance(exc, held.HoldRefused):
        return _HOLD_STATUS.get(exc.code, 409), exc.code, exc.message, None
    if isinstance(exc, ReasonRequired):
        return 422, engine_errors.REASON_REQUIRED, str(exc), None
    if isinstance(exc, CommentRefused):
        return 422, exc.code, exc.message, None
    if isinstance(exc, DraftRefused):
        status = {DRAFT_SUBMITTED_CODE: 409, SUBJECT_INVALID_CODE: 400}.get(exc.code, 422)
        return status, exc.code, exc.message, None
    if isinstance(exc, IdempotencyKeyReused):
        return 422, "IDEMPOTENCY_KEY_REUSED", str(exc), None
    if isinstance(exc, BadCursor):
        return 400, "BAD_CURSOR", str(exc), None
    if isinstance(exc, Busy):
        return 503, "BUSY", str(exc), None
    if isinstance(exc, exceptions.ParseError):
        return 400, "MALFORMED_JSON", f"The request body is not valid JSON: {exc.detail}", None
    if isinstance(exc, exceptions.ValidationError):
        return 400, "VALIDATION_ERROR", _summarise(exc.detail), exc.detail
    if isinstance(exc, exceptions.NotAuthenticated | exceptions.AuthenticationFailed):
        return 401, "UNAUTHENTICATED", str(exc.detail), None
    if isinstance(exc, exceptions.PermissionDenied):
        return 403, "FORBIDDEN", str(exc.detail), None
    if isinstance(exc, DjangoPermissionDenied):
        return 403, "FORBIDDEN", FORBIDDEN, None
    if isinstance(exc, exceptions.MethodNotAllowed):
        return 405, "METHOD_NOT_ALLOWED", str(exc.detail), None
    if isinstance(exc, exceptions.UnsupportedMediaType):
        return 415, "UNSUPPORTED_MEDIA_TYPE", UNSUPPORTED_BODY, None
    if isinstance(exc, exceptions.NotAcceptable):
        return 406, "NOT_ACCEPTABLE", str(exc.detail), None
    if isinstance(exc, exceptions.Throttled):
        return 429, "THROTTLED", str(exc.detail), None
    if isinstance(exc, exceptions.APIException):
        return exc.status_code, "ERROR", str(exc.detail), None
    raise exc


def _summarise(detail: Any, prefix: str = "") -> str:
    if isinstance(detail, dict):
        parts = [_summarise(v, f"{prefix}{k}.") for k, v in detail.items()]
        return "; ".join(p for p in parts if p)
    if isinstance(detail, list):
        return "; ".join(_summarise(v, prefix) for v in detail)
    return f"{prefix.rstrip('.')}: {detail}" if prefix else str(detail)


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    """DRF's exception handler: every error in the one envelope."""
    try:
        status, code, message, _details = _translate(exc)
    except Exception:
        return None  # a real bug: let Django's 500 handling see it
    request = context.get("request")
    body = envelope(status, code, message, request_id_of(request))
    if isinstance(exc, SubjectTaken):
        # The workflow that holds the subject, to read or to wait for.
        body["error"]["workflowId"] = str(exc.workflow_id)
    response = Response(body, status=status)
    auth_header = getattr(exc, "auth_header", None)
    if auth_header:
        response["WWW-Authenticate"] = auth_header
    wait = getattr(exc, "wait", None)
    if isinstance(exc, exceptions.Throttled) and wait:
        response["Retry-After"] = str(int(wait))
    return response


def json_error(request: HttpRequest, status: int, code: str, message: str) -> JsonResponse:
    return JsonResponse(envelope(status, code, message, request_id_of(request)), status=status)
