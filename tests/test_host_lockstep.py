"""Lockstep: every generated host event goes to the host chart and to the reference host.

Rule names are the spec's event names, so a shrunk failure reads as a trace;
the failing run also notes the trace as a ready-to-commit conformance case.
The model takes valid steps only (``machines/sessions.py``): every argument is
well-formed, while the state checks (``not_in_turn``, ``turn_limit``,
``reminder_limit``, ``not_held``) are behaviour and are reached freely.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import initialize, invariant, rule

from inboxspec.impl.host import Host
from inboxspec.machines.host_driver import INTERFACE, ModelSession, apply_step
from tests.lockstep import Lockstep, event_rule

ADDRESSES = ("s1", "s2", "s3")
OPTIONS = st.fixed_dictionaries({}, optional=dict.fromkeys(INTERFACE.options, st.booleans())).filter(
    lambda o: not (o.get("harness_lines_as_agent_mail") and o.get("harness_lines_at_next_turn"))
)
SETTINGS = st.sampled_from([None, *INTERFACE.vocabulary("settings")])
TEXTS = st.sampled_from(["hello", "[scheduled] ping", "", "done"])
# Steps of the clock near the composed machines' periods: the gate's floor (1000 here), the idle
# debounce (750) and held back-off (2000), the peer delivery's review deadline (300 000).
CLOCK_STEPS = st.sampled_from([0, 1, 749, 750, 1000, 2000, 30_000, 300_000]) | st.integers(0, 400_000)
LIMITS = st.none() | st.integers(0, 3)


class HostLockstep(Lockstep):
    machine = "host"

    @initialize(count=st.sampled_from([2, 2, 3]), max_streak=st.integers(0, 3),
                floor_ms=st.sampled_from([0, 1000]), setting=SETTINGS, held_cap=st.integers(1, 3),
                box_cap=st.integers(0, 3), ttl_ms=st.sampled_from([5000, 43_200_000]),
                turn_action_limit=LIMITS, reminder_limit=LIMITS, options=OPTIONS)
    def create(self, count: int, max_streak: int, floor_ms: int, setting: str | None, held_cap: int,
               box_cap: int, ttl_ms: int, turn_action_limit: int | None, reminder_limit: int | None,
               options: dict[str, bool]) -> None:
        config: dict[str, Any] = {
            "sessions": list(ADDRESSES[:count]),
            "wake_gate": {"max_streak": max_streak, "floor_ms": floor_ms},
            "peer_delivery": {"setting": setting, "held_cap": held_cap, "box_cap": box_cap},
            "idle_subscriptions": {"ttl_ms": ttl_ms, "debounce_ms": 750, "held_backoff_ms": 2000},
            "turn_action_limit": turn_action_limit,
            "reminder_limit": reminder_limit,
            "options": options,
        }
        self.addresses = config["sessions"]
        self.model = ModelSession(config)
        self.impl = Host.from_config(config)
        self.start(config, self.model, lambda step: apply_step(self.impl, step))

    def _address(self, index: int) -> str:
        return str(self.addresses[index % len(self.addresses)])

    def _other(self, index: int, offset: int) -> str:
        me = index % len(self.addresses)
        return str(self.addresses[(me + 1 + offset % (len(self.addresses) - 1)) % len(self.addresses)])

    @rule(me=st.integers(0, 2), text=TEXTS)
    def user_input(self, me: int, text: str) -> None:
        self._step("user_input", session=self._address(me), text=text)

    tick = event_rule("tick")

    @rule(by=CLOCK_STEPS)
    def advance(self, by: int) -> None:
        self._step("advance", now_ms=self.impl.now_ms + by)

    @rule(me=st.integers(0, 2), other=st.integers(0, 1), text=TEXTS,
          claim=st.none() | st.integers(0, 2))
    def send_message(self, me: int, other: int, text: str, claim: int | None) -> None:
        args: dict[str, Any] = {"session": self._address(me), "to": self._other(me, other), "text": text}
        if claim is not None:
            args["claimed_from"] = self._address(claim)
        self._step("send_message", **args)

    @rule(me=st.integers(0, 2), delay_ms=st.sampled_from([0, 1, 1000, 5000]), text=TEXTS)
    def schedule(self, me: int, delay_ms: int, text: str) -> None:
        self._step("schedule", session=self._address(me), delay_ms=delay_ms, text=text)

    @rule(me=st.integers(0, 2), other=st.integers(0, 1))
    def subscribe(self, me: int, other: int) -> None:
        self._step("subscribe", session=self._address(me), target=self._other(me, other))

    @rule(me=st.integers(0, 2), detail=st.none() | TEXTS)
    def end_turn(self, me: int, detail: str | None) -> None:
        self._step("end_turn", session=self._address(me), detail=detail)

    @rule(me=st.integers(0, 2), ticket=st.integers(1, 5))
    def approve(self, me: int, ticket: int) -> None:
        self._step("approve", session=self._address(me), ticket=ticket)

    @rule(me=st.integers(0, 2), ticket=st.integers(1, 5))
    def deny(self, me: int, ticket: int) -> None:
        self._step("deny", session=self._address(me), ticket=ticket)

    @rule(me=st.integers(0, 2), setting=SETTINGS)
    def set_setting(self, me: int, setting: str | None) -> None:
        self._step("set_setting", session=self._address(me), setting=setting)

    @invariant()
    def clocks_agree(self) -> None:
        if hasattr(self, "model"):
            assert self.model.chart.now_ms == self.impl.now_ms

    @invariant()
    def phases_and_streaks_agree(self) -> None:
        if hasattr(self, "model"):
            for address, session in self.impl.sessions.items():
                part = self.model.chart.sessions[address]
                assert part.phase == session.phase
                assert len(part.pending) == len(session.pending)


HostLockstep.TestCase.settings = settings(
    max_examples=200, stateful_step_count=40, deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
TestHostLockstep = HostLockstep.TestCase
