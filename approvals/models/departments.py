"""The departments an organisation keeps: a request's department field offers them as a
choice, and a start whose department is not one of them is refused in words
(approvals.services.departments). Finance and organisation admins keep the list in the
admin; an organisation that keeps none leaves the field free text."""

from __future__ import annotations

from django.db import models
from django.db.models.functions import Lower

from .directory import Tenant


class Department(models.Model):
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    key = models.SlugField(
        max_length=64,
        help_text="What a request records and rules compare, such as eng. Keep it once used.",
    )
    name = models.CharField(
        max_length=64, help_text="What people choose from, such as Engineering."
    )

    class Meta:
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(fields=["tenant", "key"], name="department_key_once"),
            models.UniqueConstraint("tenant", Lower("name"), name="department_name_once"),
        ]

    def __str__(self) -> str:
        return self.name
