"""Check an audit export without the database or this app:

    python -m approvals.audit.offline_verify export.jsonl [--seal-key KEY]

Reads the JSON Lines export (``GET /api/audit/export?format=jsonl``, ``export_audit
--format jsonl``, the admin's download), recomputes every event's hash from the columns
it covers (formats 1 to 3 of ``approvals.runtime.chain``), derives every readable
column again from what the hash covers (``shown_columns``: a column that differs, or
that nothing hashed says, is named with its event), checks that each event links to
the one before it, and, where the export holds whole histories, that
each chain ends at its workflow's recorded version and last hash. With the seal key
(``--seal-key``, or ``APPROVALS_AUDIT_SEAL_KEY`` in the environment) it also checks
every seal's signature, the chain of seals (numbers, each carrying the signature before
it, the heads adding up to the last seal's digest) and that every sealed head still
holds in the export. Prints one ``BROKEN workflow … seq …: what`` line per problem, in
the file's order, the first one first; exits 1 when there is any, 0 otherwise.

Standard library only, on purpose: an auditor runs it on their own machine with any
Python 3.11 or later. It must never import Django or the app (a test holds it so), so
the hash formats are written out here again; a test holds them equal to the app's.

What it cannot tell from an export alone: events written since the last seal that were
rewritten along with every hash after them (no seal holds them yet); a workflow deleted
whole (unless a seal names it); and events older than two seal intervals that no seal
covers (the database check knows the time and the interval; the export does not)."""

from __future__ import annotations

import argparse
import hashlib
import hmac
import json
import os
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TextIO

HASH_V1 = 1
HASH_V2 = 2
HASH_V3 = 3
_SEAL_FORMAT = "approvals-chain-seal-v1"
_CHAINED_SEAL_FORMAT = "approvals-chain-seal-v2"

MISSING = "missing (the next event is seq {next})"
UNLINKED = "does not link to the event before it (prev_hash)"
EDITED = "its content does not match its hash (edited)"
UNKNOWN_FORMAT = "hashed in a format this version does not know ({format})"
OLDER_FORMAT = "hashed in an older format than the event before it"
OUT_OF_ORDER = "comes after seq {seq} of its workflow in the file (repeated or out of order)"
TAIL_GONE = "events {first}..{last} are gone (the workflow records version {last})"
PAST_VERSION = "events past the recorded version {version}"
LAST_HASH = "the last event's hash is not the workflow's last_hash"
UNREADABLE = "line {line} is not an event or a seal of the export: {why}"
SEAL_OTHER_KEY = "{seal}: signed with another key ({key_id}); cannot check it with this one"
SEAL_BAD_SIGNATURE = "{seal}: its signature does not verify"
SEAL_HEADS_COUNT = "{seal}: holds {held} heads but says {count}"
SEAL_HEADS_DIGEST = "{seal}: its heads do not hash to its digest"
SEALS_MISSING = "seals numbered {first} to {last} of {tenant} are gone (the next is number {next})"
SEAL_REPEATED = "{seal}: a second seal numbered {number} of {tenant}"
SEAL_UNLINKED = "{seal}: does not carry the signature of the seal numbered before it"
SEALS_DISAGREE = (
    "{seal}: the heads the seals of {tenant} list do not add up to the {count} workflow(s) it "
    "covers (a sealed workflow is gone, or a seal was lost)"
)
SEALED_MISSING = "sealed by {seal}, now missing"
SEALED_REWRITTEN = "no longer matches the head sealed by {seal} (rewritten)"


@dataclass(frozen=True)
class Problem:
    workflow_id: str | None
    seq: int | None
    what: str

    def __str__(self) -> str:
        where = f"workflow {self.workflow_id}" if self.workflow_id else "seals"
        if self.seq is not None:
            where += f" seq {self.seq}"
        return f"{where}: {self.what}"


@dataclass
class _Chain:
    """One workflow's chain as far as the file has gone."""

    seq: int = 0
    hash: str = ""
    format: int = HASH_V1
    version: int | None = None
    last_hash: str | None = None
    whole: bool = False
    at_sealed: dict[int, str] = field(default_factory=dict)


@dataclass
class Report:
    problems: list[Problem] = field(default_factory=list)
    events: int = 0
    workflows: int = 0
    seals: int = 0
    seals_checked: bool = False
    daily_seals: int = 0
    proofs: int = 0  # workflows whose proof leads to their daily seal's root

    @property
    def ok(self) -> bool:
        return not self.problems

    def summary(self) -> str:
        if self.problems:
            return f"{len(self.problems)} problem(s) found; the first: {self.problems[0]}"
        sealed = (
            f"; {self.seals} seal(s) check"
            if self.seals_checked
            else f"; {self.seals} seal(s) not checked (no seal key)"
        )
        if self.daily_seals:
            sealed += f"; {self.daily_seals} daily seal(s)" + (
                " check" if self.seals_checked else " not checked"
            )
        if self.proofs:
            sealed += f"; {self.proofs} workflow(s) in its daily seal (audit path checked)"
        return (
            f"OK: {self.events} event(s) of {self.workflows} workflow(s) recompute and "
            f"chain{sealed}."
        )


