"""The hash chain over a workflow's events: each event's hash covers its content and
the hash before it. The command path writes it (``runtime.commands``); the history
check reads it (``audit.verify``). Pure: no database here.

Two formats, named by the event's ``hash_format`` column. Format 1 (NULL in the
column: every event written before format 2 existed) covers the workflow, seq, type,
payload, request id, actor, role, on-behalf-of, time and the hash before. Format 2,
which the command path writes, covers every column of the event: also the tenant, the
schema version, the recorded result and the format itself, so moving an event into
another organisation changes its hash. Format 3 also covers the event's ``recorded``
column: what a reader of the history sees that the payload does not say, as it was when
the event was written (``recorded_fields``): the acting user's username and display
name, the workflow's status after the event, its template and version, and its subject.
So a user row renamed later, or a workflow row edited, changes no hash, and an export
shows the name recorded, never today's. Events are append-only and old ones cannot be
hashed again, so formats 1 and 2 stay verifiable for as long as the history is kept.

Both formats hash the payload and the result as PostgreSQL's jsonb gives them back
(``json_input.stored_form``): the command path hashes before storing, the check hashes
what it reads, and the two must agree whatever spelling of a number the payload held
(``1e+17`` is stored, and read back, as ``100000000000000000``). For what the database
gives back the form changes nothing, so every chain that verified before still does."""

from __future__ import annotations

import decimal
import hashlib
import itertools
import json
import math
from collections.abc import Iterator
from typing import Any, NamedTuple, Protocol

from ..json_input import stored_form


class EventRow(NamedTuple):
    """What an event's hash covers, in the order of the event table's columns
    (``commands._EVENT_COLUMNS``)."""

    workflow_id: Any
    seq: int
    type: str
    payload: dict[str, Any]
    request_id: str | None
    actor_id: int | None
    role: str
    on_behalf_of_id: int | None
    created_at: Any
    prev_hash: str


class HashedEvent(Protocol):
    """What ``event_hash`` reads: an ``EventRow`` or a stored ``WorkflowEvent``."""

    @property
    def prev_hash(self) -> str: ...

    @property
    def workflow_id(self) -> Any: ...

    @property
    def seq(self) -> int: ...

    @property
    def type(self) -> str: ...

    @property
    def payload(self) -> Any: ...

    @property
    def request_id(self) -> str | None: ...

    @property
    def actor_id(self) -> int | None: ...

    @property
    def role(self) -> str: ...

    @property
    def on_behalf_of_id(self) -> int | None: ...

    @property
    def created_at(self) -> Any: ...


# What the ``hash_format`` column holds for each format (format 1 is NULL there).
HASH_V1 = 1
HASH_V2 = 2
HASH_V3 = 3
HASH_FORMAT = HASH_V3  # the format the command path writes


def recorded_fields(
    *,
    actor: Any,
    status: str,
    template_key: str,
    template_version: int,
    subject_type: str,
    subject_id: str,
) -> dict[str, Any]:
    """What format 3 records beside the payload (the ``recorded`` column): ``actor`` is
    the acting user (None for the system), read from the object the command already
    holds, so recording it costs no query."""
    return {
        "actor": actor.username if actor is not None else None,
        "actor_name": actor.get_full_name() if actor is not None else None,
        "status": status,
        "template_key": template_key,
        "template_version": template_version,
        "subject_type": subject_type,
        "subject_id": subject_id,
    }


def event_hash(
    row: HashedEvent, *, tenant_id: int, schema_version: int, result: Any, recorded: Any
) -> str:
    """SHA-256 (format 3) of every column of the event, what it recorded of its actor
    and workflow, and the hash before it: editing, moving or removing any event breaks
    every hash after it."""
    content = _v2_content(row, tenant_id=tenant_id, schema_version=schema_version, result=result)
    content["format"] = HASH_V3
    content["recorded"] = recorded
    return _digest(content)


def event_hash_v2(row: HashedEvent, *, tenant_id: int, schema_version: int, result: Any) -> str:
    """SHA-256 (format 2) of every column of the event but ``recorded``."""
    return _digest(
        _v2_content(row, tenant_id=tenant_id, schema_version=schema_version, result=result)
    )


def _v2_content(
    row: HashedEvent, *, tenant_id: int, schema_version: int, result: Any
) -> dict[str, Any]:
    content = _v1_content(row)
    content["format"] = HASH_V2
    content["tenant"] = tenant_id
    content["schema_version"] = schema_version
    content["result"] = result
    return content


def event_hash_v1(row: HashedEvent) -> str:
    """SHA-256 (format 1) of the event's content without its tenant, schema version and
    result: how events written before format 2 were hashed."""
    return _digest(_v1_content(row))


def stored_event_hash(
    row: HashedEvent,
    *,
    hash_format: int | None,
    tenant_id: int,
    schema_version: int,
    result: Any,
    recorded: Any = None,
) -> str | None:
    """The hash a stored event must carry under the format it names, or None for a
    format this code does not know."""
    if hash_format is None or hash_format == HASH_V1:
        return event_hash_v1(row)
    if hash_format == HASH_V2:
        return event_hash_v2(row, tenant_id=tenant_id, schema_version=schema_version, result=result)
    if hash_format == HASH_V3:
        return event_hash(
            row,
            tenant_id=tenant_id,
            schema_version=schema_version,
            result=result,
            recorded=recorded,
        )
    return None


