"""Durability tests: killed workers and pollers, a flushed and a restarted Redis, a
restarted PostgreSQL, racing pollers and clock-driven deadlines, all on real
processes (see DESIGN.md, "Time and background work").

Environment knobs:

* ``DURABILITY_TIMERS`` (10000): due timers two pollers race over;
* ``DURABILITY_KILL_TIMERS`` (2000): due timers for the pollers killed mid-batch;
* ``DURABILITY_SEED``: replays the kill moments of a failed run (it is printed);
* ``DURABILITY_BROKER_URL`` (``redis://127.0.0.1:6379/5``): the Redis database the
  workers use; it is flushed before and after each test, so two runs of this suite
  at once need different ones; under pytest-xdist each worker adds its index to the
  number (gw1 uses 6), so a run of ``-n 2`` takes two;
* the PostgreSQL restart restarts only a private cluster (``make test-pg18`` runs it on
  the embedded one); on the machine's shared server it is skipped.
"""