# -- the hash formats (as approvals.runtime.chain writes them) ---------------------------


# Built once: ``json.dumps`` with these options builds an encoder on every call, a
# tenth of the time an event takes to check.
_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), default=str).encode


def _digest(content: Mapping[str, Any]) -> str:
    return hashlib.sha256(_CANONICAL(content).encode()).hexdigest()


def event_hash(row: Mapping[str, Any]) -> str | None:
    """The hash an exported event must carry under its ``hash_format``; None for a
    format this verifier does not know."""
    content: dict[str, Any] = {
        "prev": row["prev_hash"],
        "workflow": row["workflow_id"],
        "seq": row["seq"],
        "type": row["type"],
        "payload": row["payload"],
        "request_id": row["request_id"],
        "actor": row["actor_id"],
        "role": row["role"],
        "on_behalf_of": row["on_behalf_of_id"],
        "created_at": row["created_at"],
    }
    fmt = row.get("hash_format")
    if fmt is None or fmt == HASH_V1:
        return _digest(content)
    if fmt not in (HASH_V2, HASH_V3):
        return None
    content["format"] = fmt
    content["tenant"] = row["tenant_id"]
    content["schema_version"] = row["schema_version"]
    content["result"] = row["result"]
    if fmt == HASH_V3:
        content["recorded"] = row["recorded"]
    return _digest(content)


# -- what each column of an export must say (approvals.audit.export writes them so) ------

# Columns the hash covers as they are.
HASHED_COLUMNS: tuple[str, ...] = (
    "workflow_id",
    "seq",
    "type",
    "role",
    "prev_hash",
    "hash",
    "tenant_id",
    "created_at",
    "payload",
    "request_id",
    "actor_id",
    "on_behalf_of_id",
    "schema_version",
    "result",
    "recorded",
    "hash_format",
)
# Columns derived from what the hash covers (``shown_columns``).
SHOWN_COLUMNS: tuple[str, ...] = (
    "step",
    "decision",
    "actor",
    "actor_name",
    "on_behalf_of",
    "comment",
    "time",
    "template_key",
    "template_version",
    "subject_type",
    "subject_id",
    "status",
)
# The workflow's recorded head, which the chain must end at (checked with the chain).
HEAD_COLUMNS: tuple[str, ...] = ("workflow_version", "workflow_last_hash")
# Taken from ``recorded`` (format 3); empty for events hashed before it.
_RECORDED = ("actor_name", "template_key", "template_version", "subject_type", "subject_id")

COLUMN_DIFFERS = "column {column} says {shown}; its hashed event says {hashed}"
COLUMN_UNKNOWN = "column {column} is not derived from the hashed event"
COLUMN_MISSING = "column {column} is missing"
NOT_HASHED = "column recorded is not covered by its hash format ({format})"


def _text(value: Any) -> str | None:
    """A payload's value as a column shows it: text as it is, none as None, any other
    value as its JSON."""
    if value is None or isinstance(value, str):
        return value
    return _CANONICAL(value)


def utc_time(created_at: str) -> str:
    """The ``time`` column: ``created_at`` (the text hashed) in UTC."""
    import datetime as _dt

    at = _dt.datetime.fromisoformat(created_at).astimezone(_dt.UTC)
    return at.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def shown_columns(row: Mapping[str, Any]) -> dict[str, Any]:
    """What each readable column of an exported event must say, from the fields its hash
    covers alone. The actor's names, the template, the subject and the status after the
    event come from ``recorded`` (hash format 3), as they were when the event was
    written; an event hashed before format 3 recorded none of them, so they are empty
    (the actor's name is then the one its payload carries, a decision's)."""
    payload = row["payload"] if isinstance(row["payload"], dict) else {}
    fmt = row.get("hash_format")
    recorded = row.get("recorded") if fmt == HASH_V3 else None
    recorded = recorded if isinstance(recorded, dict) else {}
    actor = recorded["actor"] if fmt == HASH_V3 and "actor" in recorded else payload.get("actor")
    shown = {
        "step": _text(payload.get("step")),
        "decision": _text(payload.get("decision")),
        "actor": actor if isinstance(actor, str) else None,
        "on_behalf_of": _text(payload.get("on_behalf_of")),
        "comment": _text(payload.get("comment")) or "",
        "time": utc_time(str(row["created_at"])),
        "status": recorded.get("status"),
    }
    shown.update((name, recorded.get(name)) for name in _RECORDED)
    return shown


