"""Lockstep: every generated peer-delivery event goes to the model chart and to the reference.

Rule names are the spec's event names, so a shrunk failure reads as a trace;
the failing run also notes the trace as a ready-to-commit conformance case.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st
from hypothesis.stateful import initialize, invariant, rule

from inboxspec.impl.peer_delivery import PeerDelivery
from inboxspec.machines.peer_delivery_driver import INGRESS_FLAGS, INTERFACE, ModelSession, apply_step
from tests.lockstep import Lockstep, event_rule

SENDERS = st.sampled_from(["a", "b", "c"])
MODES = st.sampled_from([None, "x", "y"])
# The options, settings, attestations and host verdicts: spec/peer-delivery.interface.json.
OPTIONS = st.fixed_dictionaries({}, optional=dict.fromkeys(INTERFACE.options, st.booleans()))
SETTINGS = st.sampled_from([None, *INTERFACE.vocabulary("settings")])
FLAGS = st.sampled_from(INGRESS_FLAGS)
ATTESTATIONS = st.sampled_from(INTERFACE.vocabulary("attestations"))
# Delays near the dialog deadlines, so that expiries land on, before and after them.
DELAYS = st.sampled_from([0, 1, 59_999, 60_000, 240_000, 300_000, 600_000]) | st.integers(0, 700_000)


class PeerDeliveryLockstep(Lockstep):
    machine = "peer-delivery"

    @initialize(held_cap=st.integers(1, 4), box_cap=st.integers(0, 3), mode=MODES,
                setting=SETTINGS, starting_up=st.booleans(),
                options=OPTIONS)
    def create(self, held_cap: int, box_cap: int, mode: str | None, setting: str | None,
               starting_up: bool, options: dict[str, bool]) -> None:
        self.config = {"held_cap": held_cap, "box_cap": box_cap, "mode": mode, "setting": setting,
                       "starting_up": starting_up, "options": options}
        self.model = ModelSession(self.config)
        self.impl = PeerDelivery.from_config(self.config)
        self.start(self.config, self.model, lambda step: apply_step(self.impl, step))

    @rule(sender=SENDERS, sender_mode=MODES, attestation=ATTESTATIONS,
          hops=st.sampled_from([0, 4, 5]), flags=st.lists(FLAGS, max_size=1))
    def send_message(self, sender: str, sender_mode: str | None, attestation: str, hops: int,
                     flags: list[str]) -> None:
        self._step("send_message", sender=sender, sender_mode=sender_mode, attestation=attestation, hops=hops,
                   **dict.fromkeys(flags, True))

    @rule(changes=st.fixed_dictionaries({}, optional={
        "setting": SETTINGS, "starting_up": st.booleans(),
        "mode": MODES}))
    def set_recipient(self, changes: dict[str, Any]) -> None:
        self._step("set_recipient", **changes)

    @rule(value=st.sampled_from(["60s", "5m", "10m", "never", "default", None, "1h", 5]))
    def set_dialog_expiry(self, value: Any) -> None:
        self._step("set_dialog_expiry", value=value)

    @rule(delay=DELAYS)
    def advance(self, delay: int) -> None:
        self._step("advance", now_ms=self.impl.now_ms + delay)

    drain = event_rule("drain")

    @rule(data=st.data())
    def approve(self, data: st.DataObject) -> None:
        self._step("approve", ticket=data.draw(self._tickets()))

    @rule(data=st.data())
    def deny(self, data: st.DataObject) -> None:
        self._step("deny", ticket=data.draw(self._tickets()))

    @rule(count=st.integers(1, 3))
    def take(self, count: int) -> None:
        self._step("take", count=count)

    def _tickets(self) -> st.SearchStrategy[int]:
        held = [entry.ticket for entry in self.impl.held]
        return st.sampled_from(held) if held and self.impl.state.next_ticket > 1 else st.integers(1, 5)

    @invariant()
    def buffers_agree(self) -> None:
        model = [(e.ticket, e.sender, e.cause, e.deadline_ms) for e in self.model.chart.held]
        assert model == [(e.ticket, e.facts.sender, e.cause, e.deadline_ms) for e in self.impl.held]

    @invariant()
    def boxes_and_clocks_agree(self) -> None:
        assert (self.model.chart.box, self.model.chart.now_ms) == (self.impl.box, self.impl.now_ms)

    @invariant()
    def no_message_is_lost(self) -> None:
        """PEER-RCPT-3."""
        assert self.impl.ledger_balances()

    @invariant()
    def held_buffer_within_cap(self) -> None:
        """PEER-HOLD-1."""
        assert len(self.impl.held) <= self.impl.held_cap


TestPeerDeliveryLockstep = PeerDeliveryLockstep.TestCase
