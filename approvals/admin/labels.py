"""Django's admin draws a date-and-time field as two boxes under one label that names
neither, so a screen reader hears "edit text" twice. Each box gets its own name here:
"Starts at: date", "Starts at: time"."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.forms import MultiWidget
from django.http import HttpRequest


class LabelledDateTimeAdmin(admin.ModelAdmin):
    def formfield_for_dbfield(self, db_field: Any, request: HttpRequest, **kwargs: Any) -> Any:
        field = super().formfield_for_dbfield(db_field, request, **kwargs)
        if field is None:
            return None
        widget = field.widget
        widget = getattr(widget, "widget", widget)  # inside the related-object wrapper
        if isinstance(widget, MultiWidget) and len(widget.widgets) == 2:
            label = str(field.label or db_field.verbose_name).capitalize()
            for part, words in zip(widget.widgets, ("date", "time"), strict=True):
                part.attrs.setdefault("aria-label", f"{label}: {words}")
        return field
