"""The host case files (``conformance/cases/host/*.json``, built by ``tests/host_casebook``).

The expectations are the reference's outputs; these tests check that the files
are what the casebook builds, that the model chart agrees on every case with
valid input, and pin a sample of the recorded outputs against the prose of
``spec/host.md`` independently of both.
"""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from inboxspec import machines
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
# `box_full` is peer delivery's, passed through by approve (HOST-ENV-1).
STATE_ERRORS = frozenset({"not_in_turn", "turn_limit", "reminder_limit", "not_held", "box_full"})
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


def _types(case: dict[str, Any], index: int) -> list[str]:
    return [e["type"] for e in _events(case, index)]


def test_a_capped_subscribe_uses_its_id_and_tells_the_target_nothing() -> None:
    """HOST-TURN-4: ids 1, 2 (cap), then 3 once the first has expired; the cap adds no answer."""
    case = _case("subscribe-refused-by-the-cap-uses-an-id")
    subscribes = [e for s in case["steps"] for e in s["expect"]["events"] if e["type"] == "subscribe"]
    assert [(e["subscription"], e["verdict"]) for e in subscribes] == [(1, "sent"), (2, "cap"), (3, "sent")]
    assert _types(case, 3) == ["subscribe"]


def test_refused_actions_still_count_against_the_turn_budget() -> None:
    """HOST-TURN-1: a queue_full send and a cap subscribe are the 2nd and 3rd of 3 actions."""
    case = _case("refused-actions-count-against-the-limit")
    assert _events(case, 3)[0]["send_error"] == "queue_full"
    assert _events(case, 4)[0]["verdict"] == "cap"
    assert [s["expect"].get("error") for s in case["steps"][5:]] == ["turn_limit", "turn_limit"]


def test_a_reminder_due_at_once_waits_for_an_advance_and_joins_without_a_record() -> None:
    """HOST-TURN-3, HOST-TIME-1 step 3: nothing pending until advance(0), which records nothing."""
    case = _case("reminder-due-at-once-waits-for-an-advance")
    assert [s["expect"]["sessions"]["s1"]["pending"] for s in case["steps"][2:6]] == [0, 0, 0, 1]
    assert _events(case, 4) == [] and _events(case, 5) == []
    (wake,) = _events(case, 6)
    assert wake["lane"] == "scheduledSelf"


def test_the_targets_announcement_is_dropped() -> None:
    """HOST-TURN-4: a sent subscribe records itself alone; the target gets no line."""
    case = _case("subscribe-announcement-is-dropped")
    assert _events(case, 4) == [{"type": "subscribe", "session": "s1", "target": "s2", "subscription": 1,
                                 "verdict": "sent", "pushed_out": None}]
    assert case["steps"][4]["expect"]["sessions"]["s2"] == {"phase": "turn", "pending": 0, "shown": 0,
                                                            "held": 0, "streak": 0}


def test_a_pushed_out_notice_comes_between_the_record_and_the_targets_answer() -> None:
    """HOST-IF-3, IDLE-OPT-1: subscribe record, the requester's own unavailable line, the target's answer."""
    case = _case("pushed-out-notice-comes-after-the-record")
    subscribe, line, answer = _events(case, 3)
    assert subscribe["pushed_out"] == 1 and subscribe["subscription"] == 2
    assert (line["to"], line["about"]) == ("s1", "s2")
    assert (answer["from"], answer["subscription"], answer["kind"]) == ("s2", 1, "unavailable")
    assert "features" not in case  # a part option carries no host feature tag


def test_an_advance_goes_session_by_session() -> None:
    """HOST-TIME-1 step 2: s1's expiry line, s1's answer and its line to s2, then s2's expiry line."""
    case = _case("advance-answers-session-by-session")
    seen = [(e["type"], e.get("to"), e.get("about", e.get("from"))) for e in _events(case, -1)]
    assert seen == [("line", "s1", "s3"), ("answer", "s2", "s1"), ("line", "s2", "s1"), ("line", "s2", "s3")]


def test_lines_waiting_for_the_next_turn_are_not_held() -> None:
    """HOST-OPT-4 with HOST-OPT-3: the target's waiting receipt line does not stop its idle answer."""
    case = _case("lines-at-next-turn-are-not-pending")
    assert case["steps"][-1]["expect"]["sessions"]["s2"]["shown"] == 1
    assert [e["kind"] for e in _events(case, -1) if e["type"] == "answer"] == ["idle"]


def test_box_full_is_passed_through_after_not_held() -> None:
    """HOST-ENV-1, HOST-IF-5: into a full box a held ticket is box_full, an unheld one not_held,
    and neither changes anything."""
    case = _case("approve-into-a-full-box")
    before = case["steps"][4]["expect"]["sessions"]
    assert [s["expect"] for s in case["steps"][5:7]] == [{"error": "box_full", "sessions": before},
                                                         {"error": "not_held", "sessions": before}]
    assert _events(case, -1)[0]["state"] == "delivered"


def test_host_features_are_the_host_options_only() -> None:
    """HOST-IF-1: the host's features are its four options' tags, and a case's features are the
    tags of its own `options`, never a part's."""
    entry = machines.get("host")
    assert entry.interface is not None
    host_options = {f"option:{name}" for name in entry.interface.vocabulary("options")}
    assert set(entry.features) == host_options and len(host_options) == 4
    for content in BUILT.values():
        for case in content["cases"]:
            own = case["config"].get("options", {})
            valid = "expect_config_error" not in case and isinstance(own, dict)
            wanted = [f"option:{k}" for k, v in own.items() if v is True] if valid else []
            assert case.get("features", []) == wanted
            assert set(wanted) <= host_options


def test_the_fuzz_draws_the_turn_limits_and_meets_their_rejections() -> None:
    """``conform --fuzz`` on the host sets ``turn_action_limit`` and ``reminder_limit`` in some cases
    (HOST-TURN-1, HOST-TURN-3), and its steps meet both rejections: a port that ignores either, or
    counts only the reminders whose due time is still ahead, is then caught by the fuzz too."""
    from inboxspec.machines import host_driver

    errors: set[Any] = set()
    limited = {"turn_action_limit": 0, "reminder_limit": 0}
    for seed in range(300):
        config, steps = host_driver.fuzz(random.Random(seed))
        for key in limited:
            limited[key] += key in config
        errors |= {output.get("error") for output in host_driver.run_case(config, steps).get("outputs", [])}
    assert all(limited.values()), limited
    assert {"turn_limit", "reminder_limit"} <= errors
