"""The host case files (``conformance/cases/host/*.json``, built by ``tests/host_casebook``).

The expectations are the reference's outputs; these tests check that the files
are what the casebook builds, that the model chart agrees on every case with
valid input, and pin a sample of the recorded outputs against the prose of
``spec/host.md`` independently of both.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from inboxspec.conformance.casefiles import share_fixtures
from inboxspec.impl.peer_delivery import render_delivery_notice
from inboxspec.machines.host_driver import run_model_case
from tests import host_casebook as casebook

BUILT = casebook.build()


def _case(slug: str) -> dict[str, Any]:
    for content in BUILT.values():
        for case in content["cases"]:
            if case["id"] == f"host/{slug}":
                found: dict[str, Any] = case
                return found
    raise KeyError(slug)


def _events(case: dict[str, Any], index: int) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = case["steps"][index]["expect"]["events"]
    return events


@pytest.mark.parametrize("file", sorted(BUILT))
def test_the_file_is_what_the_casebook_builds(file: str) -> None:
    path = casebook.FOLDER / f"{file}.json"
    assert json.loads(path.read_text(encoding="utf-8")) == share_fixtures(BUILT[file])


# The state checks are behaviour, which the model has too; argument faults are parsing, which it has not.
STATE_ERRORS = frozenset({"not_in_turn", "turn_limit", "reminder_limit", "not_held"})
VALID = [
    case for content in BUILT.values() for case in content["cases"]
    if "expect_config_error" not in case
    and all(s["expect"].get("error", "not_held") in STATE_ERRORS for s in case["steps"])
]


def test_the_model_sees_the_state_checks() -> None:
    assert {s["expect"]["error"] for c in VALID for s in c["steps"] if "error" in s["expect"]} == STATE_ERRORS


@pytest.mark.parametrize("case", VALID, ids=[c["id"] for c in VALID])
def test_the_model_agrees(case: dict[str, Any]) -> None:
    steps = [{k: v for k, v in s.items() if k != "expect"} for s in case["steps"]]
    assert run_model_case(case["config"], steps)["outputs"] == [s["expect"] for s in case["steps"]]


# -- a sample, against the prose -------------------------------------------------------------


def test_refusal_is_announced_once_with_its_receipts() -> None:
    """HOST-WAKE-3 / HOST-INV-5: the first refusal carries the gate's line and both receipts,
    the repeats carry neither, and the mail stays pending throughout."""
    case = _case("refusal-keeps-mail-and-announces-once")
    refusals = [e for s in case["steps"] for e in s["expect"]["events"] if e["type"] == "refusal"]
    assert [r["announced"] for r in refusals] == [True, False, False]
    assert refusals[0]["receipts"] == ["wake_attempted", "wake_refused"]
    assert refusals[0]["line"].startswith("inbox wake refused: 1 consecutive inbox wakes")
    assert all(r["line"] is None and r["receipts"] == [] for r in refusals[1:])
    assert all(s["expect"]["sessions"]["s2"]["pending"] == 1 for s in case["steps"][-3:])


def test_receipt_goes_to_the_true_origin_and_mail_carries_the_claim() -> None:
    """HOST-SEND-2/3, HOST-RCPT-1: s1 claims s3; the receipt names s1 and its line goes to s1."""
    case = _case("claimed-sender-is-passed-on")
    send, receipt, line = _events(case, 2)
    assert send == {"type": "send", "session": "s1", "to": "s2", "claimed_from": "s3", "ticket": 1,
                    "send_error": None}
    assert receipt["sender"] == "s1" and receipt["state"] == "delivered"
    assert line == {"type": "line", "to": "s1", "about": "s2", "delivery": "user",
                    "text": render_delivery_notice("delivered", 1, ["s2"])}
    assert case["steps"][2]["expect"]["sessions"]["s3"]["pending"] == 0


def test_forged_reminder_is_exempt_by_default_and_counted_with_the_option() -> None:
    """HOST-F1: the gate books the forged `[scheduled] ` self-mail exempt; stamping counts it."""
    lanes = {}
    for slug in ("f1-default-forged-reminder-wakes-exempt", "f1-option-stamp-true-sender"):
        case = _case(slug)
        events = [e for s in case["steps"] for e in s["expect"]["events"]]
        lanes[slug] = [(e["lane"], e["counts_against_cap"]) for e in events
                       if e["type"] == "wake" and e["lane"] != "userInput"]
    assert lanes["f1-default-forged-reminder-wakes-exempt"] == [("scheduledSelf", False)] * 3
    assert lanes["f1-option-stamp-true-sender"] == [("chatter", True)] * 3


def test_lines_at_next_turn_wake_no_one_and_are_taken_by_the_next_wake() -> None:
    """HOST-OPT-3: the line is counted in `shown`, the tick passes it by, the typed line's wake takes both."""
    case = _case("receipt-line-at-next-turn")
    assert case["steps"][3]["expect"]["sessions"]["s1"] == {"phase": "idle", "pending": 0, "shown": 1,
                                                            "held": 0, "streak": 0}
    assert [e["session"] for e in _events(case, 4)] == ["s2"]
    (wake,) = _events(case, 6)
    assert wake["session"] == "s1" and wake["taken"] == 2


def test_idle_is_told_while_mail_is_pending_by_default_only() -> None:
    """HOST-F3: at 750 ms the target has a message pending; only the default answers idle then."""
    default = _case("f3-default-idle-told-while-mail-pending")
    last = default["steps"][-1]["expect"]
    assert [e["kind"] for e in last["events"] if e["type"] == "answer"] == ["idle"]
    assert last["sessions"]["s2"]["pending"] == 1
    fixed = _case("f3-option-pending-counts-as-held")
    assert fixed["steps"][len(default["steps"]) - 1]["expect"]["events"] == []


def test_fault_order_in_one_step() -> None:
    """HOST-IF-5: with three faults in a step the first of the order is reported."""
    case = _case("three-faults-in-one-step")
    assert [s["expect"]["error"] for s in case["steps"]] == [
        "unknown_session", "invalid_target", "invalid_text", "invalid_claim", "invalid_argument",
        "invalid_argument"]
