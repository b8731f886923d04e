"""The API's one body parser: JSON within the limits of ``approvals.json_input``."""

from __future__ import annotations

import codecs
from collections.abc import Mapping
from typing import IO, Any

from rest_framework import exceptions
from rest_framework.parsers import JSONParser, get_encoding  # type: ignore[attr-defined]

from .. import json_input


def _refusal(error: json_input.JsonInputError) -> exceptions.ValidationError:
    if error.path == "$":
        return exceptions.ValidationError([error.problem])
    return exceptions.ValidationError({error.path: [error.problem]})


class LimitedJSONParser(JSONParser):
    """JSON bodies, refused with a 400 naming the path when nested deeper than
    ``MAX_DEPTH`` (checked before ``json.loads`` can recurse), holding an integer outside
    int64, a non-finite number, a NUL or a lone surrogate in any string or key."""

    def parse(
        self,
        stream: IO[Any],
        media_type: str | None = None,
        parser_context: Mapping[str, Any] | None = None,
    ) -> Any:
        # DRF's own check: text encodings only (a bz2 "charset" would inflate the body).
        encoding = get_encoding(dict(parser_context or {}))
        try:
            text = codecs.decode(stream.read(), encoding)
            return json_input.loads(text)
        except json_input.JsonInputError as exc:
            raise _refusal(exc) from exc
        except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError
            raise exceptions.ParseError(f"JSON parse error - {exc}") from exc
