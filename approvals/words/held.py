"""What people read of a decision held for its undo window (services.held_decisions):
another holder of the task sees it being decided."""

from __future__ import annotations

# What the held decision will do, as the sentence "Bob is deciding: ..." says it.
HELD_VERBS = {
    "approve": "approves",
    "reject": "rejects",
    "send_back": "sends it back",
}


def deciding_words(name: str, decision: str) -> str:
    """ "Bob is deciding: approves in a few seconds." """
    verb = HELD_VERBS.get(decision, "decides")
    return f"{name} is deciding: {verb} in a few seconds."


# What the held decision was, as "Your approval of ... was not recorded" says it.
HELD_NOUNS = {
    "approve": "approval",
    "reject": "rejection",
    "send_back": "send-back",
}


def not_recorded_words(decision: str, what: str) -> str:
    """ "Your approval of Taxi, ₹450.00 was not recorded" """
    return f"Your {HELD_NOUNS.get(decision, 'decision')} of {what} was not recorded"
