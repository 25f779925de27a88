"""Lockstep: every generated event goes to the model chart and to the reference cache.

Rule names are the spec's event names, so a shrunk failure reads as a trace;
the failing run also notes the trace as a ready-to-commit conformance case.
Time is virtual: ``advance`` moves both clocks by a drawn step, and the jobs
of the fake runner have drawn outcomes and durations.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st
from hypothesis.stateful import initialize, invariant, precondition, rule

from inboxspec.machines.inbox_refresh_driver import ModelSession, Session
from tests.lockstep import Lockstep, event_rule

T = "2026-01-01T00:00:00.000Z"
ITEM_IDS = ("c1", "c2", "capacity:proposal", "inbox:more")


@st.composite
def items(draw: st.DrawFn) -> list[dict[str, Any]]:
    ids = draw(st.lists(st.sampled_from(ITEM_IDS), max_size=4, unique=True))
    titles = st.sampled_from(["t", "a secret", "é"])
    ats = st.sampled_from([T, "2026-02-01T00:00:00.000Z"])
    return [{"id": i, "at": draw(ats), "title": draw(titles), "detail": "d"} for i in ids]


@st.composite
def scripts(draw: st.DrawFn) -> dict[str, Any]:
    outcome = draw(st.sampled_from(["result", "result", "result", "changed", "unavailable", "moved",
                                    "cleanup", "deadline", "launch_runtime", "launch_error"]))
    job: dict[str, Any] = {"outcome": outcome,
                           "duration_ms": draw(st.sampled_from([0, 1, 999, 30000, 45000]))}
    if outcome == "result":
        job["computation"] = {
            "items": draw(items()),
            "more": draw(st.sampled_from([0, 0, 3, -1, 1.5])),
            "expires_at": draw(st.sampled_from([None, None, 0, 50_000, 200_000, -1])),
            "capacity": draw(st.sampled_from([None, {"until": 40_000}, {"until": 500_000}])),
        }
    if outcome in ("cleanup", "deadline"):
        job["group"] = draw(st.sampled_from([None, 0, 4242]))
        job["reap_ms"] = draw(st.sampled_from([None, 0, 1000, 60_000]))
    job["cancel"] = draw(st.sampled_from(["gone", "gone", "unresolved"]))
    return job


options = st.fixed_dictionaries({}, optional={"refreshing_only_when_runnable": st.booleans(),
                                              "read_failure_backs_off": st.booleans(),
                                              "reject_negative_added": st.booleans()})


class InboxRefreshLockstep(Lockstep):
    machine = "inbox-refresh"

    @initialize(jobs=st.lists(scripts(), max_size=6), opts=options, start=st.sampled_from([0, 1_000_000]),
                max_items=st.sampled_from([2, 50]), monotonic=st.booleans(), log_throws=st.booleans())
    def create(self, jobs: list[dict[str, Any]], opts: dict[str, bool], start: int, max_items: int,
               monotonic: bool, log_throws: bool) -> None:
        self.config: dict[str, Any] = {"jobs": jobs, "start_ms": start, "deny": ["secret"],
                                       "max_items": max_items, "monotonic_clock": monotonic,
                                       "log_throws": log_throws}
        if opts:
            self.config["options"] = opts
        self.model = ModelSession(self.config)
        self.impl = Session(self.config)
        self.start(self.config, self.model, self.impl.apply)
        self.now_ms = start

    @rule(callers=st.sampled_from([1, 1, 2]))
    def snapshot(self, callers: int) -> None:
        if callers == 1:
            self._step("snapshot")
        else:
            self._step("snapshot", callers=callers)

    @rule(step=st.sampled_from([0, 1, 500, 999, 1000, 29_000, 30_000, 31_000, 60_000, 300_000]))
    def advance(self, step: int) -> None:
        self.now_ms += step
        self._step("advance", now_ms=self.now_ms)

    @rule(wall=st.sampled_from([0, 20_000, 1_000_000, 10**12]))
    def set_wall(self, wall: int) -> None:
        self._step("set_wall", now_ms=wall)

    @rule(form=st.sampled_from(["soft", "true", "false", "hard", "capacity", "remove", "added", "fewer"]))
    def invalidate(self, form: str) -> None:
        forms: dict[str, dict[str, Any]] = {
            "soft": {}, "true": {"value": True}, "false": {"value": False}, "hard": {"hard": True},
            "capacity": {"capacity": True}, "remove": {"remove_ids": ["c1", "x", "x"]}, "added": {"added": 2},
            "fewer": {"added": -2}}
        args = forms[form]
        if form == "fewer" and self.impl.cache.options.reject_negative_added:
            return  # refused input: the model only describes steps the reference accepts
        self._step("invalidate", **args)

    @rule(hard=st.booleans())
    def edit_sources(self, hard: bool) -> None:
        self._step("edit_sources", hard=hard)

    change_policy = event_rule("change_policy")

    @rule(value=st.booleans())
    def set_readable(self, value: bool) -> None:
        self._step("set_readable", value=value)

    close = precondition(lambda self: len(self.trace) > 3)(event_rule("close"))

    @invariant()
    def clocks_agree(self) -> None:
        assert self.model.chart.now_ms == self.impl.cache.state.now_ms
        assert self.model.chart._wall() == self.impl.cache.wall_ms()
        assert self.model.chart._clock() == self.impl.cache.clock_ms()

    @invariant()
    def control_states_agree(self) -> None:
        (state,) = self.model.chart.configuration
        s = self.impl.cache.state
        expected = ("closed" if s.closed else "running" if s.running else
                    "blocked" if s.blocked is not None else "idle")
        assert state.id == expected

    @invariant()
    def backoffs_agree(self) -> None:
        chart, s = self.model.chart, self.impl.cache.state
        assert (chart.failures, chart.retry_at, chart.pending, chart.stale) == (
            s.failure_count, s.retry_at, s.pending, s.stale)


TestInboxRefreshLockstep = InboxRefreshLockstep.TestCase
