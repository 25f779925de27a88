"""The reference adapter with one wake rule changed: a self-wake exactly one
floor after the last counts as rapid (``<=`` instead of ``<``)."""

from __future__ import annotations

import sys

from inboxspec.conformance.adapter import serve
from inboxspec.impl import wake_gate


def rapid_at_the_floor(last_self_wake_ms: int | None, now_ms: int, rules: wake_gate.GateRules) -> bool:
    return last_self_wake_ms is not None and now_ms - last_self_wake_ms <= rules.floor_ms


wake_gate.is_rapid = rapid_at_the_floor
serve(sys.stdin, sys.stdout)
