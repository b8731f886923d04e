"""Daily seals: one row per organisation per UTC day, whatever the number of workflows.

A day's seal is the Merkle root (RFC 6962: SHA-256, ``0x00`` before a leaf, ``0x01``
before two children) over one leaf per workflow of the organisation that had an event
by the day's end: ``workflow_id:seq:hash``, its chain head at the end of that UTC day
(the last event written before 00:00 UTC of the next day), sorted by workflow id. The
row holds the root, the leaf count and the signature of the day before's seal, and is
signed with the seal key (HMAC-SHA256, as the chain seals are), so the days chain: a
day deleted or rewritten in the middle shows.

The periodic job (``approvals.seal_audit``) seals each day once it has been over for
``APPROVALS_DAILY_SEAL_DELAY_SECONDS`` (ten minutes: a command that began before
midnight has committed by then), catching up at most
``APPROVALS_DAILY_SEAL_CATCH_UP_DAYS`` days per organisation per run. Sealing holds the
organisation's row (as the chain seals do) and the table allows one seal per
organisation and day, so two sealers racing write one row.

``inclusion_proof`` gives, for one workflow and day, its leaf and the audit path to the
day's root (approvals.audit.daily_proof, with the reads behind a seal): what
``verify_audit --workflow``, the audit export of that workflow and the offline verifier
check."""

from __future__ import annotations

import datetime as dt
import hmac
import logging
from collections.abc import Iterable
from dataclasses import dataclass

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Max, Min

from .. import clock
from ..models import Tenant, Workflow
from .daily_proof import day_end, day_root, inclusion_proof, seal_fields
from .models import DailySeal
from .offline_verify import daily_chain_problems, daily_signature, day_words
from .seal import key_id, seal_key

logger = logging.getLogger("approvals.audit")

_CHUNK = 5000
DAILY_MISMATCH = (
    "the daily seal of {tenant} for {day}: the history now gives {found} workflow(s) with "
    "root {found_root}, the seal holds {count} with root {root} (a workflow was changed, "
    "added or removed after the day was sealed)"
)
NOT_INCLUDED = (
    "not included in the daily seal of {tenant} for {day}: its head at the day's end (seq "
    "{seq}, hash {hash}) with the audit path does not lead to the sealed root {root} "
    "(its history was rewritten)"
)
NOT_IN_DAY = (
    "had events by the end of {day} but is not among the {count} workflow(s) the history "
    "of {tenant} gives for that day"
)


def delay() -> dt.timedelta:
    return dt.timedelta(seconds=getattr(settings, "APPROVALS_DAILY_SEAL_DELAY_SECONDS", 600))


def last_sealable_day(now: dt.datetime) -> dt.date:
    """The last day that has been over for the delay at ``now``."""
    return (now.astimezone(dt.UTC) - delay()).date() - dt.timedelta(days=1)


# -- sealing -----------------------------------------------------------------------------


def daily_seal_create(*, tenant: Tenant, day: dt.date) -> DailySeal | None:
    """Seal ``day`` for ``tenant``; None when it is sealed already (by this run or one
    racing it)."""
    key = seal_key()
    try:
        with transaction.atomic():
            # One sealer per organisation at a time (the chain seals take the same lock).
            Tenant.objects.select_for_update(no_key=True).filter(pk=tenant.pk).first()
            if DailySeal.objects.filter(tenant=tenant, day=day).exists():
                return None
            before = (
                DailySeal.objects.filter(tenant=tenant, day__lt=day)
                .order_by("-day")
                .only("signature")
                .first()
            )
            count, root = day_root(tenant.pk, day)
            seal = DailySeal(
                tenant=tenant,
                day=day,
                count=count,
                root=root,
                prev_signature=before.signature if before is not None else "",
                sealed_at=clock.now(),
                key_id=key_id(key),
            )
            seal.signature = daily_signature(seal_fields(seal), key)
            seal.save()
    except IntegrityError:  # another sealer got there first: theirs stands
        return None
    logger.info(
        "daily seal tenant=%s day=%s count=%s root=%s prev=%s key_id=%s signature=%s",
        tenant.slug,
        day,
        seal.count,
        seal.root,
        seal.prev_signature or "-",
        seal.key_id,
        seal.signature,
    )
    return seal


def daily_seals_due(
    *, now: dt.datetime | None = None, tenants: Iterable[Tenant] | None = None
) -> list[DailySeal]:
    """Seal every day that is over (and the delay past) and not yet sealed, for each
    organisation from the day of its first workflow: the periodic job. At most
    ``APPROVALS_DAILY_SEAL_CATCH_UP_DAYS`` days per organisation per run."""
    last = last_sealable_day(now or clock.now())
    catch_up = int(getattr(settings, "APPROVALS_DAILY_SEAL_CATCH_UP_DAYS", 31))
    chosen = list(Tenant.objects.order_by("pk") if tenants is None else tenants)
    ids = [t.pk for t in chosen]
    sealed = dict(
        DailySeal.objects.filter(tenant_id__in=ids)
        .values("tenant_id")
        .annotate(last=Max("day"))
        .values_list("tenant_id", "last")
    )
    unsealed = [pk for pk in ids if pk not in sealed]
    first = dict(
        Workflow.objects.filter(tenant_id__in=unsealed, version__gt=0)
        .values("tenant_id")
        .annotate(first=Min("created_at"))
        .values_list("tenant_id", "first")
    )
    made: list[DailySeal] = []
    for tenant in chosen:
        if tenant.pk in sealed:
            day = sealed[tenant.pk] + dt.timedelta(days=1)
        elif tenant.pk in first:
            day = first[tenant.pk].astimezone(dt.UTC).date()
        else:
            continue
        for _ in range(catch_up):
            if day > last:
                break
            seal = daily_seal_create(tenant=tenant, day=day)
            if seal is not None:
                made.append(seal)
            day += dt.timedelta(days=1)
    return made


