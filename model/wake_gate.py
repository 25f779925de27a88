"""The wake gate as an explicit state chart (spec/wake-gate.md).

Control states are the refusal-episode states; the streak, the clock, the
last self-wake time and the floor are the chart's data. Time is the chart's
own event: ``elapse(ms)`` moves the clock (a negative ``ms`` is a wall clock
stepped back), and ``decide`` reads it. A conformance step ``decide`` with
``now_ms`` is the chart's ``elapse(now_ms - clock)`` then ``decide``. Every guard is named after
the requirement it encodes, and the transitions of one event are listed in
the order the spec's first-match rules are applied: python-statemachine takes
the first enabled transition in document order.

This module does not import ``inboxspec.impl``: the lockstep tests compare two
independent descriptions of the same machine.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from statemachine import State

from .chart import ModelChart, stay

SCHEDULED_PREFIX = "[scheduled] "
# WAKE-DEF-1, written here again rather than imported: a changed default in
# the implementation must show up as a disagreement with the model.
DEFAULT_MAX_STREAK = 10
DEFAULT_FLOOR_MS = 30_000

# A message as the model sees it: (kind, sender, recipient, text).
ModelMessage = tuple[str, str, str, str]


@dataclass(frozen=True)
class WakeGateModelOptions:
    announce_requires_refusal: bool = False  # WAKE-F1
    cadence_from_allowed_wakes: bool = False  # WAKE-F2
    clamp_backwards_clock: bool = False  # WAKE-F3
    reject_empty_batch: bool = False  # WAKE-F4


class WakeGateChart(ModelChart["WakeGateChart"]):
    no_episode = State(initial=True)
    refusing_unannounced = State()
    refusing_announced = State()
    # Upstream quirk (WAKE-ANN-2, finding WAKE-F1): announce() with no refusal spends it.
    announced_without_refusal = State()

    _all = (no_episode, refusing_unannounced, refusing_announced, announced_without_refusal)

    decide = (
        stay(_all, cond="user_input_always_wakes", on="book_user_input")
        | stay(_all, cond="empty_batch_is_rejected", on="book_empty_rejection")
        | stay(_all, cond="scheduled_self_wake_is_exempt", on="book_exempt_self_wake")
        | no_episode.from_(*_all, cond="counted_wake_under_cap", on="book_counted_wake")
        | no_episode.to(refusing_unannounced, on="book_refusal")
        | refusing_unannounced.to.itself(internal=True, on="book_refusal")
        | refusing_announced.to.itself(internal=True, on="book_refusal")
        | announced_without_refusal.to(refusing_announced, on="book_refusal")
    )

    announce_refusal = (
        no_episode.to(announced_without_refusal, unless="announcement_requires_refusal",
                      on="announce_yes")
        | no_episode.to.itself(internal=True, on="announce_no")
        | refusing_unannounced.to(refusing_announced, on="announce_yes")
        | refusing_announced.to.itself(internal=True, on="announce_no")
        | announced_without_refusal.to.itself(internal=True, on="announce_no")
    )

    reset_streak = no_episode.from_(*_all, on="book_reset")

    set_streak = stay(_all, on="book_streak")

    set_floor = stay(_all, on="book_floor")

    elapse = stay(_all, on="book_elapse")

    del _all

    def __init__(
        self,
        max_streak: int = DEFAULT_MAX_STREAK,
        floor_ms: int = DEFAULT_FLOOR_MS,
        options: WakeGateModelOptions | None = None,
    ) -> None:
        self.max_streak = max_streak
        self.floor_ms = floor_ms
        self.options = options or WakeGateModelOptions()
        self.streak = 0
        self.now_ms = 0
        self.last_self_wake_ms: int | None = None
        self.output: dict[str, Any] = {}
        super().__init__()

    # -- classification (WAKE-SELF-1, WAKE-LANE-1..6) -----------------------

    def _is_self_lane(self, batch: Sequence[ModelMessage]) -> bool:
        """WAKE-LANE-2: some message is scheduled self-mail (WAKE-SELF-1: addressed
        from its own recipient mailbox, with the exact prefix)."""
        return any(sender == recipient and text.startswith(SCHEDULED_PREFIX)
                   for _kind, sender, recipient, text in batch)

    # WARNING: machines/wake_gate.py stores the self-wake age only up to its interval between
    # 0 and the floors, because this compares it with 0 and the floor alone;
    # tests/test_explorer_abstractions.py fails when another comparison tells an interval apart.
    def _is_rapid(self) -> bool:
        if self.last_self_wake_ms is None:
            return False
        elapsed = self.now_ms - self.last_self_wake_ms
        if self.options.clamp_backwards_clock:
            elapsed = max(elapsed, 0)
        return elapsed < self.floor_ms

    # -- guards, named for their requirements --------------------------------

    def user_input_always_wakes(self, batch: Sequence[ModelMessage]) -> bool:
        """WAKE-LANE-1."""
        return any(message[0] == "user" for message in batch)

    def empty_batch_is_rejected(self, batch: Sequence[ModelMessage], plugin_pending: bool) -> bool:
        """WAKE-OPT-4 (finding WAKE-F4)."""
        return self.options.reject_empty_batch and not batch and not plugin_pending

    def scheduled_self_wake_is_exempt(self, batch: Sequence[ModelMessage]) -> bool:
        """WAKE-LANE-2 and WAKE-CAD-4."""
        return self._is_self_lane(batch) and not self._is_rapid()

    def counted_wake_under_cap(self) -> bool:
        """WAKE-CAP-2 and WAKE-CAD-6 (WAKE-CAP-1 and WAKE-CAD-5 otherwise)."""
        return self.streak < self.max_streak

    def announcement_requires_refusal(self) -> bool:
        """WAKE-OPT-1 (finding WAKE-F1)."""
        return self.options.announce_requires_refusal

    # -- actions ------------------------------------------------------------------
    # Every action sets ``output``: the event's observable result in the
    # conformance output shape, always with the streak after the event.

    def _decision(self, lane: str, wake: bool, counted: bool, code: str | None = None,
                  reason: str | None = None) -> None:
        self.output = {"lane": lane, "wake": wake, "counts_against_cap": counted,
                       "refusal_code": code, "refusal_reason": reason, "streak": self.streak}

    def book_user_input(self) -> None:
        """WAKE-LANE-1, WAKE-ANN-3."""
        self._decision("userInput", True, False)

    def book_empty_rejection(self) -> None:
        """WAKE-OPT-4."""
        self.output = {"error": "empty_batch", "streak": self.streak}

    def book_exempt_self_wake(self) -> None:
        """WAKE-CAD-4, WAKE-ANN-3."""
        self.last_self_wake_ms = self.now_ms  # WAKE-CAD-3 (an exempt wake is allowed: WAKE-OPT-2 too)
        self._decision("scheduledSelf", True, False)

    def book_counted_wake(self, batch: Sequence[ModelMessage]) -> None:
        """WAKE-CAP-2, WAKE-CAD-6."""
        self_lane = self._is_self_lane(batch)
        if self_lane:
            self.last_self_wake_ms = self.now_ms  # WAKE-CAD-3
        self.streak += 1
        self._decision("scheduledSelf" if self_lane else "chatter", True, True)

    def book_refusal(self, batch: Sequence[ModelMessage]) -> None:
        """WAKE-CAP-1, WAKE-CAP-3, WAKE-CAD-5, WAKE-OUT-2."""
        if self._is_self_lane(batch):
            # WAKE-CAD-3; WAKE-F2's option keeps the time of the last allowed wake instead.
            if not self.options.cadence_from_allowed_wakes:
                self.last_self_wake_ms = self.now_ms
            reason = (
                "inbox wake refused: busy-spin guard: scheduled self-mail arrives faster than"
                f" the {self.floor_ms // 1000}s cadence floor and the wake cap of"
                f" {self.max_streak} is reached; the mail stays queued until the next user input"
            )
            self._decision("scheduledSelf", False, True, "self_spin_cap", reason)
        else:
            reason = (
                f"inbox wake refused: {self.streak} consecutive inbox wakes without user input"
                f" (cap {self.max_streak}); the mail stays queued until the next user input"
            )
            self._decision("chatter", False, True, "chatter_cap", reason)

    def announce_yes(self) -> None:
        """WAKE-ANN-1."""
        self.output = {"announce": True, "streak": self.streak}

    def announce_no(self) -> None:
        """WAKE-ANN-1."""
        self.output = {"announce": False, "streak": self.streak}

    def book_reset(self) -> None:
        """WAKE-RESET-1."""
        self.streak = 0
        self.output = {"streak": 0}

    def book_streak(self, value: int) -> None:
        """WAKE-HOST-1."""
        self.streak = value
        self.output = {"streak": value}

    def book_floor(self, value: int) -> None:
        """WAKE-HOST-2."""
        self.floor_ms = value
        self.output = {"streak": self.streak}

    def book_elapse(self, ms: int) -> None:
        """Time passes between inputs (the clock that `now_ms` reads, WAKE-CAD-1)."""
        self.now_ms += ms
        self.output = {"streak": self.streak}
