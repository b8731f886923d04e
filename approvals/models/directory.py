"""Who is who: tenants, people, their managers, groups and delegations."""

from __future__ import annotations

from django.contrib.auth.models import AbstractUser
from django.db import models

from . import time_bounds


class Tenant(models.Model):
    slug = models.SlugField(max_length=64, unique=True)
    name = models.CharField(max_length=200)
    # Who takes the open tasks of a person who leaves when that person has no manager
    # (approvals.services.directory.user_deactivate).
    fallback_approver = models.ForeignKey(
        "User", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # The hosts workflow templates' http_request steps may call, one per line; a line
    # ending in "private" also allows that host's private addresses
    # (approvals.activities.outbound). Set by an organisation admin.
    outbound_hosts = models.TextField(
        blank=True,
        default="",
        db_default="",
        help_text=(
            "The hosts workflow templates may call, one per line (erp.example.com). Add the"
            " word 'private' after a host to allow its private addresses too."
        ),
    )
    # The zone mails show times in for a person who chose none (approvals.words.zones),
    # and the offset of the API inbox's dueAt (approvals.selectors.tasks).
    time_zone = models.CharField(
        max_length=64,
        blank=True,
        default="",
        db_default="",
        help_text="E-mails show times in this zone to people who chose none of their own.",
    )
    # The currency rules compare amounts in (templates_engine.money); none: amounts are
    # compared as they are. Kept by finance admins beside the exchange rates.
    base_currency = models.CharField(
        max_length=3,
        blank=True,
        default="",
        db_default="",
        help_text="Rules compare amounts in this currency (INR); others convert at the rates.",
    )
    # Four eyes on rules: a change to a workflow template is saved as a draft, and a
    # second finance admin publishes it (approvals.services.templates).
    template_four_eyes = models.BooleanField(
        default=True,
        db_default=True,
        verbose_name="Four eyes on workflow templates",
        help_text=(
            "A change to a workflow template is saved as a draft and published by a second"
            " finance admin. Untick it and Save publishes at once, after asking first."
        ),
    )

    def __str__(self) -> str:
        return self.name


# The role groups (access.Role) whose members never hold a task: an integration account
# never; an auditor unless a superuser. Here so the directory's SQL can read them.
INTEGRATION_ROLE = "integrations"
AUDITOR_ROLE = "auditors"


class User(AbstractUser):
    # Null only for operators of the whole deployment (superusers outside any tenant).
    tenant = models.ForeignKey(
        Tenant, null=True, blank=True, on_delete=models.PROTECT, related_name="users"
    )
    manager = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="reports"
    )
    # The IANA zone pages and mails show this person's times in; blank: the browser's
    # (pages) or UTC (mail). See approvals/words/zones.py.
    time_zone = models.CharField(max_length=64, blank=True, default="", db_default="")

    @property
    def member_tenant_id(self) -> int:
        """The tenant every query of this user's is scoped to."""
        if self.tenant_id is None:
            raise PermissionError(f"{self.username} belongs to no organisation")
        return self.tenant_id

    class Meta(AbstractUser.Meta):
        swappable = "AUTH_USER_MODEL"
        indexes = [models.Index(fields=["tenant", "username"])]


class OrgGroup(models.Model):
    """A group approver rules can name: ``{"group": "finance"}``."""

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="org_groups")
    key = models.SlugField(max_length=64)
    name = models.CharField(max_length=200)
    members = models.ManyToManyField(User, related_name="org_groups", blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["tenant", "key"], name="orggroup_key")]

    def __str__(self) -> str:
        return self.name


class Delegation(models.Model):
    """While active, tasks that would go to ``user`` go to ``delegate``, recorded as
    decided by the delegate on behalf of the user."""

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE)
    user = models.ForeignKey(User, on_delete=models.CASCADE, related_name="delegations_out")
    delegate = models.ForeignKey(User, on_delete=models.CASCADE, related_name="delegations_in")
    starts_at = models.DateTimeField(validators=[time_bounds.validate_stored_moment])
    ends_at = models.DateTimeField(validators=[time_bounds.validate_stored_moment])
    reason = models.CharField(max_length=200, blank=True)
    # Who made it as it stands: the person, or an admin who set it up for them (their
    # out-of-office page says so). Empty on rows made before it was recorded.
    created_by = models.ForeignKey(
        User, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        indexes = [models.Index(fields=["tenant", "user", "starts_at"])]
        constraints = [
            # A BC or year-10000 time cannot be read back into Python: one such row
            # stopped every command that assigns people (time_bounds).
            models.CheckConstraint(
                condition=models.Q(starts_at__gte=time_bounds.EARLIEST_MOMENT)
                & models.Q(ends_at__lte=time_bounds.LATEST_MOMENT),
                name="delegation_bounded_times",
                violation_error_message=time_bounds.MOMENT_OUT_OF_RANGE,
            ),
            models.CheckConstraint(
                condition=models.Q(ends_at__gt=models.F("starts_at")), name="delegation_period"
            ),
            models.CheckConstraint(
                condition=~models.Q(user=models.F("delegate")), name="delegation_not_self"
            ),
        ]

    def __str__(self) -> str:
        # What the admin's titles and checkbox labels say: "Bob away, Victor stands in".
        away = self.user.first_name or self.user.username
        stand_in = self.delegate.first_name or self.delegate.username
        return f"{away} away, {stand_in} stands in"


class DirectoryVersion(models.Model):
    """One row whose ``version`` the database bumps on every change to people, groups,
    memberships, delegations and mail preferences (triggers, migration 0013), so a
    process may keep what it has looked up in the directory for as long as the version
    it read in a command's transaction is the one it cached under."""

    version = models.BigIntegerField(default=0)
