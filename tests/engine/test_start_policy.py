"""The start policy of a definition: parsed and validated here, enforced by the store."""

from __future__ import annotations

from typing import Any

import pytest

from templates_engine import Definition, DefinitionError, StartPolicy

from .support import approval

STEPS = [approval("manager", {"manager": "submitter"})]


def _parse(**top: Any) -> Definition:
    return Definition.parse({"key": "start-flow", "steps": STEPS, **top})


def test_without_a_start_policy_a_running_subject_is_refused_and_a_finished_one_allowed() -> None:
    policy = _parse().start_policy

    assert policy == StartPolicy("reject", "allow")


@pytest.mark.parametrize("while_running", ["reject", "use_existing", "allow"])
@pytest.mark.parametrize("after_finished", ["allow", "reject"])
def test_every_start_policy_parses(while_running: str, after_finished: str) -> None:
    doc = {"while_running": while_running, "after_finished": after_finished}

    policy = _parse(start_policy=doc).start_policy

    assert (policy.while_running, policy.after_finished) == (while_running, after_finished)
    assert policy.to_dict() == doc


def test_a_partial_start_policy_takes_the_defaults_for_the_rest() -> None:
    assert _parse(start_policy={"while_running": "use_existing"}).start_policy == StartPolicy(
        "use_existing", "allow"
    )
    assert _parse(start_policy={"after_finished": "reject"}).start_policy == StartPolicy(
        "reject", "reject"
    )


@pytest.mark.parametrize(
    ("policy", "path", "problem"),
    [
        ("reject", "$.start_policy", "must be an object"),
        (["reject"], "$.start_policy", "must be an object"),
        ({"while_running": "ignore"}, "$.start_policy.while_running", "reject, use_existing"),
        ({"while_running": None}, "$.start_policy.while_running", "must be one of"),
        ({"while_running": True}, "$.start_policy.while_running", "must be one of"),
        ({"after_finished": "use_existing"}, "$.start_policy.after_finished", "allow, reject"),
        ({"after_finished": ""}, "$.start_policy.after_finished", "must be one of"),
        ({"when_running": "reject"}, "$.start_policy.when_running", "not a start policy field"),
    ],
)
def test_a_bad_start_policy_is_refused_naming_its_path(
    policy: object, path: str, problem: str
) -> None:
    with pytest.raises(DefinitionError) as caught:
        _parse(start_policy=policy)

    assert caught.value.path == path
    assert problem in caught.value.problem


def test_a_null_start_policy_is_the_default() -> None:
    assert _parse(start_policy=None).start_policy == StartPolicy()


def test_an_unknown_top_level_field_is_still_refused() -> None:
    with pytest.raises(DefinitionError) as caught:
        _parse(start_policies={"while_running": "allow"})

    assert caught.value.path == "$.start_policies"
