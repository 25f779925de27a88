"""Each peer-delivery finding: its property fails under the seed default and holds under its option.

The traces are the ones in spec/peer-delivery.md; the properties are checked on
both the reference and the model, so the finding is about the machine and not
about one description of it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from inboxspec.machines.peer_delivery_driver import run_case, run_model_case
from inboxspec.spec import index as spec_index


def send(sender: str = "a", **args: Any) -> dict[str, Any]:
    return {"event": "send_message", "args": {"sender": sender, **args}}


def eviction_spares_the_smaller_sender(outputs: list[dict[str, Any]]) -> bool:
    # F1 trace: a, b, b with a cap of 2; sender a holds one entry, b two.
    evicted = [r["sender"] for r in outputs[-1]["receipts"] if r["state"] == "expired"]
    return evicted == ["b"]


def box_never_exceeds_cap(outputs: list[dict[str, Any]]) -> bool:
    return all(output["box"] <= 1 for output in outputs)


def every_hold_has_a_deadline(outputs: list[dict[str, Any]]) -> bool:
    return all(entry["deadline_ms"] is not None for output in outputs for entry in output["held"])


FINDINGS: dict[str, tuple[str, dict[str, Any], list[dict[str, Any]], Callable[..., bool]]] = {
    "PEER-F1": ("fair_eviction", {"setting": "hold", "held_cap": 2},
                [send("a"), send("b"), send("b")], eviction_spares_the_smaller_sender),
    "PEER-F2": ("release_respects_box_cap", {"setting": "hold", "box_cap": 1},
                [send(), {"event": "set_recipient", "args": {"setting": "accept"}}, send(),
                 {"event": "approve", "args": {"ticket": 1}}], box_never_exceeds_cap),
    "PEER-F3": ("deadline_for_waiting_holds", {"setting": "hold"},
                [send(), {"event": "advance", "args": {"now_ms": 86_400_000}}], every_hold_has_a_deadline),
}


@pytest.mark.parametrize("runner", [run_case, run_model_case], ids=["reference", "model"])
@pytest.mark.parametrize("finding", sorted(FINDINGS))
def test_finding_fails_by_default_and_holds_with_option(finding: str, runner: Callable[..., Any]) -> None:
    option, config, trace, holds = FINDINGS[finding]
    assert not holds(runner(config, trace)["outputs"]), f"{finding}: property unexpectedly holds by default"
    fixed = {**config, "options": {option: True}}
    assert holds(runner(fixed, trace)["outputs"]), f"{finding}: property still fails with {option}"


def test_every_spec_finding_is_demonstrated() -> None:
    assert {f.id for f in spec_index.findings("peer-delivery")} == set(FINDINGS)
