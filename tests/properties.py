"""Hypothesis profiles for the property tests, and how many examples a test runs.

* ``dev`` (the default): random examples, failures kept in .hypothesis/ and tried first.
* ``ci`` (``make test``): the same examples on every run (derandomized), nothing read
  from or written to an example database, a failure printed with the blob that
  reproduces it (``@reproduce_failure``), no health check on timing.
* ``explore`` (``make test-explore``): fresh random examples, ten times as many.

Pick one with ``--hypothesis-profile=NAME`` or ``HYPOTHESIS_PROFILE=NAME``.

A test states its number of examples as ``examples(n)``: n under ``dev`` and ``ci``,
scaled up under ``explore`` (the profile's max_examples over Hypothesis's 100), up to
``most`` for a test whose examples cost seconds each."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

BASE_EXAMPLES = 100  # Hypothesis's default max_examples; a test's examples(n) is n at it

settings.register_profile("dev", max_examples=BASE_EXAMPLES, print_blob=True)
settings.register_profile(
    "ci",
    max_examples=BASE_EXAMPLES,
    derandomize=True,
    database=None,
    print_blob=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "explore",
    max_examples=10 * BASE_EXAMPLES,
    derandomize=False,
    print_blob=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE") or "dev")


def examples(n: int, most: int | None = None) -> int:
    """``n`` examples under the dev and ci profiles; more under explore, but no more than
    ``most`` (and never fewer than ``n``). Called when the test module is imported, after
    pytest has loaded the profile it was given."""
    scaled = n * settings.default.max_examples // BASE_EXAMPLES
    if most is not None:
        scaled = min(scaled, most)
    return max(n, scaled)
