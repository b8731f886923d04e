"""Parsed workflow template definitions. A published version never changes, so a
parse is cached for the life of the process."""

from __future__ import annotations

from functools import lru_cache

from templates_engine import Definition

from .models import WorkflowTemplate


@lru_cache(maxsize=1024)
def _parse(template_id: int) -> Definition:
    template = WorkflowTemplate.objects.get(pk=template_id)
    return Definition.parse(template.definition, version=template.version)


def definition_for(template_id: int) -> Definition:
    return _parse(template_id)
