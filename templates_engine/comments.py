"""The conversation on a request: a comment is recorded as a ``CommentAdded`` event, on
a running workflow or a finished one (a question after the fact is still useful), and
changes no step. Its limits are the engine's, so every door refuses alike."""

from __future__ import annotations

import re

from . import commands as cmd
from . import errors
from . import events as ev
from .builder import Builder
from .errors import CommandRejected

COMMENT_MAX = 2000
MENTIONS_MAX = 20
COMMENT_EMPTY = "Write something in the comment; nothing was recorded."
COMMENT_TOO_LONG = (
    f"A comment holds at most {COMMENT_MAX:,} characters; this one has {{count:,}}. "
    "Nothing was recorded."
)
COMMENT_NUL = "A comment may not contain a NUL character; nothing was recorded."
TOO_MANY_MENTIONS = f"A comment may mention at most {MENTIONS_MAX} people; nothing was recorded."
MENTION_NOT_IN_TEXT = (
    "Each person a comment mentions is named in its text as @name; nothing was recorded."
)
NO_AUTHOR = "A comment is written by someone; nothing was recorded."

# ``@name`` where a user name may stand: not inside a word or an e-mail address
# (``bob@example.com`` mentions nobody), and a full stop after it ends the sentence.
_MENTION = re.compile(r"(?<![\w@.+-])@(\w(?:[\w.+-]*\w)?)")


def mentions_in(text: str) -> tuple[str, ...]:
    """The user names ``text`` mentions as ``@name``, each once, in order."""
    return tuple(dict.fromkeys(_MENTION.findall(text)))


def comment_problem(text: str) -> str | None:
    """Why ``text`` cannot be a comment, as a sentence; None when it can."""
    if "\x00" in text:
        return COMMENT_NUL
    if not text.strip():
        return COMMENT_EMPTY
    if len(text) > COMMENT_MAX:
        return COMMENT_TOO_LONG.format(count=len(text))
    return None


def on_comment(b: Builder, c: cmd.Comment) -> None:
    """Record the comment, or refuse it whole (INVALID_COMMENT)."""
    problem = comment_problem(c.text)
    if problem is None and not c.actor:
        problem = NO_AUTHOR
    if problem is None and len(set(c.mentions)) > MENTIONS_MAX:
        problem = TOO_MANY_MENTIONS
    # @Farah mentions farah: people type a name as they write it
    named = {name.casefold() for name in mentions_in(c.text)}
    if problem is None and not {m.casefold() for m in c.mentions} <= named:
        problem = MENTION_NOT_IN_TEXT
    if problem is not None:
        raise CommandRejected(errors.INVALID_COMMENT, problem)
    b.emit(ev.CommentAdded(c.actor, c.text, tuple(dict.fromkeys(c.mentions))))
