"""Rows that are written once: the history, its seals, overrides and legal holds. The
database refuses UPDATE and DELETE of them with triggers; ``AppendOnly`` refuses a
second ``save()`` of the same row before it gets there, naming what it is."""

from __future__ import annotations

from typing import Any

from django.db import models


class AppendOnly(models.Model):
    append_only_name = "rows"  # what the refusal calls them: "legal holds are append-only"

    class Meta:
        abstract = True

    def save(self, *args: Any, **kwargs: Any) -> None:
        if not self._state.adding:
            raise ValueError(f"{self.append_only_name} are append-only")
        super().save(*args, **kwargs)
