"""OpenAPI additions drf-spectacular cannot infer: the error answers every operation
can give, in the one envelope, and the JSON value the parser accepts."""

from __future__ import annotations

from typing import Any

from .. import json_input

ERROR_COMPONENT = "ErrorResponse"
JSON_VALUE_COMPONENT = "JsonValue"
JSON_VALUE_REF = {"$ref": f"#/components/schemas/{JSON_VALUE_COMPONENT}"}
# No NUL in any text: PostgreSQL's jsonb cannot store it (lone surrogates cannot be
# written in UTF-8 at all, so no client can send one but as a \u escape).
NO_NUL = "^[^\\u0000]*$"

# A JSON value as the API parser accepts it (approvals.json_input); the nesting limit
# (json_input.MAX_DEPTH) is said in the description, JSON Schema cannot count levels.
JSON_VALUE_SCHEMA: dict[str, Any] = {
    "description": (
        "Any JSON value without NUL characters, with numbers in the signed 64-bit range, "
        f"nested at most {json_input.MAX_DEPTH} levels."
    ),
    "nullable": True,
    "anyOf": [
        {"type": "string", "pattern": NO_NUL},
        {"type": "integer", "minimum": json_input.INT64_MIN, "maximum": json_input.INT64_MAX},
        {"type": "number", "minimum": json_input.INT64_MIN, "maximum": json_input.INT64_MAX},
        {"type": "boolean"},
        {"type": "array", "items": JSON_VALUE_REF},
        {
            "type": "object",
            "additionalProperties": JSON_VALUE_REF,
            "propertyNames": {"pattern": NO_NUL},
        },
    ],
}
JSON_OBJECT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": JSON_VALUE_REF,
    "propertyNames": {"pattern": NO_NUL},
}

# The error envelope (approvals.api.errors.envelope; serializers.ErrorResponse names
# the same fields, and a test holds the two together).
ERROR_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["error"],
    "properties": {
        "error": {
            "type": "object",
            "required": ["code", "message", "requestId"],
            "properties": {
                "code": {"type": "string", "description": "What went wrong, for programs"},
                "message": {"type": "string", "description": "What went wrong, for people"},
                "requestId": {"type": "string"},
                "workflowId": {
                    "type": "string",
                    "format": "uuid",
                    "description": (
                        "With WORKFLOW_ALREADY_RUNNING and WORKFLOW_ALREADY_FINISHED: the "
                        "workflow that holds the subject"
                    ),
                },
            },
        }
    },
}

_DESCRIPTIONS = {
    400: "Malformed or invalid request",
    401: "Not signed in, or the credentials are wrong",
    403: "Not allowed",
    404: "No such workflow (or not visible to you)",
    406: "The Accept header names no type the API can answer in",
    409: "The workflow is not in a state that allows this",
    413: "The body is larger than the limit",
    415: "The body is not JSON",
    422: "Well-formed, but refused by the workflow template or its rules",
    429: "Too many requests; retry after the Retry-After seconds",
    503: "The workflow is busy; retry",
}
_EVERYWHERE = (400, 401, 403, 406, 429)
_WITH_BODY = (413, 415)
_ON_A_WORKFLOW = (404,)
_COMMANDS = (409, 503)


def _error_statuses(path: str, method: str) -> set[int]:
    statuses = set(_EVERYWHERE)
    if method in ("post", "put"):
        statuses.update(_WITH_BODY)
    if "{draft_id}" in path:
        statuses.add(404)
    if "/drafts" in path and method in ("post", "put", "delete"):
        # A draft's template or data refused (422), a submitted draft changed (409), and
        # a submission refused as any start is (409, 422, 503).
        statuses.update((409, 422, 503))
    if "{workflow_id}" in path:
        statuses.update(_ON_A_WORKFLOW)
        if method == "post":
            # Every command may be refused by the rules (422), including a request id
            # already used for another command (REQUEST_ID_REUSED).
            statuses.update((*_COMMANDS, 422))
    if path.endswith("/workflows") and method == "post":
        statuses.update((409, 422, 503))
    if "{username}" in path:
        statuses.add(404)
        if path.endswith("/deactivate") and method == "post":
            statuses.add(409)
    return statuses


# Answers whose meaning differs by operation: (path suffix, method, status).
_DRAFT_NOT_FOUND = "No such draft of yours (another person's draft is not found either)"
_SPECIFIC = {
    ("/drafts/{draft_id}", "get", 404): _DRAFT_NOT_FOUND,
    ("/drafts/{draft_id}", "put", 404): _DRAFT_NOT_FOUND,
    ("/drafts/{draft_id}", "delete", 404): _DRAFT_NOT_FOUND,
    ("/drafts/{draft_id}/submit", "post", 404): _DRAFT_NOT_FOUND,
    ("/attachments", "post", 413): "The file is larger than the limit (FILE_TOO_LARGE)",
    ("/attachments", "post", 415): "The body is not multipart/form-data",
    ("/attachments", "post", 422): (
        "The file is not of a type accepted here (by default PDF, PNG, JPEG, WebP or "
        "HEIC), told by its content (FILE_TYPE_NOT_ACCEPTED); an image announces more "
        "pixels than APPROVALS_IMAGE_MAX_PIXELS (IMAGE_TOO_LARGE); the request holds its "
        "most files already (TOO_MANY_FILES); or the request id was used for another "
        "command"
    ),
    ("/comments", "post", 422): (
        "The comment is blank, over 2,000 characters or holds a NUL (INVALID_COMMENT), "
        "mentions someone unknown (MENTION_UNKNOWN) or someone who may not read the "
        "request (MENTION_CANNOT_READ), or the request id was used for another command"
    ),
    ("/deactivate", "post", 404): "No such person in your organisation (NOT_FOUND)",
    ("/deactivate", "post", 409): (
        "The person cannot be deactivated now (DEACTIVATION_REFUSED): already deactivated,"
        " or a task of theirs has nobody to go to; the message says which"
    ),
    ("/workflows", "post", 409): (
        "The workflow template's start policy refuses a start for this subject: "
        "WORKFLOW_ALREADY_RUNNING (one is running) or WORKFLOW_ALREADY_FINISHED (one has "
        "finished); error.workflowId names it"
    ),
}


def _description(path: str, method: str, status: int) -> str:
    for (suffix, verb, code), text in _SPECIFIC.items():
        if path.endswith(suffix) and method == verb and status == code:
            return text
    return _DESCRIPTIONS[status]


def add_error_responses(result: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
    """drf-spectacular postprocessing hook: every error an operation can answer, in the
    error envelope, and the JsonValue component the request bodies refer to."""
    schemas = result.setdefault("components", {}).setdefault("schemas", {})
    for component in schemas.values():
        # The server ignores fields it does not know, but still parses them: they too
        # must be JSON within the limits.
        if "properties" in component and "additionalProperties" not in component:
            component["additionalProperties"] = JSON_VALUE_REF
            component["propertyNames"] = {"pattern": NO_NUL}
    schemas[JSON_VALUE_COMPONENT] = JSON_VALUE_SCHEMA
    schemas.setdefault(ERROR_COMPONENT, ERROR_SCHEMA)
    error_ref = {"$ref": f"#/components/schemas/{ERROR_COMPONENT}"}
    for path, operations in result.get("paths", {}).items():
        for method, operation in operations.items():
            if not isinstance(operation, dict) or "responses" not in operation:
                continue
            responses = operation["responses"]
            for status in sorted(_error_statuses(path, method)):
                responses.setdefault(
                    str(status),
                    {
                        "description": _description(path, method, status),
                        "content": {"application/json": {"schema": error_ref}},
                    },
                )
    return result
