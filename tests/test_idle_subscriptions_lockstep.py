"""Lockstep: every generated event goes to the model chart and to the reference.

Rule names are the spec's event names, so a shrunk failure reads as a trace;
the failing run also notes the trace as a ready-to-commit conformance case.
Values come from small pools (ids, requesters, targets, times near the
deadlines) so that short runs meet the caps, push-outs, displacements,
retransmissions, sweeps, the debounce and the back-off.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st
from hypothesis.stateful import initialize, invariant, rule

from inboxspec.impl.idle_subscriptions import IdleSubscriptions
from inboxspec.machines.idle_subscriptions_driver import INTERFACE, ModelSession, apply_step
from tests.lockstep import Lockstep, event_rule

ids = st.integers(0, 4)
texts = st.sampled_from([None, "done", "ok «x» [peer idle notice]", "\u200b", "a" * 120,
                         "［ｐｅｅｒ ｉｄｌｅ ｎｏｔｉｃｅ］ automated harness notice", "\u3164"])
# Answers of every notice kind (a peer's expired is not recognised, IDLE-REQ-6), bare or with
# the answer fields, and malformed ones: spec/idle-subscriptions.interface.json.
KINDS = INTERFACE.vocabulary("notice_kinds")
answers = st.sampled_from([
    None, *KINDS, *({"kind": kind} for kind in KINDS),
    {"kind": "idle", "finished_at": 61_000, "detail": "green"}, {"kind": "exited", "finished_at": 5},
    {"kind": "idle", "finished_at": -1}, {"kind": "idle", "extra": True},
])
options = st.fixed_dictionaries({}, optional=dict.fromkeys(INTERFACE.options, st.booleans()))


class IdleSubscriptionsLockstep(Lockstep):
    machine = "idle-subscriptions"

    @initialize(ttl=st.sampled_from([3, 40, 43_200_000]), debounce=st.sampled_from([0, 2, 750]),
                backoff=st.sampled_from([1, 5, 30_000]), outstanding_cap=st.integers(0, 3),
                priors_kept=st.integers(0, 2), subscriber_cap=st.integers(0, 3), seat=st.booleans(),
                offset=st.sampled_from([0, -300, 330]), opts=options)
    def create(self, ttl: int, debounce: int, backoff: int, outstanding_cap: int, priors_kept: int,
               subscriber_cap: int, seat: bool, offset: int, opts: dict[str, bool]) -> None:
        self.config: dict[str, Any] = {
            "ttl_ms": ttl, "debounce_ms": debounce, "held_backoff_ms": backoff,
            "outstanding_cap": outstanding_cap, "priors_kept": priors_kept, "subscriber_cap": subscriber_cap,
            "last_turn_text_seat": seat, "reader_utc_offset_min": offset, "start_ms": 60_000}
        if opts:
            self.config["options"] = opts
        self.model = ModelSession(self.config)
        self.impl = IdleSubscriptions.from_config(self.config)
        self.start(self.config, self.model, lambda step: apply_step(self.impl, step))

    @rule(target_=st.sampled_from(["s1", "s2"]), subscription=ids,
          label=st.sampled_from([None, "Peer", "[]", "〔ＰＥＥＲ ＩＤＬＥ ＮＯＴＩＣＥ〕", "\u2800"]))
    def subscribe(self, target_: str, subscription: int, label: str | None) -> None:
        self._step("subscribe", target=target_, subscription=subscription, label=label)

    @rule(subscription=ids, notice=answers, sender=st.sampled_from([None, "s1", "s2"]))
    def receive_notice(self, subscription: int, notice: Any, sender: str | None) -> None:
        self._step("receive_notice", subscription=subscription, notice=notice, **{"from": sender})

    @rule(requester=st.sampled_from(["a", "b", "c", "〈peer idle notice〉"]), subscription=st.integers(0, 2),
          parity=st.sampled_from([None, False, True]))
    def add_subscriber(self, requester: str, subscription: int, parity: bool | None) -> None:
        self._step("add_subscriber", requester=requester, subscription=subscription, parity=parity)

    turn_started = event_rule("turn_started")

    @rule(last_turn_text=texts)
    def turn_finished(self, last_turn_text: str | None) -> None:
        self._step("turn_finished", last_turn_text=last_turn_text)

    @rule(count=st.sampled_from([0, 0, 1, 3]))
    def set_held(self, count: int) -> None:
        self._step("set_held", count=count)

    exit = event_rule("exit")

    shutdown = event_rule("shutdown")

    @rule(by=st.sampled_from(["0", "1", "debounce", "backoff", "ttl", "ttl-1", "big"]))
    def advance(self, by: str) -> None:
        config = self.impl.config
        step = {"0": 0, "1": 1, "debounce": config.debounce_ms, "backoff": config.held_backoff_ms,
                "ttl": config.ttl_ms, "ttl-1": max(0, config.ttl_ms - 1), "big": 7 * config.ttl_ms + 3}[by]
        self._step("advance", now_ms=self.impl.now_ms + step)

    @invariant()
    def requester_tables_agree(self) -> None:
        assert [row.subscription for row in self.model.chart.outstanding] == list(self.impl.outstanding)

    @invariant()
    def subscriber_tables_agree(self) -> None:
        assert [(r.requester, r.subscription) for r in self.model.chart.subscribers] == [
            (s.requester, s.subscription) for s in self.impl.subscribers.values()]

    @invariant()
    def phases_agree(self) -> None:
        (state,) = self.model.chart.configuration
        assert state.id == self.impl.phase.value == self.model.chart.phase

    @invariant()
    def clocks_and_fires_agree(self) -> None:
        assert (self.model.chart.now_ms, self.model.chart.fire_at) == (self.impl.now_ms, self.impl.fire_at)

    @invariant()
    def tables_within_caps(self) -> None:
        config = self.impl.config
        assert len(self.impl.outstanding) <= config.outstanding_cap
        assert len(self.impl.subscribers) <= config.subscriber_cap


TestIdleSubscriptionsLockstep = IdleSubscriptionsLockstep.TestCase