def column_problems(row: Mapping[str, Any], extra: Sequence[str] = ()) -> list[str]:
    """Every column of an exported event that is not what its hashed fields say, or
    that nothing hashed says (``row`` already recomputes to its hash); ``extra`` names
    columns a file of another kind may carry (an archive's event ids)."""
    problems = []
    for column, hashed in shown_columns(row).items():
        if column not in row:
            problems.append(COLUMN_MISSING.format(column=column))
        elif row[column] != hashed:
            problems.append(
                COLUMN_DIFFERS.format(
                    column=column, shown=json.dumps(row[column]), hashed=json.dumps(hashed)
                )
            )
    known = {*HASHED_COLUMNS, *SHOWN_COLUMNS, *HEAD_COLUMNS, *extra}
    problems.extend(COLUMN_UNKNOWN.format(column=c) for c in row if c not in known)
    if row.get("hash_format") != HASH_V3 and row.get("recorded") is not None:
        problems.append(NOT_HASHED.format(format=row.get("hash_format") or HASH_V1))
    return problems


# -- seals (as approvals.audit.seal signs them) ------------------------------------------


def key_id(key: bytes) -> str:
    return hashlib.sha256(b"key-id:" + key).hexdigest()[:16]


def heads_digest(heads: Mapping[str, Any]) -> str:
    h = hashlib.sha256()
    for workflow_id in sorted(heads):
        version, last_hash = heads[workflow_id]
        h.update(f"{workflow_id}:{version}:{last_hash}\n".encode())
    return h.hexdigest()


def seal_signature(seal: Mapping[str, Any], key: bytes) -> str:
    if seal.get("number") is None:
        message = "\n".join(
            (
                _SEAL_FORMAT,
                seal["tenant_slug"],
                seal["sealed_at"],
                str(seal["count"]),
                seal["digest"],
            )
        )
    else:
        message = "\n".join(
            (
                _CHAINED_SEAL_FORMAT,
                str(seal["tenant_id"]),
                seal["tenant_slug"],
                str(seal["number"]),
                seal.get("prev_signature") or "",
                seal["sealed_at"],
                str(seal["count"]),
                seal["digest"],
                heads_digest(seal["heads"]),
            )
        )
    return hmac.new(key, message.encode(), hashlib.sha256).hexdigest()


def _seal_name(seal: Mapping[str, Any]) -> str:
    if seal.get("number") is None:
        return f"the seal of {seal.get('tenant_slug')} at {seal.get('sealed_at')}"
    return f"seal number {seal['number']} of {seal.get('tenant_slug')} ({seal.get('sealed_at')})"


def _seal_problems(
    seals: Sequence[Mapping[str, Any]], key: bytes
) -> Iterator[Problem | tuple[str, int, str, str]]:
    """Problems of the seals themselves; and (workflow, version, hash, seal name) for
    every head a seal that verifies holds."""
    next_number: dict[Any, int] = {}
    prev_signature: dict[Any, str] = {}
    last: dict[Any, Mapping[str, Any] | None] = {}
    heads: dict[Any, dict[str, Any]] = {}
    for seal in seals:
        name = _seal_name(seal)
        tenant = seal.get("tenant_slug")
        held = seal.get("heads") if isinstance(seal.get("heads"), dict) else {}
        assert isinstance(held, dict)
        numbered = seal.get("number") is not None
        if numbered:
            number = int(seal["number"])
            want = next_number.get(tenant, 1)
            if number < want:
                yield Problem(
                    None, None, SEAL_REPEATED.format(seal=name, number=number, tenant=tenant)
                )
            elif number > want:
                yield Problem(
                    None,
                    None,
                    SEALS_MISSING.format(first=want, last=number - 1, tenant=tenant, next=number),
                )
            if (seal.get("prev_signature") or "") != prev_signature.get(tenant, ""):
                yield Problem(None, None, SEAL_UNLINKED.format(seal=name))
            next_number[tenant] = number + 1
            prev_signature[tenant] = seal.get("signature") or ""
        problem = None
        if not numbered and len(held) != seal.get("count"):
            problem = SEAL_HEADS_COUNT.format(seal=name, held=len(held), count=seal.get("count"))
        elif not numbered and heads_digest(held) != seal.get("digest"):
            problem = SEAL_HEADS_DIGEST.format(seal=name)
        elif seal.get("key_id") != key_id(key):
            problem = SEAL_OTHER_KEY.format(seal=name, key_id=seal.get("key_id"))
        elif not hmac.compare_digest(seal_signature(seal, key), str(seal.get("signature"))):
            problem = SEAL_BAD_SIGNATURE.format(seal=name)
        if problem is not None:
            yield Problem(None, None, problem)
            if numbered:
                last[tenant] = None
            continue
        if numbered:
            last[tenant] = seal
            heads.setdefault(tenant, {}).update(held)
        for workflow_id, (version, last_hash) in held.items():
            yield (str(workflow_id), int(version), str(last_hash), name)
    for tenant, final in last.items():
        if final is None:
            continue
        every = heads.get(tenant, {})
        if len(every) != final.get("count") or heads_digest(every) != final.get("digest"):
            yield Problem(
                None,
                None,
                SEALS_DISAGREE.format(seal=_seal_name(final), tenant=tenant, count=final["count"]),
            )


