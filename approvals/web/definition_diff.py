"""A readable difference between two versions of a workflow template: both
definitions pretty-printed as JSON and compared line by line with difflib, so a
changed deadline reads as one line out and one line in. Keys are sorted: PostgreSQL's
jsonb keeps no key order, so only sorted keys compare the same document the same."""

from __future__ import annotations

import difflib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

CONTEXT_LINES = 3


@dataclass(frozen=True)
class DiffLine:
    kind: str  # add | del | same | hunk
    text: str


def pretty(definition: Mapping[str, Any]) -> str:
    return json.dumps(definition, indent=2, ensure_ascii=False, sort_keys=True)


def definition_diff(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[DiffLine]:
    """The lines of ``new`` against ``old`` with a few lines of context; empty when
    they are the same."""
    lines = difflib.unified_diff(
        pretty(old).splitlines(), pretty(new).splitlines(), lineterm="", n=CONTEXT_LINES
    )
    out: list[DiffLine] = []
    for line in lines:
        if line.startswith(("---", "+++")):
            continue
        if line.startswith("@@"):
            out.append(DiffLine("hunk", "…"))
        elif line.startswith("+"):
            out.append(DiffLine("add", "+ " + line[1:]))
        elif line.startswith("-"):
            out.append(DiffLine("del", "- " + line[1:]))
        else:
            out.append(DiffLine("same", "  " + line[1:]))
    return out
