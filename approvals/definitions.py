"""Parsed workflow template definitions. A published version never changes, so a
parse is cached for the life of the process."""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from templates_engine import Definition

from .models import WorkflowTemplate


@lru_cache(maxsize=1024)
def _parse(template_id: int) -> Definition:
    template = WorkflowTemplate.objects.get(pk=template_id)
    return Definition.parse(template.definition, version=template.version)


def definition_for(template_id: int) -> Definition:
    return _parse(template_id)


@lru_cache(maxsize=1024)
def raw_definition_for(template_id: int) -> Mapping[str, Any]:
    """The published definition as written (what the engine does not keep: a step's
    ``failure_text``); read-only, shared by every caller."""
    raw = WorkflowTemplate.objects.values_list("definition", flat=True).get(pk=template_id)
    return raw if isinstance(raw, Mapping) else {}