# -- daily seals and their proofs (as approvals.audit.daily_seal writes them) -------------

DAILY_SEAL_FORMAT = "approvals-daily-seal-v1"


def merkle_leaf(workflow_id: str, seq: int, head_hash: str) -> bytes:
    """RFC 6962's leaf hash (0x00 before the data) of one workflow's head."""
    return hashlib.sha256(b"\x00" + f"{workflow_id}:{seq}:{head_hash}".encode()).digest()


def merkle_node(left: bytes, right: bytes) -> bytes:
    """RFC 6962's inner hash (0x01 before the two children)."""
    return hashlib.sha256(b"\x01" + left + right).digest()


class MerkleRoot:
    """The RFC 6962 root of leaves given one at a time, in order, holding one hash per
    bit of the count (a stack of perfect subtrees, folded from the right at the end)."""

    def __init__(self) -> None:
        self.count = 0
        self._stack: list[tuple[int, bytes]] = []

    def add(self, leaf: bytes) -> None:
        self.count += 1
        size, node = 1, leaf
        while self._stack and self._stack[-1][0] == size:
            left_size, left = self._stack.pop()
            size, node = left_size + size, merkle_node(left, node)
        self._stack.append((size, node))

    def root(self) -> str:
        if not self._stack:
            return hashlib.sha256(b"").hexdigest()
        acc = self._stack[-1][1]
        for _, node in reversed(self._stack[:-1]):
            acc = merkle_node(node, acc)
        return acc.hex()


def merkle_path(leaves: Sequence[bytes], index: int) -> list[str]:
    """RFC 6962's audit path of leaf ``index`` among ``leaves`` (leaf hashes), the
    sibling nearest the leaf first."""

    def subtree(lo: int, hi: int) -> bytes:
        if hi - lo == 1:
            return leaves[lo]
        k = _split(hi - lo)
        return merkle_node(subtree(lo, lo + k), subtree(lo + k, hi))

    path: list[str] = []
    lo, hi = 0, len(leaves)
    while hi - lo > 1:
        k = _split(hi - lo)
        if index < lo + k:
            path.append(subtree(lo + k, hi).hex())
            hi = lo + k
        else:
            path.append(subtree(lo, lo + k).hex())
            lo = lo + k
    path.reverse()
    return path


def _split(n: int) -> int:
    """The largest power of two below ``n`` (n > 1)."""
    k = 1
    while k * 2 < n:
        k *= 2
    return k


def merkle_included(leaf: bytes, index: int, count: int, path: Sequence[str], root: str) -> bool:
    """Does ``path`` lead from ``leaf`` at ``index`` of ``count`` leaves to ``root``?
    (RFC 9162, 2.1.3.2.)"""
    if not 0 <= index < count:
        return False
    fn, sn, r = index, count - 1, leaf
    try:
        siblings = [bytes.fromhex(p) for p in path]
    except (ValueError, TypeError):
        return False
    for p in siblings:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            r = merkle_node(p, r)
            if not fn & 1:
                while not fn & 1 and fn != 0:
                    fn >>= 1
                    sn >>= 1
        else:
            r = merkle_node(r, p)
        fn >>= 1
        sn >>= 1
    return sn == 0 and hmac.compare_digest(r.hex(), root)


def daily_signature(seal: Mapping[str, Any], key: bytes) -> str:
    """The HMAC-SHA256 of a daily seal: its organisation, day, leaf count, root and the
    signature of the day before's seal."""
    message = "\n".join(
        (
            DAILY_SEAL_FORMAT,
            str(seal["tenant_id"]),
            str(seal["tenant_slug"]),
            str(seal["day"]),
            str(seal["count"]),
            str(seal["root"]),
            str(seal.get("prev_signature") or ""),
        )
    )
    return hmac.new(key, message.encode(), hashlib.sha256).hexdigest()


def day_words(day: Any) -> str:
    """2024-03-05 as 5 March 2024 (the text as it is when it is not a day)."""
    import datetime as _dt

    try:
        d = _dt.date.fromisoformat(str(day))
        return f"{d.day} {d:%B %Y}"
    except ValueError:
        return str(day)


