"""The command path: lock, dedupe, decide, append, project, the SQL it runs
(``store``), and the hand-over of due activity attempts after commit (``dispatch``).

It imports only the models, the shared helpers and itself: never a use-case
(``services``), a worker or a front door. tests/approvals/test_layers.py enforces it.
"""
