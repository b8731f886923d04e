"""Answers rendered from their output serializers' declarations, without DRF's walk.

DRF builds an answer field by field: a new serializer instance deep-copies its declared
fields, and every value goes through ``get_attribute`` and ``to_representation`` of a
bound field, about 50 us an inbox row on the machines this runs on, which made the
serialization of a 50-task page cost more than reading it. ``compiled(Serializer)``
reads the same declarations once (each field's name, source and kind) and returns a
function that builds the same dict from an object: the serializer stays the one source
of the answer's shape, for the OpenAPI schema and for the answer alike.

What it covers, and what it refuses (``TypeError`` when compiled, so nothing is
silently different):

- sources read as attributes, dotted paths included (``workflow.template_key``), and
  the ``*`` source (the object itself); the objects handed in are the selectors' and
  services' results, not mappings, and no source names a method;
- a missing value read as DRF reads it: a missing related object is None, a ``None``
  part way along a dotted source gives the field's default or None (``allow_null``);
- ``None`` stays ``None``, as in DRF, before any field sees it;
- ``IntegerField``, ``CharField``, ``UUIDField`` (hex_verbose) and ``BooleanField``
  converted as their ``to_representation`` does; any other plain field by calling its
  own ``to_representation`` (``Timestamp``, ``OptionalText``); nested serializers and
  ``many=True`` lists compiled in turn;
- write-only fields are left out, as DRF leaves them;
- refused: ``SerializerMethodField`` (it needs the serializer and its context), a
  field that may be left out of the answer (``required=False`` with no default), and
  serializers other than plain and ``many=True`` ones.

``tests/approvals/api/test_rendering.py`` holds every compiled answer equal to DRF's
``.data`` over generated values.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from functools import cache
from typing import Any

from django.core.exceptions import ObjectDoesNotExist
from django.db.models.manager import BaseManager
from rest_framework import fields as f
from rest_framework import serializers

Render = Callable[[Any], Any]

_CONVERTERS: dict[type, Render] = {
    f.IntegerField: int,
    f.CharField: str,
    f.UUIDField: str,  # hex_verbose, checked below
}


@cache
def compiled(serializer_class: type[serializers.Serializer]) -> Callable[[Any], dict[str, Any]]:
    """A function that renders an object as ``serializer_class(obj).data`` would."""
    return _compile(serializer_class())


def _compile(serializer: serializers.Serializer) -> Callable[[Any], dict[str, Any]]:
    plan = tuple(
        (str(field.field_name), _getter(field), _converter(field))
        for field in serializer.fields.values()
        if not field.write_only
    )

    def render(obj: Any) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name, get, convert in plan:
            value = get(obj)
            out[name] = None if value is None else convert(value)
        return out

    return render


def _getter(field: f.Field) -> Render:
    """How the field's value is read, as DRF's ``Field.get_attribute`` reads it: a
    missing related object is None; a missing attribute (``None`` part way along a
    dotted source) is the field's default, or None when it allows null, and an error
    otherwise."""
    if isinstance(field, serializers.SerializerMethodField):
        raise TypeError(f"{field.field_name}: a SerializerMethodField is not compiled")
    if field.source == "*":
        return _itself
    if field.default is f.empty and not field.allow_null and not field.required:
        raise TypeError(f"{field.field_name}: a field that may be left out is not compiled")
    get = operator.attrgetter(".".join(field.source_attrs))
    fallback = field.get_default if field.default is not f.empty else None

    def read(obj: Any) -> Any:
        try:
            return get(obj)
        except ObjectDoesNotExist:
            return None
        except (KeyError, AttributeError):
            if fallback is not None:
                return fallback()
            if field.allow_null:
                return None
            raise

    return read


def _itself(obj: Any) -> Any:
    return obj


def _converter(field: f.Field) -> Render:
    if isinstance(field, serializers.ListSerializer):
        child = field.child
        assert isinstance(child, serializers.Serializer)
        item = _compile(child)

        def each(values: Any) -> list[Any]:
            if isinstance(values, BaseManager):  # a related manager: its rows, as in DRF
                values = values.all()
            return [item(value) for value in values]

        return each
    if isinstance(field, serializers.Serializer):
        return _compile(field)
    if isinstance(field, serializers.BaseSerializer):
        raise TypeError(f"{field.field_name}: {type(field).__name__} is not compiled")
    kind = type(field)
    if kind is f.UUIDField and field.uuid_format != "hex_verbose":  # type: ignore[attr-defined]
        return field.to_representation
    if kind is f.BooleanField:
        return _boolean(field)
    return _CONVERTERS.get(kind, field.to_representation)


def _boolean(field: f.Field) -> Render:
    def convert(value: Any) -> Any:
        return value if isinstance(value, bool) else field.to_representation(value)

    return convert