DAILY_OTHER_KEY = "the daily seal of {tenant} for {day}: signed with another key ({key_id})"
DAILY_BAD_SIGNATURE = "the daily seal of {tenant} for {day}: its signature does not verify"
DAILY_GONE = (
    "the daily seals of {tenant} for {first} to {last} are gone (the seal of {day} follows "
    "that of {before})"
)
DAILY_FIRST_GONE = (
    "the daily seals of {tenant} before {day} are gone (its seal carries the signature of a "
    "day before it)"
)
DAILY_UNLINKED = (
    "the daily seal of {tenant} for {day}: does not carry the signature of the seal of "
    "{before} (rewritten)"
)
DAILY_NO_SEAL = "its proof names the daily seal of {tenant} for {day}, which is not in the file"
DAILY_NOT_INCLUDED = (
    "not included in the daily seal of {tenant} for {day}: its head at the day's end (seq "
    "{seq}, hash {hash}) with the audit path does not lead to the sealed root {root}"
)


def daily_chain_problems(seals: Sequence[Mapping[str, Any]], key: bytes) -> Iterator[str]:
    """The problems of one organisation's daily seals, by day: signatures, and each
    carrying the signature of the day before (a day deleted, or rewritten, shows)."""
    import datetime as _dt

    before: Mapping[str, Any] | None = None
    for seal in sorted(seals, key=lambda s: str(s.get("day"))):
        tenant, day = seal.get("tenant_slug"), day_words(seal.get("day"))
        if seal.get("key_id") != key_id(key):
            yield DAILY_OTHER_KEY.format(tenant=tenant, day=day, key_id=seal.get("key_id"))
        elif not hmac.compare_digest(daily_signature(seal, key), str(seal.get("signature"))):
            yield DAILY_BAD_SIGNATURE.format(tenant=tenant, day=day)
        prev = str(seal.get("prev_signature") or "")
        if before is None:
            if prev:
                yield DAILY_FIRST_GONE.format(tenant=tenant, day=day)
        else:
            this = _dt.date.fromisoformat(str(seal["day"]))
            last = _dt.date.fromisoformat(str(before["day"]))
            if this - last > _dt.timedelta(days=1):
                yield DAILY_GONE.format(
                    tenant=tenant,
                    first=day_words(last + _dt.timedelta(days=1)),
                    last=day_words(this - _dt.timedelta(days=1)),
                    day=day,
                    before=day_words(last),
                )
            elif prev != before.get("signature"):
                yield DAILY_UNLINKED.format(tenant=tenant, day=day, before=day_words(last))
        before = seal


def proof_problem(proof: Mapping[str, Any], seal: Mapping[str, Any] | None) -> str | None:
    """Why ``proof`` (one workflow's leaf and audit path) does not show the workflow in
    ``seal`` (the daily seal it names), or None when it does."""
    tenant, day = proof.get("tenant_slug"), day_words(proof.get("day"))
    if seal is None:
        return DAILY_NO_SEAL.format(tenant=tenant, day=day)
    leaf = merkle_leaf(str(proof["workflow_id"]), int(proof["seq"]), str(proof["hash"]))
    if int(proof.get("count", -1)) != seal.get("count") or not merkle_included(
        leaf, int(proof["index"]), int(seal["count"]), proof.get("path") or [], str(seal["root"])
    ):
        return DAILY_NOT_INCLUDED.format(
            tenant=tenant,
            day=day,
            seq=proof.get("seq"),
            hash=str(proof.get("hash"))[:16] + "…",
            root=str(seal.get("root"))[:16] + "…",
        )
    return None


# -- the export's statement (as approvals.audit.export writes it, its last line) ---------
#
# What the export says of itself, signed with the seal key: its organisation and
# filters, how many events it holds and the SHA-256 of their ``workflow_id:seq:hash``
# lines in the file's order, and every workflow a seal (or a proof) in the file names
# that the export leaves out on purpose (its filters). A sealed workflow neither in the
# file nor listed there was taken out of the file.

STATEMENT_FORMAT = "approvals-export-v1"
STATEMENT_MISSING = "the export's signed statement (its last line) is missing"
STATEMENT_REPEATED = "the export carries more than one statement"
STATEMENT_UNSIGNED = "the export's statement is not signed (exported without a seal key)"
STATEMENT_OTHER_KEY = "the export's statement is signed with another key ({key_id})"
STATEMENT_BAD_SIGNATURE = "the export's statement: its signature does not verify"
STATEMENT_COUNT = (
    "the export holds {held} event(s) but its statement says {count} (lines were added or removed)"
)
STATEMENT_DIGEST = "the export's events are not the ones its statement lists"
SEALED_ABSENT = (
    "sealed by {seal}, but not in the export and not among the workflows its statement "
    "leaves out (its lines were removed)"
)


