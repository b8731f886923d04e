"""The departments an organisation keeps, in the admin: finance and organisation admins
add, rename and remove them; a request's department field offers them
(approvals.models.Department). A key or a name already kept is refused in words."""

from __future__ import annotations

from typing import Any

from django import forms

from ..models import Department

KEY_TAKEN = "The organisation already has a department with the key {key}."
NAME_TAKEN = "The organisation already has a department called {name}."


class DepartmentForm(forms.ModelForm):
    """A department of the signed-in person's organisation."""

    organisation_id: int | None = None  # set by the admin's get_form

    class Meta:
        model = Department
        fields = ["name", "key"]

    def clean_key(self) -> str:
        return str(self.cleaned_data.get("key") or "").strip().lower()

    def clean_name(self) -> str:
        return " ".join(str(self.cleaned_data.get("name") or "").split())

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        tenant_id = self.organisation_id
        if tenant_id is None:
            return data
        others = Department.objects.filter(tenant_id=tenant_id).exclude(pk=self.instance.pk)
        key, name = data.get("key"), data.get("name")
        if key and others.filter(key=key).exists():
            self.add_error("key", KEY_TAKEN.format(key=key))
        if name and others.filter(name__iexact=name).exists():
            self.add_error("name", NAME_TAKEN.format(name=name))
        return data
