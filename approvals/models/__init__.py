"""Tables. Tenant first in every key: every query is scoped to one tenant."""

from .directory import Delegation, OrgGroup, Tenant, User
from .projections import ActivityAttempt, PendingTask, Timer, WorkflowParticipant
from .tokens import ApiToken
from .workflows import StartRequest, Workflow, WorkflowEvent, WorkflowStatus, WorkflowTemplate

# Last: the audit tables refer to the ones above.
from ..audit.models import ChainSeal  # noqa: E402

__all__ = [
    "ActivityAttempt",
    "ApiToken",
    "ChainSeal",
    "Delegation",
    "OrgGroup",
    "PendingTask",
    "StartRequest",
    "Tenant",
    "Timer",
    "User",
    "Workflow",
    "WorkflowEvent",
    "WorkflowParticipant",
    "WorkflowStatus",
    "WorkflowTemplate",
]
