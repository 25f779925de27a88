"""Each inbox-refresh finding: its property fails under the seed default and holds under its option.

The traces are the ones in spec/inbox-refresh.md; the properties are checked on
both the reference and the model, so the finding is about the machine and not
about one description of it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from inboxspec.machines.inbox_refresh_driver import run_case, run_model_case

T = "2026-01-01T00:00:00.000Z"
RESULT = {"outcome": "result", "duration_ms": 100, "computation": {
    "items": [{"id": "c1", "at": T, "title": "t", "detail": "d"}], "more": 0, "expires_at": None,
    "capacity": None}}
SNAPSHOT = {"event": "snapshot"}


def advance(now_ms: int) -> dict[str, Any]:
    return {"event": "advance", "args": {"now_ms": now_ms}}


def refreshing_means_a_refresh_can_run(outputs: list[dict[str, Any]]) -> bool:
    # After the failed refresh, stale items must not claim a refresh is under way.
    return outputs[-1]["snapshot"]["refreshing"] is False


def every_failure_is_logged(outputs: list[dict[str, Any]]) -> bool:
    # The snapshot that turned the inbox unavailable must say why in the log.
    last = outputs[-1]
    return last["snapshot"]["items"][0]["id"] != "inbox:unavailable" or bool(last["log"])


FINDINGS: dict[str, tuple[str, dict[str, Any], list[dict[str, Any]], Callable[..., bool]]] = {
    "REFRESH-F1": (
        "refreshing_only_when_runnable",
        {"jobs": [RESULT, {"outcome": "unavailable", "duration_ms": 100}]},
        [SNAPSHOT, advance(100), {"event": "invalidate"}, advance(30000), SNAPSHOT, advance(30100), SNAPSHOT],
        refreshing_means_a_refresh_can_run,
    ),
    "REFRESH-F2": (
        "read_failure_backs_off",
        {"jobs": [RESULT]},
        [{"event": "set_readable", "args": {"value": False}}, SNAPSHOT],
        every_failure_is_logged,
    ),
}


@pytest.mark.parametrize("finding", sorted(FINDINGS))
@pytest.mark.parametrize("runner", [run_case, run_model_case], ids=["reference", "model"])
def test_finding_fails_by_default_and_holds_with_option(finding: str, runner: Callable[..., Any]) -> None:
    option, config, steps, holds = FINDINGS[finding]
    assert not holds(runner(config, steps)["outputs"]), f"{finding}: the seed default should break it"
    with_option = {**config, "options": {option: True}}
    assert holds(runner(with_option, steps)["outputs"]), f"{finding}: {option} should fix it"


def added_adds(outputs: list[dict[str, Any]]) -> bool:
    # Two rows and more 5 before the invalidation: the total must not fall below 7.
    last = outputs[-1]["snapshot"]
    rows: int = len([i for i in last["items"] if i["id"] != "inbox:more"]) + last["more"]
    return rows >= 7


# REFRESH-F3's option refuses input, which only the reference (not the model) validates.
INPUT_FINDINGS: dict[str, tuple[str, dict[str, Any], list[dict[str, Any]], Callable[..., bool]]] = {
    "REFRESH-F3": (
        "reject_negative_added",
        {"jobs": [{"outcome": "result", "duration_ms": 100, "computation": {"items": [
            {"id": "c1", "at": T}, {"id": "c2", "at": T}, {"id": "inbox:more", "at": T}], "more": 5,
            "expires_at": None, "capacity": None}}]},
        [SNAPSHOT, advance(100), {"event": "invalidate", "args": {"added": -3}}, SNAPSHOT],
        added_adds,
    ),
}


@pytest.mark.parametrize("finding", sorted(INPUT_FINDINGS))
def test_input_finding_fails_by_default_and_holds_with_option(finding: str) -> None:
    option, config, steps, holds = INPUT_FINDINGS[finding]
    assert not holds(run_case(config, steps)["outputs"]), f"{finding}: the seed default should break it"
    outputs = run_case({**config, "options": {option: True}}, steps)["outputs"]
    assert outputs[2] == {"error": "invalid_invalidation", "log": []}
    assert holds(outputs), f"{finding}: {option} should fix it"


def test_every_finding_of_the_spec_is_here() -> None:
    from inboxspec.spec import index

    assert sorted(f.id for f in index.findings("inbox-refresh")) == sorted({**FINDINGS, **INPUT_FINDINGS})
