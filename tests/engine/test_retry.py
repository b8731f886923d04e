"""Retry policies: back-off, jitter, and when to give up."""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from templates_engine import TIMEOUT, DefinitionError, RetryPolicy

from ..properties import examples


def test_defaults_are_the_ones_users_know() -> None:
    policy = RetryPolicy.parse(None, "$.retry")

    assert policy == RetryPolicy()
    assert policy.initial_interval == 1.0
    assert policy.backoff_coefficient == 2.0
    assert policy.max_interval == 100.0
    assert policy.max_attempts == 3
    assert policy.non_retryable == frozenset()
    assert policy.jitter is True


def test_missing_fields_take_the_defaults() -> None:
    policy = RetryPolicy.parse({"max_attempts": 7, "non_retryable": ["CardDeclined"]}, "$.r")

    assert policy == RetryPolicy(max_attempts=7, non_retryable=frozenset({"CardDeclined"}))


@pytest.mark.parametrize(
    ("initial", "coefficient", "maximum", "failures", "expected"),
    [
        (1.0, 2.0, 100.0, 1, 1.0),
        (1.0, 2.0, 100.0, 2, 2.0),
        (1.0, 2.0, 100.0, 3, 4.0),
        (1.0, 2.0, 100.0, 7, 64.0),
        (1.0, 2.0, 100.0, 8, 100.0),  # 128 capped
        (1.0, 2.0, 100.0, 50, 100.0),
        (0.5, 3.0, 60.0, 1, 0.5),
        (0.5, 3.0, 60.0, 3, 4.5),
        (0.5, 3.0, 60.0, 5, 40.5),
        (0.5, 3.0, 60.0, 6, 60.0),
        (5.0, 1.0, 5.0, 9, 5.0),  # a coefficient of 1 is a fixed interval
        (0.0, 2.0, 10.0, 4, 0.0),
    ],
)
def test_delay_after_the_nth_failure(
    initial: float, coefficient: float, maximum: float, failures: int, expected: float
) -> None:
    # given
    policy = RetryPolicy(initial, coefficient, maximum, jitter=False)

    # when
    delay = policy.delay(failures, random.Random(0))

    # then
    assert delay == pytest.approx(expected)
    assert delay == pytest.approx(min(maximum, initial * coefficient ** (failures - 1)))
    assert policy.base_delay(failures) == delay


@pytest.mark.parametrize("failures", [1, 2, 3, 4, 9])
def test_jitter_multiplies_by_a_random_fraction_from_the_rng(failures: int) -> None:
    # given
    policy = RetryPolicy(initial_interval=2.0, backoff_coefficient=2.0, max_interval=20.0)
    rng, same_seed = random.Random(42), random.Random(42)

    # when
    delays = [policy.delay(failures, rng) for _ in range(5)]

    # then
    expected = [policy.base_delay(failures) * same_seed.random() for _ in range(5)]
    assert delays == expected
    assert all(d < policy.base_delay(failures) for d in delays)
    assert len(set(delays)) == 5  # a fresh fraction each time


def test_without_jitter_the_rng_is_not_used() -> None:
    policy = RetryPolicy(jitter=False)
    rng = random.Random(3)
    before = rng.getstate()

    policy.delay(2, rng)

    assert rng.getstate() == before


policies = st.builds(
    RetryPolicy,
    initial_interval=st.floats(0, 1e6, allow_nan=False),
    backoff_coefficient=st.floats(1, 100, allow_nan=False),
    max_interval=st.floats(0, 1e7, allow_nan=False),
    max_attempts=st.integers(1, 100),
    jitter=st.booleans(),
)


@settings(max_examples=examples(300), deadline=None)
@given(policy=policies, failures=st.integers(1, 10**9), seed=st.integers(0, 2**32))
def test_a_delay_is_never_negative_nor_past_the_cap(
    policy: RetryPolicy, failures: int, seed: int
) -> None:
    # when
    delay = policy.delay(failures, random.Random(seed))

    # then
    assert math.isfinite(delay)
    assert 0 <= delay <= policy.max_interval


@settings(max_examples=examples(100), deadline=None)
@given(policy=policies, failures=st.integers(1, 60))
def test_the_delay_never_shrinks_as_failures_grow(policy: RetryPolicy, failures: int) -> None:
    assert policy.base_delay(failures) <= policy.base_delay(failures + 1)


@pytest.mark.parametrize("failures", [1_025, 10**6, 10**18])
def test_huge_failure_counts_do_not_overflow(failures: int) -> None:
    policy = RetryPolicy(initial_interval=3.0, backoff_coefficient=100.0, max_interval=7.5)

    assert policy.delay(failures, random.Random(1)) <= 7.5
    assert policy.base_delay(failures) == 7.5


