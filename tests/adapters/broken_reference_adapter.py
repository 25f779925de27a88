"""The reference adapter with one wake rule changed: a self-wake exactly one
floor after the last counts as rapid (``<=`` instead of ``<``)."""

from __future__ import annotations

import sys

from inboxspec.conformance.adapter import serve
from inboxspec.impl import wake_gate


def rapid_at_the_floor(last: int | None, now: int, rules: wake_gate.GateRules) -> bool:
    return last is not None and now - last <= rules.floor_ms


wake_gate.is_rapid = rapid_at_the_floor
serve(sys.stdin, sys.stdout)