def events_line(workflow_id: str, seq: int, event_hash: str) -> bytes:
    """One event's line in the statement's digest."""
    return f"{workflow_id}:{seq}:{event_hash}\n".encode()


def statement_signature(statement: Mapping[str, Any], key: bytes) -> str:
    """The HMAC-SHA256 of every field of the statement but its signature."""
    body = {k: v for k, v in statement.items() if k != "signature"}
    message = STATEMENT_FORMAT + "\n" + _CANONICAL(body)
    return hmac.new(key, message.encode(), hashlib.sha256).hexdigest()


def _statement_problems(
    statements: Sequence[Mapping[str, Any]], key: bytes | None, sealed_file: bool
) -> Iterator[str]:
    """The statement's own problems: missing (from a file with seals), repeated, or not
    signed with ``key``."""
    if not statements:
        if sealed_file:
            yield STATEMENT_MISSING
        return
    if len(statements) > 1:
        yield STATEMENT_REPEATED
    statement = statements[0]
    if key is None:
        return
    if not statement.get("signature"):
        yield STATEMENT_UNSIGNED
    elif statement.get("key_id") != key_id(key):
        yield STATEMENT_OTHER_KEY.format(key_id=statement.get("key_id"))
    elif not hmac.compare_digest(statement_signature(statement, key), str(statement["signature"])):
        yield STATEMENT_BAD_SIGNATURE


def _tally_problems(statement: Mapping[str, Any], events: int, digest: str) -> Iterator[str]:
    if statement.get("events") != events:
        yield STATEMENT_COUNT.format(held=events, count=statement.get("events"))
    elif statement.get("digest") != digest:
        yield STATEMENT_DIGEST


# -- the check ---------------------------------------------------------------------------


# Bytes of the file each worker process reads, hashes and hands back at a time.
_RANGE_BYTES = 4 * 1024 * 1024
_SEAL_START = b'{"seal"'
_DAILY_START = b'{"daily_seal"'
_PROOF_START = b'{"proof"'
_STATEMENT_START = b'{"export"'
_NOT_EVENTS = (_SEAL_START, _DAILY_START, _PROOF_START, _STATEMENT_START)

# What a worker hands back for one line: an event's (workflow, seq, prev_hash, hash,
# the hash recomputed (None: unknown format), hash_format, workflow_version,
# workflow_last_hash, the problems of its columns); or a line it could not read: (None,
# line number in the range, why).
_Scanned = tuple[Any, ...]


def _ranges(
    path: str, size: int, extra: tuple[str, ...]
) -> list[tuple[str, int, int, tuple[str, ...]]]:
    """The file cut into pieces of about ``size`` bytes, each ending at a line's end."""
    total = os.path.getsize(path)
    cuts = [0]
    with open(path, "rb") as f:
        while cuts[-1] + size < total:
            f.seek(cuts[-1] + size)
            f.readline()
            if f.tell() >= total:
                break
            cuts.append(f.tell())
    cuts.append(total)
    return [(path, a, b, extra) for a, b in zip(cuts, cuts[1:], strict=False) if b > a]


def _scan(piece: tuple[str, int, int, tuple[str, ...]]) -> tuple[int, list[_Scanned]]:
    """Read and hash the events of one piece of the file: (its line count, the lines)."""
    path, start, end, extra = piece
    out: list[_Scanned] = []
    lines = 0
    with open(path, "rb") as f:
        f.seek(start)
        for raw in f.read(end - start).splitlines():
            lines += 1
            if not raw.strip() or raw.startswith(_NOT_EVENTS):
                continue
            try:
                row = json.loads(raw)
                fmt = row.get("hash_format")
                out.append(
                    (
                        str(row["workflow_id"]),
                        int(row["seq"]),
                        row["prev_hash"],
                        row["hash"],
                        event_hash(row),
                        fmt,
                        row.get("workflow_version"),
                        row.get("workflow_last_hash"),
                        column_problems(row, extra),
                    )
                )
            except (ValueError, KeyError, TypeError, AttributeError) as exc:
                out.append((None, lines, f"{type(exc).__name__} {exc}"))
    return lines, out


def _scanned(path: str, jobs: int, extra: tuple[str, ...]) -> Iterator[tuple[int, list[_Scanned]]]:
    """Each piece of the file, hashed, in the file's order: in ``jobs`` processes."""
    pieces = _ranges(path, _RANGE_BYTES, extra)
    if jobs <= 1 or len(pieces) <= 1:
        yield from map(_scan, pieces)
        return
    import multiprocessing

    with multiprocessing.get_context("spawn").Pool(jobs) as pool:
        yield from pool.imap(_scan, pieces)


