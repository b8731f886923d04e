"""What runs outside a request: the timer poller, the activity outbox (dispatch, runs,
sweeps), the Celery tasks, the embedded scheduler loop and the one list of periodic
jobs that both Celery beat and that loop read (``jobs``).

This package's ``__init__`` imports nothing: config/settings.py reads ``jobs``.
"""
