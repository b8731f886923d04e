"""What people read for each decision the engine knows (``templates_engine.commands
.DECISIONS``): the button's label and the words once it is recorded. Delegating has
its own form, so it has no button here."""

from __future__ import annotations

_WORDS = {  # decision: (button, once recorded)
    "approve": ("Approve", "Approved"),
    "reject": ("Reject", "Rejected"),
    "send_back": ("Send back", "Sent back"),
}
DECISION_LABELS: dict[str, str] = {decision: words[0] for decision, words in _WORDS.items()}
DECISION_RECORDED: dict[str, str] = {decision: words[1] for decision, words in _WORDS.items()}