def _seal_lines(path: str) -> dict[str, list[dict[str, Any]]]:
    """The seals, daily seals and proofs of the file, by kind."""
    found: dict[str, list[dict[str, Any]]] = {
        "seal": [],
        "daily_seal": [],
        "proof": [],
        "export": [],
    }
    with open(path, "rb") as f:
        for line in f:
            if line.startswith(_NOT_EVENTS):
                ((kind, value),) = json.loads(line).items()
                found[kind].append(value)
    return found


def _daily_problems(
    found: Mapping[str, list[dict[str, Any]]],
    key: bytes | None,
    sealed: dict[str, list[tuple[int, str, str]]],
) -> Iterator[Problem]:
    """The daily seals' problems (with the key) and the proofs'; each proof that leads
    to its day's root puts its leaf in ``sealed``, for the chain to hold it."""
    by_tenant: dict[Any, list[dict[str, Any]]] = {}
    for seal in found["daily_seal"]:
        by_tenant.setdefault(seal.get("tenant_slug"), []).append(seal)
    if key is not None:
        for seals in by_tenant.values():
            for text in daily_chain_problems(seals, key):
                yield Problem(None, None, text)
    days = {(s.get("tenant_slug"), str(s.get("day"))): s for s in found["daily_seal"]}
    for proof in found["proof"]:
        wid = str(proof.get("workflow_id"))
        problem = proof_problem(proof, days.get((proof.get("tenant_slug"), str(proof.get("day")))))
        if problem is not None:
            yield Problem(wid, None, problem)
            continue
        name = f"the daily seal of {proof.get('tenant_slug')} for {day_words(proof.get('day'))}"
        sealed.setdefault(wid, []).append((int(proof["seq"]), str(proof["hash"]), name))


def verify_export(
    path: str,
    *,
    seal_key: bytes | None = None,
    jobs: int | None = None,
    extra_columns: tuple[str, ...] = (),
) -> Report:
    """Every problem in the export at ``path``, in the file's order (a seal's
    problems after the events'). ``jobs`` processes hash the events (every CPU when
    None); one walks the chains. ``extra_columns``: columns beside an event's that a
    file of another kind carries (an archive: ``event_id``)."""
    report = Report()
    # Seals come last in the file; their heads are wanted while the events go by.
    found = _seal_lines(path)
    sealed: dict[str, list[tuple[int, str, str]]] = {}
    seal_problems = _seals_read(found, seal_key, sealed, report)
    statements = found["export"]
    tally = hashlib.sha256()
    jobs = (os.cpu_count() or 1) if jobs is None else jobs
    chains = _chains_walked(path, jobs, extra_columns, sealed, report, tally)
    report.workflows = len(chains)
    if statements:
        report.problems.extend(
            Problem(None, None, p)
            for p in _tally_problems(statements[0], report.events, tally.hexdigest())
        )
    left_out = {str(w) for w in (statements[0].get("left_out") or [])} if statements else set()
    for wid, heads in sealed.items():
        if wid not in chains and wid not in left_out:
            report.problems.append(Problem(wid, None, SEALED_ABSENT.format(seal=heads[-1][2])))
    for wid, chain in chains.items():
        report.problems.extend(_chain_end_problems(wid, chain, sealed.get(wid, ())))
    report.problems.extend(seal_problems)
    return report


def _seals_read(
    found: dict[str, list[dict[str, Any]]],
    seal_key: bytes | None,
    sealed: dict[str, list[tuple[int, str, str]]],
    report: Report,
) -> list[Problem]:
    """The problems of the file's seals, proofs and export statements; fills ``sealed``
    (workflow id -> the version, last hash and name of each seal that vouches for it)
    and the report's counts of seals."""
    seals = found["seal"]
    report.seals = len(seals)
    report.daily_seals = len(found["daily_seal"])
    problems = list(_daily_problems(found, seal_key, sealed))
    report.proofs = len(found["proof"]) - sum(p.workflow_id is not None for p in problems)
    if seal_key is not None:
        report.seals_checked = True
        for item in _seal_problems(seals, seal_key):
            if isinstance(item, Problem):
                problems.append(item)
            else:
                wid, version, last_hash, name = item
                sealed.setdefault(wid, []).append((version, last_hash, name))
    sealed_file = bool(seals or found["daily_seal"] or found["proof"])
    problems.extend(
        Problem(None, None, p) for p in _statement_problems(found["export"], seal_key, sealed_file)
    )
    return problems