def latest_seal(tenant_id: int) -> DailySeal | None:
    return DailySeal.objects.filter(tenant_id=tenant_id).select_related("tenant").last()


# -- what verify_audit asks --------------------------------------------------------------


@dataclass
class DailyCheck:
    """The daily seals' problems (``problems``: about the seals; ``workflow``: about
    the one workflow asked for) and a sentence on what was checked."""

    problems: list[str]
    workflow: list[str]
    words: str


def daily_check(
    *,
    tenant: Tenant | None,
    workflow: Workflow | None = None,
    recompute: bool = True,
    all_days: bool = False,
    key: bytes,
) -> DailyCheck:
    """Check the daily seals of ``tenant`` (every organisation when None): signatures
    and the chain of days; with ``recompute``, the last day's root against the history
    (which day, which organisation, what was expected and what was found), and with
    ``all_days`` every day's; with ``workflow``, its inclusion in the last day's seal.

    Why the last day by default: recomputing a day reads every workflow's head as of
    that day, so every day costs workflows x days (two years of a 23,000-workflow
    organisation: 17 million head lookups). The last day's leaves are every workflow's
    head, so an event changed (and the chain recomputed after it), a workflow removed or
    added shows there; each earlier day is held by its signature and the chain of days
    (a forged root or a deleted day shows), and the chains by the chain seals. What only
    ``all_days`` finds: an event moved across a day's end without changing any hash."""
    seals = DailySeal.objects.select_related("tenant").order_by("tenant_id", "day")
    if tenant is not None:
        seals = seals.filter(tenant=tenant)
    problems: list[str] = []
    days = 0
    by_tenant: dict[int, list[DailySeal]] = {}
    for seal in seals.iterator(500):
        by_tenant.setdefault(seal.tenant_id, []).append(seal)
    for tenant_seals in by_tenant.values():
        problems.extend(daily_chain_problems([seal_fields(s) for s in tenant_seals], key))
        days += len(tenant_seals)
        if not recompute:
            continue
        for seal in tenant_seals if all_days else tenant_seals[-1:]:
            count, root = day_root(seal.tenant_id, seal.day, exact=True)
            if (count, root) != (seal.count, seal.root):
                problems.append(
                    DAILY_MISMATCH.format(
                        tenant=seal.tenant.slug,
                        day=day_words(seal.day),
                        found=count,
                        found_root=root[:16] + "…",
                        count=seal.count,
                        root=seal.root[:16] + "…",
                    )
                )
    if not days:
        words = "none yet (the first is made shortly after the first day with requests ends)"
    elif recompute and all_days:
        words = f"{days} daily seal(s) checked and their roots recomputed from the history"
    elif recompute:
        words = (
            f"{days} daily seal(s) checked (signatures and the chain of days) and the last "
            "day's root recomputed from the history"
        )
    else:
        words = f"{days} daily seal(s) checked (signatures and the chain of days)"
    found: list[str] = []
    if workflow is not None:
        words = _workflow_check(workflow, key, found) or words
    return DailyCheck(problems, found, words)


def _workflow_check(workflow: Workflow, key: bytes, found: list[str]) -> str | None:
    seal = latest_seal(workflow.tenant_id)
    if seal is None:
        return None
    name = f"the daily seal of {seal.tenant.slug} for {day_words(seal.day)}"
    if seal.key_id != key_id(key) or not hmac.compare_digest(
        daily_signature(seal_fields(seal), key), seal.signature
    ):
        found.append(f"{name}: its signature does not verify")
        return None
    proof = inclusion_proof(tenant=seal.tenant, workflow_id=workflow.pk, day=seal.day)
    if proof is None:
        if workflow.created_at < day_end(seal.day) and workflow.version > 0:
            found.append(
                NOT_IN_DAY.format(
                    day=day_words(seal.day), count=seal.count, tenant=seal.tenant.slug
                )
            )
            return None
        return f"started after {day_words(seal.day)}, the last day sealed: not in a daily seal yet"
    if not proof.leads_to(seal.root, seal.count):
        found.append(
            NOT_INCLUDED.format(
                tenant=seal.tenant.slug,
                day=day_words(seal.day),
                seq=proof.seq,
                hash=proof.hash[:16] + "…",
                root=seal.root[:16] + "…",
            )
        )
        return None
    return (
        f"in {name}, leaf {proof.index + 1} of {proof.count} (its head at event {proof.seq}); "
        f"its audit path of {len(proof.path)} hash(es) leads to the signed root"
    )