# -- events hashed before the canonical form -------------------------------------------
#
# Before numbers had one form, the command path hashed a payload's floats as Python
# writes them and jsonb stored them in its own form: an event whose payload held a float
# from 1e16 up (``1e+17``, stored ``100000000000000000``) or ``-0.0`` (stored ``0.0``)
# does not verify as stored. ``sent_spellings`` finds the spelling it was hashed in, from
# the stored values alone (the same numbers, only written as floats), for the audit's
# repair path (``audit.verify``, ``accept_number_forms``): never a silent rewrite.

# Past this many numbers that may have been floats, only "all of them" is tried.
_SPELLINGS_TRIED = 6


def _float_spelling(value: Any) -> float | None:
    """The float that jsonb would have stored as ``value``, or None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int) and abs(value) >= 10**16:
        as_float = float(value)
        if int(decimal.Decimal(repr(as_float))) == value:
            return as_float
        return None
    if isinstance(value, float) and value == 0 and math.copysign(1.0, value) > 0:
        return -0.0
    return None


def _paths(value: Any) -> list[tuple[Any, ...]]:
    """Where the numbers that may have been floats are, in the document's order."""
    found: list[tuple[Any, ...]] = []
    stack: list[tuple[tuple[Any, ...], Any]] = [((), value)]
    while stack:
        path, item = stack.pop()
        if isinstance(item, dict):
            stack.extend(reversed([((*path, k), v) for k, v in item.items()]))
        elif isinstance(item, list):
            stack.extend(reversed([((*path, i), v) for i, v in enumerate(item)]))
        elif _float_spelling(item) is not None:
            found.append(path)
    return found


def _dotted(path: tuple[Any, ...]) -> str:
    return "".join(f"[{k}]" if isinstance(k, int) else f".{k}" for k in path).lstrip(".")


def _respelled(value: Any, paths: tuple[tuple[Any, ...], ...]) -> Any:
    copy = json.loads(json.dumps(value))
    for path in paths:
        holder = copy
        for key in path[:-1]:
            holder = holder[key]
        holder[path[-1]] = _float_spelling(holder[path[-1]])
    return copy


def sent_spellings(
    row: HashedEvent,
    *,
    hash_format: int | None,
    tenant_id: int,
    schema_version: int,
    result: Any,
    recorded: Any = None,
) -> Iterator[tuple[str, str]]:
    """The hashes ``row`` would carry had its payload's numbers been hashed as floats
    before jsonb stored them, each with what was respelled (``data.n =
    100000000000000000 as 1e+17``): every such number at once first, then, for a few,
    each combination."""
    if hash_format not in (None, HASH_V1, HASH_V2, HASH_V3):
        return
    paths = _paths(row.payload)
    if not paths:
        return
    if len(paths) <= _SPELLINGS_TRIED:
        subsets = [
            combo for n in range(len(paths), 0, -1) for combo in itertools.combinations(paths, n)
        ]
    else:
        subsets = [tuple(paths)]
    for subset in subsets:
        payload = _respelled(row.payload, subset)
        content = {**_v1_content(row), "payload": payload}
        if hash_format in (HASH_V2, HASH_V3):
            content.update(
                format=hash_format, tenant=tenant_id, schema_version=schema_version, result=result
            )
        if hash_format == HASH_V3:
            content["recorded"] = recorded
        words = ", ".join(_respelling(row.payload, p) for p in subset)
        yield _raw_digest(content), words


def _respelling(payload: Any, path: tuple[Any, ...]) -> str:
    value = _at(payload, path)
    return f"{_dotted(path)} = {value!r} as {json.dumps(_float_spelling(value))}"


def _at(value: Any, path: tuple[Any, ...]) -> Any:
    for key in path:
        value = value[key]
    return value


def _digest(content: dict[str, Any]) -> str:
    """SHA-256 of ``content`` with its payload and result as jsonb stores them (the
    module's docstring). Only a float jsonb writes otherwise puts ``e+`` (1e+17) or
    ``-0.0`` in the text: without either, the text is hashed as it is, and the payload
    is walked only when one shows (an ``e+`` in a string too, which changes nothing)."""
    blob = _text(content)
    if "e+" in blob or "-0.0" in blob:
        restated = {
            k: stored_form(v) if k in ("payload", "result") else v for k, v in content.items()
        }
        blob = _text(restated)
    return hashlib.sha256(blob.encode()).hexdigest()


def _raw_digest(content: dict[str, Any]) -> str:
    """SHA-256 of ``content`` as it is: how events were hashed before the canonical form."""
    return hashlib.sha256(_text(content).encode()).hexdigest()


def _text(content: dict[str, Any]) -> str:
    return json.dumps(content, sort_keys=True, separators=(",", ":"), default=str)


def _v1_content(row: HashedEvent) -> dict[str, Any]:
    return {
        "prev": row.prev_hash,
        "workflow": str(row.workflow_id),
        "seq": row.seq,
        "type": row.type,
        "payload": row.payload,  # hashed as stored: _digest
        "request_id": row.request_id,
        "actor": row.actor_id,
        "role": row.role,
        "on_behalf_of": row.on_behalf_of_id,
        "created_at": row.created_at.isoformat(),
    }
