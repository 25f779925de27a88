# ruff: noqa: E501, RUF005  (case data reads best one case to a line)
"""Builds the host case files (``conformance/cases/host/*.json``).

Each case names its config, its steps, its description and the requirements it
checks; ``python -m tests.host_casebook`` records the reference's outputs
(``impl/host.py`` through ``machines/host_driver.py``) as the expectations and
rewrites the files. ``tests/test_host_cases.py`` checks that the files are what
this builds, that the model agrees on every valid case, and pins a sample of
the recorded outputs against the spec's prose independently.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from inboxspec.machines.host_driver import run_case
from inboxspec.machines.interface import features_for_options
from tests.writer_proofs_casebook import write_case_file

FOLDER = Path(__file__).resolve().parent.parent / "conformance" / "cases" / "host"
Step = dict[str, Any]

# -- steps -------------------------------------------------------------------------------


def step(event: str, **args: Any) -> Step:
    return {"event": event, "args": args} if args else {"event": event}


TICK = step("tick")


def typed(session: str, text: str = "hi") -> Step:
    return step("user_input", session=session, text=text)


def send(session: str, to: str, text: str = "hello", claimed_from: Any = None) -> Step:
    if claimed_from is None:
        return step("send_message", session=session, to=to, text=text)
    return step("send_message", session=session, to=to, text=text, claimed_from=claimed_from)


def schedule(session: str, delay_ms: int, text: str = "check back") -> Step:
    return step("schedule", session=session, delay_ms=delay_ms, text=text)


def subscribe(session: str, target: str) -> Step:
    return step("subscribe", session=session, target=target)


def end(session: str, detail: Any = "done") -> Step:
    return step("end_turn", session=session) if detail is None else step("end_turn", session=session, detail=detail)


def advance(now_ms: int) -> Step:
    return step("advance", now_ms=now_ms)


def approve(session: str, ticket: int) -> Step:
    return step("approve", session=session, ticket=ticket)


def deny(session: str, ticket: int) -> Step:
    return step("deny", session=session, ticket=ticket)


def setting(session: str, value: Any) -> Step:
    return step("set_setting", session=session, setting=value)


def woken(session: str = "s1") -> list[Step]:
    """The user types to ``session`` and the watcher wakes it: a turn to act in."""
    return [typed(session), TICK]


# -- configs -----------------------------------------------------------------------------

ACCEPT = {"peer_delivery": {"setting": "accept"}}
HOLD = {"peer_delivery": {"setting": "hold"}}
THREE = ["s1", "s2", "s3"]


def config(base: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    out = dict(base or {})
    out.update(extra)
    return out


def opt(name: str, base: dict[str, Any] | None = None) -> dict[str, Any]:
    return config(base, options={name: True})


# -- the cases ---------------------------------------------------------------------------

CASES: dict[str, list[tuple[str, str, list[str], dict[str, Any], list[Step]]]] = {}


def case(file: str, slug: str, description: str, requirements: list[str], cfg: dict[str, Any], steps: list[Step]) -> None:
    CASES.setdefault(file, []).append((slug, description, requirements, cfg, steps))


# The idle watcher (HOST-WAKE-*)
case("watcher", "tick-with-nothing-pending", "A tick with nothing pending asks no gate and records nothing",
     ["HOST-WAKE-1", "HOST-IF-2", "HOST-IF-3"], {}, [TICK])
case("watcher", "user-input-wakes-at-the-next-tick", "A typed line waits as user mail and the next tick wakes its session in the user lane",
     ["HOST-WAKE-4", "HOST-WAKE-1", "HOST-WAKE-2", "HOST-INV-2"], {}, [typed("s2", "please look"), TICK, TICK])
case("watcher", "config-order-and-both-wake", "One tick visits the sessions in config order and wakes each idle one with mail",
     ["HOST-WAKE-1", "HOST-WAKE-2", "HOST-IF-1"], {"sessions": ["b", "a"]}, [typed("a"), typed("b"), TICK])
case("watcher", "addresses-are-compared-as-written", "Addresses are compared as written: a composed accent and its decomposed form are two sessions, and so is each lone surrogate",
     ["HOST-IF-1", "HOST-WAKE-1"], {"sessions": ["\u00e9", "e\u0301", "\ud800", "\udc00"]},
     [typed("e\u0301"), TICK, typed("\udc00"), TICK])
case("watcher", "typed-line-during-a-turn-waits", "A line typed during a turn waits pending and wakes the session after the turn ends",
     ["HOST-WAKE-4", "HOST-WAKE-1", "HOST-TURN-2"], {}, woken() + [typed("s1", "more"), TICK, end("s1"), TICK])
case("watcher", "peer-mail-wakes-as-counted-chatter", "Delivered peer mail wakes its recipient as counted chatter and raises the streak",
     ["HOST-WAKE-2", "HOST-SEND-3"], ACCEPT, woken() + [send("s1", "s2"), TICK, end("s2"), send("s1", "s2", "again"), TICK])
case("watcher", "refusal-keeps-mail-and-announces-once", "A capped refusal keeps the mail pending, announces once with its receipts, then stays quiet",
     ["HOST-WAKE-3", "HOST-INV-5"], config(ACCEPT, wake_gate={"max_streak": 1}),
     woken() + [send("s1", "s2", "one"), TICK, end("s2"), send("s1", "s2", "two"), TICK, TICK, TICK])
case("watcher", "user-line-resets-the-streak", "A wake whose batch holds a typed line resets the streak and a refused session wakes again",
     ["HOST-WAKE-2", "HOST-WAKE-3", "HOST-INV-2"], config(ACCEPT, wake_gate={"max_streak": 1}),
     woken() + [send("s1", "s2", "one"), TICK, end("s2"), send("s1", "s2", "two"), TICK, typed("s2", "go on"), TICK])
case("watcher", "refusal-announced-again-after-reset", "A new refusal episode after a user wake is announced again",
     ["HOST-WAKE-3", "HOST-INV-5"], config(ACCEPT, wake_gate={"max_streak": 1}),
     woken() + [send("s1", "s2", "one"), TICK, end("s2"), send("s1", "s2", "two"), TICK, TICK,
                typed("s2"), TICK, end("s2"), send("s1", "s2", "three"), TICK, end("s2"), send("s1", "s2", "four"), TICK, TICK])
case("watcher", "wake-takes-delivered-mail-from-the-box", "A wake takes its peer mail from the box, so a box of one accepts the next send",
     ["HOST-WAKE-2", "HOST-SEND-4"], {"peer_delivery": {"setting": "accept", "box_cap": 1}},
     woken() + [send("s1", "s2", "one"), send("s1", "s2", "two"), TICK, send("s1", "s2", "three")])

# A turn (HOST-TURN-*)
case("turns", "turn-actions-outside-a-turn", "Every turn action of an idle session is rejected with not_in_turn and changes nothing",
     ["HOST-TURN-1", "HOST-IF-4"], {},
     [send("s1", "s2"), schedule("s1", 10), subscribe("s1", "s2"), end("s1"), TICK])
case("turns", "turn-action-limit", "Past turn_action_limit a turn action is rejected while end_turn still ends the turn",
     ["HOST-TURN-1"], config(ACCEPT, turn_action_limit=2),
     woken() + [send("s1", "s2"), schedule("s1", 5), subscribe("s1", "s2"), end("s1"), TICK, send("s1", "s2", "next turn")])
case("turns", "zero-turn-actions", "With turn_action_limit 0 no turn action is allowed and end_turn is",
     ["HOST-TURN-1"], config(turn_action_limit=0), woken() + [schedule("s1", 0), end("s1", None)])
case("turns", "schedule-counts-one-action", "A schedule counts one turn action: under turn_action_limit 2 a second schedule is allowed and only a third action is turn_limit",
     ["HOST-TURN-1", "HOST-TURN-3"], config(turn_action_limit=2), woken() + [schedule("s1", 100), schedule("s1", 200), send("s1", "s2")])
case("turns", "subscribe-counts-one-action", "A subscribe counts one turn action: under turn_action_limit 2 a schedule after it is allowed and only a third action is turn_limit",
     ["HOST-TURN-1", "HOST-TURN-4"], config(turn_action_limit=2), woken() + [subscribe("s1", "s2"), schedule("s1", 100), send("s1", "s2")])
case("turns", "end-turn-keeps-mail-pending", "Ending a turn sets the phase idle and keeps the mail that arrived during it",
     ["HOST-TURN-2"], ACCEPT, woken() + [send("s1", "s2"), end("s1", None), TICK])
case("turns", "schedule-a-reminder", "A scheduled reminder joins pending mail as scheduled self-mail when the clock reaches it, and wakes exempt",
     ["HOST-TURN-3", "HOST-TIME-1"], {},
     woken() + [schedule("s1", 5000, "look again"), end("s1"), advance(4999), TICK, advance(5000), TICK])
case("turns", "reminders-fall-due-in-scheduling-order", "Reminders due at one advance join in scheduling order, a later one waits",
     ["HOST-TURN-3", "HOST-TIME-1"], {},
     woken() + [schedule("s1", 300, "second"), schedule("s1", 200, "first"), schedule("s1", 900, "later"), end("s1"), advance(500), TICK])
case("turns", "reminder-limit", "With reminder_limit 1 a second waiting reminder is rejected until the first falls due",
     ["HOST-TURN-3"], config(reminder_limit=1),
     woken() + [schedule("s1", 100), schedule("s1", 200), advance(100), schedule("s1", 200)])
case("turns", "reminder-limit-counts-each-waiting-reminder-once", "Under reminder_limit 2 one waiting reminder leaves room for a second, and two waiting reminders reject a third with reminder_limit",
     ["HOST-TURN-3"], config(reminder_limit=2), woken() + [schedule("s1", 100), schedule("s1", 200), schedule("s1", 300)])
case("turns", "reminder-limit-counts-what-is-left-after-an-advance", "Under reminder_limit 2 an advance that makes one of two reminders mail leaves room for one more, not two",
     ["HOST-TURN-3", "HOST-TIME-1"], config(reminder_limit=2),
     woken() + [schedule("s1", 100), schedule("s1", 200), advance(100), schedule("s1", 300), schedule("s1", 400)])
case("turns", "reminder-limit-counts-a-due-reminder-until-it-joins", "Under reminder_limit 1 a reminder already due still counts until an advance, to the same reading, makes it mail",
     ["HOST-TURN-3", "HOST-TIME-1"], config(reminder_limit=1), woken() + [schedule("s1", 0), schedule("s1", 100), advance(0), schedule("s1", 100)])
case("turns", "reminder-limit-zero", "With reminder_limit 0 no reminder can be scheduled",
     ["HOST-TURN-3"], config(reminder_limit=0), woken() + [schedule("s1", 100)])
case("turns", "reminder-past-the-safe-range", "A reminder that would fall due past 2^53 - 1 ms is rejected with invalid_delay",
     ["HOST-TURN-3", "HOST-IF-4"], {}, woken() + [advance(10), schedule("s1", 9007199254740991), schedule("s1", 9007199254740981)])
case("turns", "subscribe-and-be-told-idle", "A subscription reaches the target's idle half, whose settled idle answer comes back as a user line",
     ["HOST-TURN-4", "HOST-IDLE-2", "HOST-LINE-1"], {},
     woken("s1") + woken("s2") + [subscribe("s1", "s2"), end("s1"), end("s2", "all done"), advance(749), advance(750), TICK])
case("turns", "subscription-ids-count-over-the-host", "Subscription ids count from 1 over the whole host, never reused between sessions",
     ["HOST-TURN-4"], {"sessions": THREE},
     woken("s1") + woken("s2") + [subscribe("s1", "s2"), subscribe("s2", "s3"), subscribe("s1", "s3"), subscribe("s1", "s2")])
case("turns", "subscribe-to-an-idle-target", "A subscription to a target already idle is not answered until the target's next turn ends",
     ["HOST-TURN-4", "HOST-IDLE-2"], {}, woken() + [subscribe("s1", "s2"), end("s1"), advance(5000), typed("s2"), TICK, end("s2", "ok"), advance(5750)])
case("turns", "subscribe-refused-by-the-cap-uses-an-id", "A subscribe refused with the cap verdict uses up its subscription id and tells the target nothing",
     ["HOST-TURN-4"], {"sessions": THREE, "idle_subscriptions": {"outstanding_cap": 1, "ttl_ms": 1000}},
     woken() + [subscribe("s1", "s2"), subscribe("s1", "s3"), advance(1000), subscribe("s1", "s3")])
case("turns", "refused-actions-count-against-the-limit", "A queue_full send and a cap subscribe are turn actions counted against turn_action_limit",
     ["HOST-TURN-1", "HOST-SEND-4"],
     {"peer_delivery": {"setting": "accept", "box_cap": 1}, "idle_subscriptions": {"outstanding_cap": 0}, "turn_action_limit": 3},
     woken() + [send("s1", "s2", "one"), send("s1", "s2", "two"), subscribe("s1", "s2"), send("s1", "s2", "three"), schedule("s1", 1)])
case("turns", "reminder-due-at-once-waits-for-an-advance", "A reminder due at once joins pending mail only at the next advance, with no record",
     ["HOST-TURN-3", "HOST-TIME-1"], {}, woken() + [schedule("s1", 0, "now"), end("s1"), TICK, advance(0), TICK])
case("turns", "subscribe-announcement-is-dropped", "The target's host-facing announcement of a new subscriber reaches no one: the subscribe record is all",
     ["HOST-TURN-4"], {}, woken("s1") + woken("s2") + [subscribe("s1", "s2"), end("s2"), TICK])
case("turns", "subscriber-gets-no-detail", "The host adds a subscriber with parity false, so even with the last-turn-text seat wired the idle answer carries no detail and its line shows none",
     ["HOST-TURN-4", "HOST-IDLE-2", "HOST-LINE-1"], {"idle_subscriptions": {"last_turn_text_seat": True}},
     woken("s1") + woken("s2") + [subscribe("s1", "s2"), end("s2", "refactored the parser"), advance(750)])
case("turns", "no-subscribing-to-oneself", "A session cannot subscribe to its own idle: the target is invalid_target and no id is used",
     ["HOST-TURN-4", "HOST-IF-4"], {}, woken() + [subscribe("s1", "s1"), subscribe("s1", "s2")])

# Sending (HOST-SEND-*, HOST-RCPT-1)
case("sending", "delivered", "Accepted mail is delivered into the recipient's pending mail and the sender gets a delivered line",
     ["HOST-SEND-1", "HOST-SEND-3", "HOST-RCPT-1", "HOST-LINE-1"], ACCEPT, woken() + [send("s1", "s2", "hello there")])
case("sending", "held-for-review", "Mail with no mode asserted is held, counted in held, and the sender is told it was held",
     ["HOST-SEND-3", "HOST-RCPT-1", "HOST-IDLE-1"], {}, woken() + [send("s1", "s2"), TICK])
case("sending", "refused", "A refusing recipient refuses the mail and the sender is told",
     ["HOST-SEND-1", "HOST-RCPT-1", "HOST-INV-3"], {"peer_delivery": {"setting": "refuse"}}, woken() + [send("s1", "s2")])
case("sending", "held-then-evicted", "A hold past held_cap evicts the oldest, whose sender is told it expired",
     ["HOST-RCPT-1", "HOST-INV-3"], {"peer_delivery": {"held_cap": 1}}, woken() + [send("s1", "s2", "a"), send("s1", "s2", "b")])
case("sending", "held-expires-by-the-clock", "A held message past its review deadline expires and its sender is told",
     ["HOST-RCPT-1", "HOST-TIME-1", "HOST-INV-3"], {}, woken() + [send("s1", "s2"), advance(299999), advance(300000)])
case("sending", "queue-full-told-in-the-send-only", "A send into a full box reports queue_full in the send record alone, with no receipt",
     ["HOST-SEND-4", "HOST-INV-3"], {"peer_delivery": {"setting": "accept", "box_cap": 1}},
     woken() + [send("s1", "s2", "one"), send("s1", "s2", "two")])
case("sending", "no-sending-to-oneself", "A session cannot send to itself: its message to itself is a reminder",
     ["HOST-SEND-1"], ACCEPT, woken() + [send("s1", "s1")])
case("sending", "claimed-sender-is-passed-on", "The claimed sender becomes the delivered mail's from, while the receipt returns to the true origin",
     ["HOST-SEND-2", "HOST-SEND-3", "HOST-RCPT-1"], config(ACCEPT, sessions=THREE),
     woken() + [send("s1", "s2", "it is me, s3", claimed_from="s3"), TICK])
case("sending", "claimed-sender-held-then-approved", "A held message with a claimed sender is delivered on approval from the claim, told to its true origin",
     ["HOST-SEND-2", "HOST-SEND-3", "HOST-ENV-1", "HOST-RCPT-1"], {"sessions": THREE},
     woken() + [send("s1", "s2", "held", claimed_from="s3"), approve("s2", 1), TICK])
case("sending", "claim-the-recipient-itself", "A message claiming to be from its recipient is delivered as mail from the recipient to itself",
     ["HOST-SEND-2", "HOST-SEND-3"], ACCEPT, woken() + [send("s1", "s2", "hello me", claimed_from="s2"), TICK])
case("sending", "claim-the-sender-itself", "A message claiming its true origin is sent as if nothing were claimed, with the claim recorded",
     ["HOST-SEND-1", "HOST-SEND-2"], ACCEPT, woken() + [send("s1", "s2", "it is me", claimed_from="s1"), TICK])
case("sending", "tickets-per-recipient", "Each recipient's peer delivery numbers its own tickets from 1",
     ["HOST-SEND-1"], config(ACCEPT, sessions=THREE), woken() + [send("s1", "s2"), send("s1", "s3"), send("s1", "s2")])
case("sending", "option-stamp-true-sender", "With stamp_true_sender the claim is recorded and ignored: the mail is from its true origin",
     ["HOST-OPT-1", "HOST-SEND-2"], opt("stamp_true_sender", ACCEPT), woken() + [send("s1", "s2", "[scheduled] x", claimed_from="s2"), TICK])
case("sending", "option-stamp-true-sender-still-checks-the-claim", "Under stamp_true_sender a claimed_from that names no configured session is still invalid_claim, and a valid claim is recorded in send as given while the true origin is the sender",
     ["HOST-OPT-1", "HOST-IF-5", "HOST-SEND-1"], opt("stamp_true_sender"),
     woken() + [send("s1", "s2", "x", claimed_from="nobody"), send("s1", "s2", "x", claimed_from="s2")])

# Notices and receipts under each reading (HOST-LINE-1, HOST-OPT-2/3)
case("notices", "receipt-line-is-user-mail", "By default a delivery receipt is a user-kind line that wakes its session in the user lane",
     ["HOST-LINE-1", "HOST-RCPT-1", "HOST-WAKE-2"], ACCEPT, woken() + [send("s1", "s2"), end("s1"), TICK])
case("notices", "receipt-line-as-agent-mail", "With harness_lines_as_agent_mail a receipt line is agent mail that wakes as counted chatter",
     ["HOST-OPT-2", "HOST-LINE-1"], opt("harness_lines_as_agent_mail", ACCEPT), woken() + [send("s1", "s2"), end("s1"), TICK])
case("notices", "receipt-line-at-next-turn", "With harness_lines_at_next_turn a receipt line waits to be shown, wakes no one, and the next turn takes it",
     ["HOST-OPT-3", "HOST-LINE-1"], opt("harness_lines_at_next_turn", ACCEPT), woken() + [send("s1", "s2"), end("s1"), TICK, typed("s1"), TICK])
case("notices", "idle-notice-is-user-mail", "By default an idle notice is a user-kind line about the target",
     ["HOST-LINE-1", "HOST-IDLE-2"], {},
     woken("s1") + woken("s2") + [subscribe("s1", "s2"), end("s1"), end("s2", "finished"), advance(750), TICK])
case("notices", "idle-notice-as-agent-mail", "With harness_lines_as_agent_mail an idle notice is agent mail about the target",
     ["HOST-OPT-2", "HOST-IDLE-2"], opt("harness_lines_as_agent_mail"),
     woken("s1") + woken("s2") + [subscribe("s1", "s2"), end("s1"), end("s2", "finished"), advance(750), TICK])
case("notices", "idle-notice-at-next-turn", "With harness_lines_at_next_turn an idle notice waits for the next turn",
     ["HOST-OPT-3", "HOST-IDLE-2"], opt("harness_lines_at_next_turn"),
     woken("s1") + woken("s2") + [subscribe("s1", "s2"), end("s1"), end("s2", "finished"), advance(750), TICK, typed("s1"), TICK])
case("notices", "held-target-is-not-idle", "A target holding peer mail is not idle to its subscriber until the hold is settled",
     ["HOST-IDLE-1", "HOST-INV-4", "HOST-IDLE-2"], {"sessions": THREE},
     woken("s1") + woken("s3") + [subscribe("s1", "s2"), send("s3", "s2", "for review"), end("s3"), end("s1"),
                                  typed("s2"), TICK, end("s2", "done"), advance(750), advance(30750), deny("s2", 1), advance(31500), advance(60750)])
case("notices", "subscription-expires", "A subscription past its TTL is told to the requester as an expired line about the target",
     ["HOST-IDLE-2", "HOST-TIME-1"], {"idle_subscriptions": {"ttl_ms": 1000}},
     woken() + [subscribe("s1", "s2"), end("s1"), advance(1000)])
case("notices", "pushed-out-notice-comes-after-the-record", "Under notify_pushed_out a subscribe records itself, then the pushed-out notice's line, then the target's answers",
     ["HOST-IF-3", "HOST-TURN-4", "HOST-IDLE-2"], {"idle_subscriptions": {"priors_kept": 0, "options": {"notify_pushed_out": True}}},
     woken() + [subscribe("s1", "s2"), subscribe("s1", "s2")])
case("notices", "advance-answers-session-by-session", "An advance goes session by session: each session's own expiry lines, then its answers, each told at once",
     ["HOST-TIME-1", "HOST-IDLE-2"], {"sessions": THREE, "idle_subscriptions": {"ttl_ms": 2000}},
     woken("s1") + woken("s2") + [subscribe("s1", "s3"), subscribe("s2", "s3"), advance(1250), subscribe("s2", "s1"),
                                  end("s1", "done"), end("s2"), advance(2000)])
case("notices", "lines-at-next-turn-are-not-pending", "Under pending_counts_as_held a line waiting for the next turn is not pending: the target is still idle",
     ["HOST-OPT-3", "HOST-OPT-4", "HOST-IDLE-1"],
     config(ACCEPT, options={"harness_lines_at_next_turn": True, "pending_counts_as_held": True}),
     woken("s1") + woken("s2") + [subscribe("s1", "s2"), send("s2", "s1", "note"), end("s2", "done"), advance(750)])
case("notices", "pending-lines-count-as-held", "Under pending_counts_as_held a harness line waiting as pending mail counts: the target is not idle",
     ["HOST-OPT-4", "HOST-LINE-1", "HOST-IDLE-1"], config(ACCEPT, options={"pending_counts_as_held": True}),
     woken("s1") + woken("s2") + [subscribe("s1", "s2"), send("s2", "s1", "note"), end("s2", "done"), advance(750)])

# The environment (HOST-ENV-*, HOST-TIME-*)
case("environment", "approve-held-mail", "Approving held mail delivers it into the recipient's pending mail and tells the sender",
     ["HOST-ENV-1", "HOST-SEND-3", "HOST-RCPT-1", "HOST-IDLE-1"], {}, woken() + [send("s1", "s2", "review me"), approve("s2", 1), TICK])
case("environment", "deny-held-mail", "Denying held mail tells its sender it was denied and nothing is delivered",
     ["HOST-ENV-1", "HOST-RCPT-1", "HOST-INV-3"], {}, woken() + [send("s1", "s2"), deny("s2", 1), TICK])
case("environment", "approve-not-held", "Approving a ticket that is not held is peer delivery's not_held and changes nothing",
     ["HOST-ENV-1", "HOST-IF-5", "HOST-IF-4"], {}, woken() + [send("s1", "s2"), approve("s2", 2), deny("s1", 1), approve("s2", 1), deny("s2", 1)])
case("environment", "setting-change-drains", "A setting change from hold to accept drains the held mail into pending and tells the sender",
     ["HOST-ENV-2", "HOST-RCPT-1", "HOST-IDLE-1"], HOLD,
     woken() + [send("s1", "s2", "a"), send("s1", "s2", "b"), setting("s2", "accept"), TICK])
case("environment", "setting-change-refuses", "A setting change to refuse refuses mail waiting for the setting at the drain round",
     ["HOST-ENV-2", "HOST-RCPT-1"], HOLD, woken() + [send("s1", "s2"), setting("s2", "refuse"), send("s1", "s2")])
case("environment", "setting-unset-keeps-review", "Unsetting the setting re-judges mail held for the setting, which waits for review",
     ["HOST-ENV-2"], HOLD, woken() + [send("s1", "s2"), setting("s2", None), approve("s2", 1)])
case("environment", "setting-null-unsets", "A set_setting to null unsets the setting (it is not the absent argument): the message held for the setting waits for review then, and expires at the review deadline",
     ["HOST-ENV-2"], HOLD, woken() + [send("s1", "s2"), setting("s2", None), advance(300000)])
case("environment", "advance-order", "One advance tells peer delivery's receipts, then idle answers, then due reminders",
     ["HOST-TIME-1", "HOST-TIME-2", "HOST-RCPT-1", "HOST-IDLE-2"], {"idle_subscriptions": {"debounce_ms": 300000}},
     woken("s1") + woken("s2") + [send("s2", "s1", "review"), subscribe("s1", "s2"), schedule("s2", 300000, "wake up"), end("s2"),
                                  end("s1", "done"), advance(300000)])
case("environment", "setting-again-drains-what-a-full-box-kept", "A set_setting to the setting in force still drains: the message a full box kept back is delivered once the box has room",
     ["HOST-ENV-2", "HOST-RCPT-1"], {"peer_delivery": {"setting": "hold", "box_cap": 1, "options": {"release_respects_box_cap": True}}},
     woken() + [send("s1", "s2", "a"), send("s1", "s2", "b"), setting("s2", "accept"), TICK, setting("s2", "accept")])
# advance-order's mirror: the receipt is the later session's and the answer the earlier session's, so a
# host that advanced each session's delivery and then its idle half would tell them the other way round.
case("environment", "advance-order-across-sessions", "One advance tells every session's peer delivery receipts before any session's idle answer: a later session's receipt comes before an earlier session's answer",
     ["HOST-TIME-1", "HOST-RCPT-1", "HOST-IDLE-2"], {},
     woken("s1") + woken("s2") + [send("s1", "s2", "review"), subscribe("s2", "s1"), end("s1"), end("s2"), advance(300000)])
# The held message expires in the advance in which the idle half's back-off falls due: told at once, the
# idle half would answer in that advance.
case("environment", "held-count-synced-at-the-end-of-the-step", "The idle half learns a held message's expiry only at the end of the advance that expired it: in that advance its back-off still sees the message held, and the idle answer comes at the next back-off",
     ["HOST-IDLE-1", "HOST-TIME-1"], {},
     woken("s1") + woken("s2") + [send("s1", "s2", "review"), subscribe("s1", "s2"), end("s2"), end("s1"),
                                  advance(750), advance(300750), advance(330750)])
case("environment", "advance-to-the-same-time", "Advancing to the current clock is allowed and a clock moving back is invalid_time",
     ["HOST-TIME-1", "HOST-IF-4"], {}, [advance(10), advance(10), advance(9), advance(11)])
case("environment", "approve-into-a-full-box", "Under peer delivery's release_respects_box_cap an approval into a full box is box_full and changes nothing",
     ["HOST-ENV-1", "HOST-IF-5", "HOST-IF-4"], {"peer_delivery": {"box_cap": 1, "options": {"release_respects_box_cap": True}}},
     woken() + [send("s1", "s2", "a"), send("s1", "s2", "b"), approve("s2", 1), approve("s2", 2), approve("s2", 3), end("s1"), TICK, approve("s2", 2)])

# Invalid input and the fault order (HOST-IF-*)
case("invalid", "config-unknown-key", "An unknown config key is invalid_config", ["HOST-IF-1"], {"session": ["a", "b"]}, [])
case("invalid", "config-one-session", "A host of one session is invalid_config", ["HOST-IF-1"], {"sessions": ["solo"]}, [])
case("invalid", "config-duplicate-sessions", "Duplicate session addresses are invalid_config", ["HOST-IF-1"], {"sessions": ["a", "a"]}, [])
case("invalid", "config-empty-address", "An empty session address is invalid_config", ["HOST-IF-1"], {"sessions": ["a", ""]}, [])
case("invalid", "config-nine-sessions", "Nine sessions are more than the host takes", ["HOST-IF-1"], {"sessions": [f"s{i}" for i in range(9)]}, [])
case("invalid", "config-part-rejected", "A part config its machine rejects is invalid_config of the host", ["HOST-IF-1"], {"wake_gate": {"max_streak": -1}}, [])
case("invalid", "config-part-unknown-key", "An unknown key in a part config is invalid_config of the host", ["HOST-IF-1"], {"peer_delivery": {"held": 1}}, [])
case("invalid", "config-part-not-an-object", "A part config that is not an object is invalid_config", ["HOST-IF-1"], {"idle_subscriptions": []}, [])
case("invalid", "config-part-null-wake-gate", "A null wake_gate is invalid_config: null is not a part config and does not stand for the default", ["HOST-IF-1"], {"wake_gate": None}, [])
case("invalid", "config-part-null-peer-delivery", "A null peer_delivery is invalid_config: null is not a part config and does not stand for the default", ["HOST-IF-1"], {"peer_delivery": None}, [])
case("invalid", "config-part-null-idle-subscriptions", "A null idle_subscriptions is invalid_config: null is not a part config and does not stand for the default", ["HOST-IF-1"], {"idle_subscriptions": None}, [])
case("invalid", "config-idle-clock-start", "An idle start_ms other than the host clock's start is invalid_config", ["HOST-IF-1", "HOST-TIME-1"], {"idle_subscriptions": {"start_ms": 5}}, [])
case("invalid", "config-idle-clock-start-zero", "An idle start_ms of 0, the host clock's start, is accepted", ["HOST-IF-1", "HOST-TIME-1"], {"idle_subscriptions": {"start_ms": 0}}, woken())
case("invalid", "config-both-line-readings", "The two other readings of HOST-LINE-1 together are invalid_config",
     ["HOST-IF-1", "HOST-OPT-2", "HOST-OPT-3"], {"options": {"harness_lines_as_agent_mail": True, "harness_lines_at_next_turn": True}}, [])
case("invalid", "config-unknown-option", "An unknown option is invalid_config", ["HOST-IF-1"], {"options": {"trust_everyone": True}}, [])
case("invalid", "config-option-not-boolean", "An option that is not a boolean is invalid_config", ["HOST-IF-1"], {"options": {"stamp_true_sender": 1}}, [])
case("invalid", "config-limit-not-an-integer", "A turn_action_limit that is not a safe integer is invalid_config", ["HOST-IF-1"], {"turn_action_limit": 1.5}, [])
case("invalid", "config-reminder-limit-negative", "A negative reminder_limit is invalid_config", ["HOST-IF-1"], {"reminder_limit": -1}, [])
case("invalid", "config-limits-null", "Null limits are the defaults: no limit", ["HOST-IF-1"], {"turn_action_limit": None, "reminder_limit": None}, woken() + [end("s1")])
case("invalid", "extra-argument-first", "An argument the event does not define is invalid_argument before every other fault",
     ["HOST-IF-5", "HOST-IF-4"], {}, [step("tick", now_ms=1), step("send_message", session="nobody", to="s1", text=3, via="x")])
case("invalid", "bad-arguments-one-each", "Each bad argument is reported with its own code and changes nothing",
     ["HOST-IF-5", "HOST-IF-4"], {},
     woken() + [typed("nobody"), step("user_input", session="s1", text=None), step("send_message", session="s1", to="nobody", text="x"),
                send("s1", "s2", "x", claimed_from="nobody"), step("schedule", session="s1", delay_ms=-1, text="x"),
                step("schedule", session="s1", delay_ms=1.5, text="x"), step("subscribe", session="s1", target="s1"),
                step("end_turn", session="s1", detail=5), step("approve", session="s2", ticket=0), step("deny", session="s2", ticket=True),
                setting("s2", "maybe"), step("advance", now_ms="soon"), step("advance", now_ms=9007199254740992), TICK])
case("invalid", "missing-required-arguments", "An absent required argument is reported with that argument's own code",
     ["HOST-IF-5"], {},
     [step("user_input", session="s1"), step("user_input", text="x"), step("send_message", session="s1", to="s2"),
      step("schedule", session="s1", text="x"), step("subscribe", session="s1"), step("approve", session="s1"),
      step("set_setting", session="s1"), step("advance"), step("end_turn")])
case("invalid", "two-faults-argument-before-state", "A bad target outranks not_in_turn, and a bad text outranks it too",
     ["HOST-IF-5"], {}, [send("s1", "nobody"), step("send_message", session="s1", to="s2", text=None), schedule("s1", 1), end("s1")])
case("invalid", "two-faults-arguments-in-order", "Of two bad arguments the earlier one in the event's order is reported",
     ["HOST-IF-5"], {}, woken() + [step("send_message", session="s1", to="s1", text=None), step("schedule", session="s1", delay_ms=-1, text=None),
                                   step("approve", session="nobody", ticket=0), step("set_setting", session=None, setting="maybe")])
case("invalid", "two-faults-turn-limit-before-reminder-limit", "Past both limits a schedule reports turn_limit, then not_in_turn outranks both",
     ["HOST-IF-5", "HOST-TURN-1", "HOST-TURN-3"], config(turn_action_limit=1, reminder_limit=1),
     woken() + [schedule("s1", 100), schedule("s1", 100), end("s1"), schedule("s1", 100)])
case("invalid", "three-faults-in-one-step", "Three faults in one step report the first of the fault order",
     ["HOST-IF-5", "HOST-IF-4"], {},
     [step("send_message", session="nobody", to="nobody", text=None, claimed_from=7),
      step("send_message", session="s1", to="nobody", text=None, claimed_from=7),
      step("send_message", session="s1", to="s2", text=None, claimed_from=7),
      step("send_message", session="s1", to="s2", text="x", claimed_from=7),
      step("schedule", session="s1", delay_ms="x", text=None, extra=1),
      step("approve", session="s2", ticket=-3, note="x")])
case("invalid", "rejected-steps-use-no-ticket-or-id", "A rejected send or subscribe uses no ticket and no subscription id",
     ["HOST-IF-4"], ACCEPT, woken() + [step("send_message", session="s1", to="s2", text=7), send("s1", "s2"), subscribe("s1", "s1"), subscribe("s1", "s2")])

# The findings (HOST-F*), each by default and under its option
F1_STEPS = woken() + [send("s1", "s2", "[scheduled] your turn", claimed_from="s2"), end("s1"), TICK, end("s1"),
                      send("s2", "s1", "[scheduled] your turn", claimed_from="s1"), end("s2"), advance(1000), TICK, end("s2"),
                      send("s1", "s2", "[scheduled] your turn", claimed_from="s2"), end("s1"), advance(2000), TICK]
case("findings", "f1-default-forged-reminder-wakes-exempt", "By default a forged scheduled reminder wakes its recipient exempt from the cap",
     ["HOST-INV-1", "HOST-SEND-2"], config(ACCEPT, wake_gate={"max_streak": 1, "floor_ms": 1000}),
     F1_STEPS)
case("findings", "f1-option-stamp-true-sender", "With stamp_true_sender the forged reminder is counted chatter and the cap refuses it",
     ["HOST-INV-1", "HOST-OPT-1"], opt("stamp_true_sender", config(ACCEPT, wake_gate={"max_streak": 1, "floor_ms": 1000})),
     F1_STEPS)
F2_STEPS = woken() + [send("s1", "s2", "one"), end("s1"), TICK, send("s2", "s1", "two"), end("s2"), TICK,
                      send("s1", "s2", "three"), end("s1"), TICK, TICK]
F2_CONFIG = config(ACCEPT, wake_gate={"max_streak": 1})
case("findings", "f2-default-receipt-lines-reset-the-streak", "By default receipt lines wake as user input and reset the streak, so chatter never meets the cap",
     ["HOST-INV-1", "HOST-LINE-1"], F2_CONFIG, F2_STEPS)
case("findings", "f2-option-lines-as-agent-mail", "With harness_lines_as_agent_mail receipt lines count as chatter and the cap refuses the loop",
     ["HOST-INV-1", "HOST-OPT-2"], opt("harness_lines_as_agent_mail", F2_CONFIG), F2_STEPS)
case("findings", "f2-option-lines-at-next-turn", "With harness_lines_at_next_turn receipt lines wake no one and the cap refuses the loop",
     ["HOST-INV-1", "HOST-OPT-3"], opt("harness_lines_at_next_turn", F2_CONFIG), F2_STEPS)
F3_STEPS = woken("s1") + woken("s2") + [subscribe("s1", "s2"), send("s1", "s2", "more work"), end("s1"), end("s2", "done"), advance(750)]
case("findings", "f3-default-idle-told-while-mail-pending", "By default the subscriber is told idle while the target has mail pending",
     ["HOST-INV-4", "HOST-IDLE-1"], ACCEPT, F3_STEPS)
case("findings", "f3-option-pending-counts-as-held", "With pending_counts_as_held the idle half backs off while mail is pending",
     ["HOST-INV-4", "HOST-OPT-4", "HOST-IDLE-1"], opt("pending_counts_as_held", ACCEPT), F3_STEPS + [TICK, end("s2", "really done"), advance(30750)])

FEATURED = {
    slug: features_for_options(cfg["options"])
    for cases in CASES.values() for slug, _d, _r, cfg, _s in cases
    if isinstance(cfg.get("options"), dict)
}


def build() -> dict[str, dict[str, Any]]:
    files: dict[str, dict[str, Any]] = {}
    for file, cases in CASES.items():
        rendered = []
        for slug, description, requirements, cfg, steps in cases:
            result = run_case(cfg, steps)
            entry: dict[str, Any] = {"id": f"host/{slug}", "description": description, "requirements": requirements}
            features = [f for f in FEATURED.get(slug, []) if "config_error" not in result]
            if features:
                entry["features"] = features
            entry["config"] = cfg
            if "config_error" in result:
                entry["expect_config_error"] = result["config_error"]
                entry["steps"] = []
            else:
                entry["steps"] = [{**s, "expect": out} for s, out in zip(steps, result["outputs"], strict=True)]
            rendered.append(entry)
        files[file] = {"machine": "host", "cases": rendered}
    return files


def main() -> int:
    FOLDER.mkdir(parents=True, exist_ok=True)
    for file, content in build().items():
        write_case_file(FOLDER / f"{file}.json", content)
    return 0


if __name__ == "__main__":
    sys.exit(main())
