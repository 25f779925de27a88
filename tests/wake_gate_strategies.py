"""Hypothesis strategies for wake-gate inputs, shared by the lockstep and unit tests.

The vocabularies are small on purpose: near-miss prefixes and self/foreign
mailboxes are where classification bugs live, and small alphabets make
shrunk traces readable.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from inboxspec.machines.wake_gate_driver import INTERFACE

KINDS = ["agent", "user", "system"]
MAILBOXES = ["me", "peer", "me/child-1"]
TEXTS = ["hello", "[scheduled] sweep", "[scheduled] ", "[Scheduled] sweep", "[scheduled]sweep",
         " [scheduled] sweep"]

any_message = st.fixed_dictionaries(
    {
        "kind": st.sampled_from(KINDS),
        "from": st.sampled_from(MAILBOXES),
        "to": st.sampled_from(MAILBOXES),
        "text": st.sampled_from(TEXTS) | st.text(max_size=14),
    }
)
# Random fields rarely line up into self-mail, so the lanes get their own shapes.
self_mail = st.builds(
    lambda box, note: {"kind": "agent", "from": box, "to": box, "text": "[scheduled] " + note},
    st.sampled_from(MAILBOXES),
    st.sampled_from(["", "sweep"]),
)
# Self-addressed mail with every near-miss text: the prefix rule's edges.
self_addressed = st.builds(
    lambda box, text: {"kind": "agent", "from": box, "to": box, "text": text},
    st.sampled_from(MAILBOXES),
    st.sampled_from(TEXTS),
)
foreign_mail = st.just({"kind": "agent", "from": "peer", "to": "me", "text": "hello"})
user_mail = st.just({"kind": "user", "from": "person", "to": "me", "text": "hi"})
messages = st.one_of(self_mail, self_addressed, foreign_mail, user_mail, any_message)
batches = st.lists(messages, max_size=3)
# Clock moves, including backwards. The names are relative to the current
# floor, so that exact boundaries (now - last == floor) come up often.
FLOOR_RELATIVE = ["at_floor", "below_floor", "above_floor"]
clock_jumps = st.sampled_from(FLOOR_RELATIVE) | st.sampled_from([0, 1, 999, 30_000]) | (
    st.integers(-45_000, 90_000)
)


def resolve_jump(jump: int | str, floor_ms: int) -> int:
    offsets = {"at_floor": 0, "below_floor": -1, "above_floor": 1}
    return floor_ms + offsets[jump] if isinstance(jump, str) else jump
floors = st.sampled_from([0, 1, 1000, 1500, 30_000, 60_000])
# The finding options: spec/wake-gate.interface.json.
options = st.fixed_dictionaries({}, optional=dict.fromkeys(INTERFACE.options, st.booleans()))


def config(max_streak: int, floor_ms: int, opts: dict[str, Any]) -> dict[str, Any]:
    return {"max_streak": max_streak, "floor_ms": floor_ms, "options": opts}
