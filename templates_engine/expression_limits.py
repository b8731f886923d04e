"""How much a routing condition may cost: bounds checked when a definition is parsed,
and a guard before each evaluation.

A condition is evaluated on every start and decision, so one that takes seconds stops
the organisation. At parse a condition may be at most ``MAX_LENGTH`` characters, nest
brackets and calls at most ``MAX_NESTING`` deep, nest comprehensions (``all``,
``exists``, ``map``, ``filter`` ...) at most ``MAX_COMPREHENSION_NESTING`` deep and
write lists and maps of at most ``MAX_LITERAL_ITEMS`` items, and may not convert a value
that does not depend on a comprehension's item (``string(data.m)``) inside it. Its shape
then gives an estimate of the work per evaluation from the size of the largest list or map
it can meet (``Cost.estimate``); the evaluator refuses data that would take more than
``MAX_ESTIMATED_STEPS``. The estimate is a count, not a clock: the same data gives the
same answer on replay.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .errors import DefinitionError

MAX_LENGTH = 1000
MAX_NESTING = 12
MAX_TREE_DEPTH = 150
MAX_COMPREHENSION_NESTING = 2
MAX_LITERAL_ITEMS = 100
MAX_ESTIMATED_STEPS = 10_000

TOO_LONG = f"is longer than {MAX_LENGTH} characters; split the rule or move work into the data"
TOO_NESTED = (
    f"nests brackets and calls more than {MAX_NESTING} deep; write the rule with fewer levels"
)
TOO_DEEP = "is too deeply built to evaluate safely; write the rule with fewer operators in a chain"
TOO_MANY_COMPREHENSIONS = (
    f"nests all/exists/map/filter more than {MAX_COMPREHENSION_NESTING} deep; every start"
    " would repeat the innermost one for each combination of items"
)
LITERAL_TOO_LONG = f"writes a list or map of more than {MAX_LITERAL_ITEMS} items"
TOO_COSTLY = (
    "the workflow data holds a list or map of {largest} items, too many for the rule {source!r}"
    " to check in reasonable time"
)

CONVERSION_IN_COMPREHENSION = (
    "calls {function}() inside all/exists/map/filter on data that does not depend on the"
    " item, so every start would redo that whole conversion once per item; call it once"
    " outside, or on the item"
)

# Conversions whose work grows with the value converted (a map turned into text walks
# all of it). On the comprehension's item it costs the item's size, so the comprehension
# walks the data about once more; on anything else it redoes the whole value per item.
CONVERSIONS = frozenset({"string", "bytes"})
# Macros: each evaluates its body once per item of the list or map it is called on.
MACROS = frozenset({"all", "exists", "exists_one", "map", "filter", "reduce", "min"})
_QUOTES = "\"'"


def check_source(source: str, path: str) -> None:
    """Refuse a condition too long or too nested to parse safely; looks only at the
    text (the parser itself recurses once per level)."""
    if len(source) > MAX_LENGTH:
        raise DefinitionError(path, f"condition {TOO_LONG}")
    depth = 0
    quote = ""
    escaped = False
    for char in source:
        if quote:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == quote:
                quote = ""
        elif char in _QUOTES:
            quote = char
        elif char in "([{":
            depth += 1
            if depth > MAX_NESTING:
                raise DefinitionError(path, f"condition {TOO_NESTED}")
        elif char in ")]}":
            depth -= 1


def _children(node: Any) -> list[Any]:
    return [c for c in getattr(node, "children", ()) if hasattr(c, "children")]


def _names(node: Any) -> set[str]:
    """The identifiers ``node`` reads (``data``, a comprehension's variable ...)."""
    found: set[str] = set()
    stack = [node]
    while stack:
        item = stack.pop()
        if getattr(item, "data", None) == "ident" and item.children:
            found.add(str(item.children[0]))
        stack.extend(_children(item))
    return found


def _conversion_name(node: Any) -> str | None:
    if getattr(node, "data", None) != "ident_arg" or not node.children:
        return None
    name = str(node.children[0])
    return name if name in CONVERSIONS else None


def _macro_name(node: Any) -> str | None:
    if getattr(node, "data", None) != "member_dot_arg" or len(node.children) != 3:
        return None
    name = str(node.children[1])
    return name if name in MACROS else None


@dataclass(frozen=True)
class Cost:
    """The shape of a condition's work: ``terms[k]`` counts the operations that walk a
    whole list or map inside ``k`` enclosing comprehensions (each costs about
    ``size ** (k + 1)``); ``growth`` bounds how much ``+`` can lengthen a walked list;
    ``largest_literal`` is the longest list or map the condition writes itself."""

    terms: tuple[int, ...] = ()
    growth: int = 1
    largest_literal: int = 0

    @property
    def walks(self) -> bool:
        return any(self.terms)

    def estimate(self, largest_in_data: int) -> int:
        """Steps one evaluation may take when the largest list or map is this long."""
        size = max(largest_in_data, self.largest_literal, 1) * self.growth
        return sum(count * size ** (level + 1) for level, count in enumerate(self.terms))


def check_tree(ast: Any, path: str) -> Cost:
    """Refuse a parsed condition too deep, with comprehensions nested past the limit or
    with oversized literals; return its ``Cost``. Iterative: the tree may be deep."""
    terms: dict[int, int] = {}
    growth = 1
    largest_literal = 0
    # (node, tree depth, comprehensions around it, the parent's kind, whether it is
    # part of the list or map a comprehension walks, the comprehensions' variables)
    stack: list[tuple[Any, int, int, str, bool, frozenset[str]]] = [
        (ast, 1, 0, "", False, frozenset())
    ]
    while stack:
        node, depth, level, parent, walked, bound = stack.pop()
        if depth > MAX_TREE_DEPTH:
            raise DefinitionError(path, f"condition {TOO_DEEP}")
        kind = str(getattr(node, "data", ""))
        children = _children(node)
        # An exprlist is also a call's arguments: only a list literal's holds items.
        if kind == "mapinits" or (kind == "exprlist" and parent == "list_lit"):
            items = len(children) // (2 if kind == "mapinits" else 1)
            if items > MAX_LITERAL_ITEMS:
                raise DefinitionError(path, f"condition {LITERAL_TOO_LONG}")
            largest_literal = max(largest_literal, items)
        if kind == "addition_add" and walked:
            growth += 1  # a list joined to others before it is walked
        if kind == "relation_in":
            terms[level] = terms.get(level, 0) + 1
        if (function := _conversion_name(node)) is not None and level > 0:
            names = _names(node)
            if "data" in names and not names & bound:
                raise DefinitionError(
                    path, f"condition {CONVERSION_IN_COMPREHENSION.format(function=function)}"
                )
        if _macro_name(node) is not None:
            if level + 1 > MAX_COMPREHENSION_NESTING:
                raise DefinitionError(path, f"condition {TOO_MANY_COMPREHENSIONS}")
            terms[level] = terms.get(level, 0) + 1
            target, body = children[0], children[1]
            variables = {n for c in _children(body)[:1] for n in _names(c)}
            stack.append((target, depth + 1, level, kind, True, bound))
            stack.append((body, depth + 1, level + 1, kind, False, bound | variables))
            continue
        stack.extend((child, depth + 1, level, kind, walked, bound) for child in children)
    top = max(terms, default=-1)
    return Cost(
        tuple(terms.get(k, 0) for k in range(top + 1)), min(growth, MAX_LENGTH), largest_literal
    )


def largest_collection(value: object) -> int:
    """The number of items of the longest list or map inside ``value`` (iterative)."""
    largest = 0
    stack: list[object] = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, Mapping):
            largest = max(largest, len(item))
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            largest = max(largest, len(item))
            stack.extend(item)
    return largest
