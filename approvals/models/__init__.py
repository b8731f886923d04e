"""Tables. Tenant first in every key: every query is scoped to one tenant."""

from ..audit.models import ChainSeal
from .analytics import StepDay, StepVisit, StepVisitRetraction
from .currency import ExchangeRate
from .departments import Department
from .directory import Delegation, DirectoryVersion, OrgGroup, Tenant, User
from .drafts import Draft, DraftFile
from .held import HeldDecision
from .projections import ActivityAttempt, PendingTask, Timer, WorkflowParticipant
from .schedules import StartSchedule
from .tokens import ApiToken
from .workflows import (
    StartRequest,
    Workflow,
    WorkflowEvent,
    WorkflowStatus,
    WorkflowTemplate,
    WorkflowTemplateDraft,
    history_month,
)

__all__ = [
    "ActivityAttempt",
    "ApiToken",
    "ChainSeal",
    "Delegation",
    "Department",
    "DirectoryVersion",
    "Draft",
    "DraftFile",
    "ExchangeRate",
    "HeldDecision",
    "OrgGroup",
    "PendingTask",
    "StartRequest",
    "StartSchedule",
    "StepDay",
    "StepVisit",
    "StepVisitRetraction",
    "Tenant",
    "Timer",
    "User",
    "Workflow",
    "WorkflowEvent",
    "history_month",
    "WorkflowParticipant",
    "WorkflowStatus",
    "WorkflowTemplate",
    "WorkflowTemplateDraft",
]