def _chains_walked(
    path: str,
    jobs: int,
    extra_columns: tuple[str, ...],
    sealed: dict[str, list[tuple[int, str, str]]],
    report: Report,
    tally: Any,
) -> dict[str, _Chain]:
    """Each workflow's chain, walked in the file's order: the events' problems go to
    the report as they are met, and every event into the ``tally`` of the file."""
    chains: dict[str, _Chain] = {}
    add = report.problems.append
    lines_before = 0
    for lines, scanned in _scanned(path, jobs, extra_columns):
        for entry in scanned:
            wid, seq = entry[0], entry[1]
            if wid is None:
                add(Problem(None, None, UNREADABLE.format(line=lines_before + seq, why=entry[2])))
                continue
            report.events += 1
            tally.update(events_line(wid, seq, str(entry[3])))
            chain = chains.get(wid)
            if chain is None:
                version, last_hash = entry[6], entry[7]
                chain = chains[wid] = _Chain(version=version, last_hash=last_hash)
                chain.whole = version is not None
                wanted = {v for v, _, _ in sealed.get(wid, ())}
                chain.at_sealed = dict.fromkeys(wanted, "")
            _link(chain, entry, add)
        lines_before += lines
    return chains


def _link(chain: _Chain, entry: Any, add: Callable[[Problem], None]) -> None:
    """One event onto its workflow's chain: in order, following the one before, its
    hash recomputed, its columns as hashed, its hash format no older."""
    wid, seq, prev_hash, stored, expected, hash_format, _, _, columns = entry
    if seq <= chain.seq:
        add(Problem(wid, seq, OUT_OF_ORDER.format(seq=chain.seq)))
        return
    follows = seq == chain.seq + 1
    if not follows and chain.whole:
        add(Problem(wid, chain.seq + 1, MISSING.format(next=seq)))
    if (follows or chain.whole) and prev_hash != chain.hash:
        add(Problem(wid, seq, UNLINKED))
    if expected is None:
        add(Problem(wid, seq, UNKNOWN_FORMAT.format(format=hash_format)))
    elif expected != stored:
        add(Problem(wid, seq, EDITED))
    for what in columns:
        add(Problem(wid, seq, what))
    fmt = hash_format if isinstance(hash_format, int) else HASH_V1
    if fmt < chain.format:
        add(Problem(wid, seq, OLDER_FORMAT))
    chain.format = max(chain.format, fmt)
    if seq in chain.at_sealed:
        chain.at_sealed[seq] = stored
    chain.seq = seq
    chain.hash = stored


def _chain_end_problems(
    wid: str, chain: _Chain, heads: Iterable[tuple[int, str, str]]
) -> list[Problem]:
    """What a workflow's chain lacks once the file has ended: the events up to its
    recorded head, and each event a seal vouches for, as the seal recorded it."""
    problems = []
    if chain.whole and chain.version is not None:
        if chain.seq < chain.version:
            first, last = chain.seq + 1, chain.version
            problems.append(Problem(wid, first, TAIL_GONE.format(first=first, last=last)))
        elif chain.seq > chain.version:
            version = chain.version
            problems.append(Problem(wid, version + 1, PAST_VERSION.format(version=version)))
        if chain.hash != chain.last_hash:
            problems.append(Problem(wid, chain.seq or None, LAST_HASH))
    for version, last_hash, name in heads:
        got = chain.at_sealed.get(version) or None
        if got is None:
            if chain.whole:
                problems.append(Problem(wid, version, SEALED_MISSING.format(seal=name)))
        elif got != last_hash:
            problems.append(Problem(wid, version, SEALED_REWRITTEN.format(seal=name)))
    return problems


def main(argv: Iterable[str] | None = None, out: TextIO | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m approvals.audit.offline_verify",
        description="Recompute every hash of an audit export (JSON Lines) and check its "
        "chains and, with the seal key, its seals. Exits 1 on any problem.",
    )
    parser.add_argument("export", help="the JSON Lines export")
    parser.add_argument(
        "--jobs",
        type=int,
        default=None,
        help="processes that hash the events (default: one per CPU)",
    )
    parser.add_argument(
        "--seal-key",
        help="the seal key (APPROVALS_AUDIT_SEAL_KEY), to check the seals; the environment "
        "variable of that name is read when this is not given",
    )
    parser.add_argument(
        "--archive",
        action="store_true",
        help="the file is an archive's events (each also carries its event id, which an "
        "export does not)",
    )
    args = parser.parse_args(list(argv) if argv is not None else None)
    out = out or sys.stdout
    key_text = args.seal_key or os.environ.get("APPROVALS_AUDIT_SEAL_KEY") or None
    report = verify_export(
        args.export,
        seal_key=key_text.encode() if key_text else None,
        jobs=args.jobs,
        extra_columns=("event_id",) if args.archive else (),
    )
    for problem in report.problems:
        out.write(f"BROKEN {problem}\n")
    out.write(report.summary() + "\n")
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