@pytest.mark.parametrize(
    ("attempt", "error", "gives_up"),
    [
        (1, "Boom", False),
        (2, "Boom", False),
        (3, "Boom", True),  # the third of three attempts
        (4, "Boom", True),
        (1, "CardDeclined", True),
        (1, TIMEOUT, False),
    ],
)
def test_gives_up_on_non_retryable_errors_and_after_max_attempts(
    attempt: int, error: str, gives_up: bool
) -> None:
    policy = RetryPolicy(max_attempts=3, non_retryable=frozenset({"CardDeclined"}))

    assert policy.gives_up(attempt, error) is gives_up


def test_a_policy_can_treat_timeouts_as_final() -> None:
    policy = RetryPolicy.parse({"non_retryable": [TIMEOUT]}, "$.retry")

    assert policy.gives_up(1, TIMEOUT)


@pytest.mark.parametrize(
    ("attempt", "error", "gives_up"),
    [
        (1, "BudgetServiceDown", False),
        (2, TIMEOUT, False),
        (3, "BudgetServiceDown", True),  # max_attempts still applies
        (1, "BudgetExceeded", True),  # not listed: never retried
        (1, "HeartbeatTimeout", True),
    ],
)
def test_retry_on_retries_only_the_errors_it_lists(
    attempt: int, error: str, gives_up: bool
) -> None:
    policy = RetryPolicy.parse(
        {"retry_on": ["BudgetServiceDown", TIMEOUT], "max_attempts": 3}, "$.retry"
    )

    assert policy.gives_up(attempt, error) is gives_up


def test_retry_on_and_non_retryable_on_one_step_are_refused_with_a_sentence() -> None:
    with pytest.raises(DefinitionError) as caught:
        RetryPolicy.parse({"retry_on": ["A"], "non_retryable": ["B"]}, "$.steps[0].retry")

    assert "either the only errors to retry" in caught.value.problem


def test_a_retry_on_policy_parses_back_to_the_same_policy() -> None:
    policy = RetryPolicy.parse({"retry_on": ["B", "A"], "jitter": False}, "$.retry")

    again = RetryPolicy.parse(policy.to_dict(), "$.retry")

    assert again == policy
    assert policy.to_dict()["retry_on"] == ["A", "B"]
    assert "non_retryable" not in policy.to_dict()


def test_to_dict_parses_back_to_the_same_policy() -> None:
    policy = RetryPolicy(0.25, 1.5, 30.0, 6, frozenset({"B", "A"}), False)

    again = RetryPolicy.parse(policy.to_dict(), "$.retry")

    assert again == policy
    assert policy.to_dict()["non_retryable"] == ["A", "B"]


@pytest.mark.parametrize(
    ("doc", "path"),
    [
        ({"non_retryable": "Boom"}, "$.r.non_retryable"),
        ({"non_retryable": [""]}, "$.r.non_retryable"),
        ({"jitter": "yes"}, "$.r.jitter"),
        ({"backoff_coefficient": "2"}, "$.r.backoff_coefficient"),
        ({"backoff_coefficient": 101}, "$.r.backoff_coefficient"),
        ({"initial_interval": -1}, "$.r.initial_interval"),
        ({"max_interval": "P1M"}, "$.r.max_interval"),
        ({"max_attempts": 2.5}, "$.r.max_attempts"),
        ({"retry_on": "Boom"}, "$.r.retry_on"),
        ({"retry_on": [3]}, "$.r.retry_on"),
        ({"retry_on": ["A"], "non_retryable": ["B"]}, "$.r.retry_on"),
        ([1], "$.r"),
    ],
)
def test_bad_policies_name_their_field(doc: object, path: str) -> None:
    with pytest.raises(DefinitionError) as caught:
        RetryPolicy.parse(doc, "$.r")

    assert caught.value.path == path


class BudgetServiceDown(Exception):
    pass


class BudgetExceeded(Exception):
    pass


def _run_reserve(errors: list[type[Exception]]) -> list[str]:
    """The history of a one-step workflow whose activity raises ``errors`` in turn,
    under a policy that retries only BudgetServiceDown."""
    from templates_engine.testing import FakeClock, InMemoryEngine

    from .support import action, definition, drive

    calls = iter(errors)

    def reserve(key: str, data: dict[str, object]) -> dict[str, bool]:
        error = next(calls, None)
        if error is not None:
            raise error("budget")
        return {"reserved": True}

    defn = definition(
        action(
            "reserve",
            "reserve_budget",
            retry={"retry_on": ["BudgetServiceDown"], "max_attempts": 5, "jitter": False},
        )
    )
    engine = InMemoryEngine(defn, {"reserve_budget": reserve}, FakeClock(), random.Random(1))
    engine.start("wf", {}, submitter="alice")
    drive(engine, "wf")
    return engine.history("wf")


def test_a_listed_error_is_retried_and_an_unlisted_one_fails_the_step_for_good() -> None:
    retried = _run_reserve([BudgetServiceDown, BudgetServiceDown])
    failed = _run_reserve([BudgetServiceDown, BudgetExceeded])

    assert retried == ["reserve:error:1", "reserve:error:2", "reserve:ok:3"]
    # BudgetExceeded is not in retry_on: no third attempt although max_attempts is 5
    assert failed == ["reserve:error:1", "reserve:error:2"]
