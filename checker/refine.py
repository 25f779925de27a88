"""Exhaustive refinement: the model and the reference agree on every short sequence.

Every sequence of the machine's alphabet up to ``depth`` letters is applied
to the model chart (through the compiled view) and to the reference
implementation (through its conformance driver), with concrete times, and
every observable output must be identical. This complements the random
lockstep tests: it misses nothing short, where they reach deep.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from inboxspec.checker.explore import machine
from inboxspec.conformance.compare import canonical
from inboxspec.conformance.drivers.wake_gate import apply_step
from inboxspec.impl.wake_gate import WakePolicy

MAX_DEPTH = 8


@dataclass
class Refinement:
    machine: str
    depth: int
    options: dict[str, bool]
    sequences: int = 0
    steps: int = 0
    mismatch: list[str] = field(default_factory=list)


def refine(name: str, depth: int, options: dict[str, bool] | None = None,
           bounds: dict[str, str] | None = None) -> Refinement:
    if not 0 < depth <= MAX_DEPTH:
        raise ValueError(f"depth must be between 1 and {MAX_DEPTH}")
    if name != "wake-gate":
        raise ValueError(f"no reference driver for refinement of {name!r}")
    target = machine(name)
    spec = target.description
    parsed = spec.parse_bounds(bounds or {})
    options = dict(options or {})
    actions = spec.alphabet(parsed)
    bound = [None if a.clock is not None else target.chart.bind(a.event, a.kwargs) for a in actions]
    data = target.chart.blank()
    spec.constants(data, parsed, options)
    result = Refinement(name, depth, options)
    config = spec.config(parsed, options)
    history: list[str] = []

    def visit(snapshot: Any, policy: WakePolicy, now: int, remaining: int) -> bool:
        if remaining == 0:
            result.sequences += 1
            return True
        for index, action in enumerate(actions):
            if action.clock is not None:
                post = spec.move_clock(snapshot, action.clock)
                moved = now + spec.clock_delta(snapshot, post)
                history.append(action.label)
                ok = visit(post, policy, moved, remaining - 1)
                history.pop()
                if not ok:
                    return False
                continue
            spec.load(data, snapshot)
            fired = bound[index][snapshot[0]](data)
            post, expected = spec.store(data, fired.target), dict(data.output)
            (step,) = spec.concretize([(snapshot, action, post)])
            if step["event"] == "decide":
                step["args"]["now_ms"] = now
            forked = copy.copy(policy)
            actual = apply_step(forked, step)
            result.steps += 1
            history.append(f"{action.label} @{now}")
            if canonical(expected) != canonical(actual):
                result.mismatch = [*history, f"model {expected}", f"reference {actual}"]
                return False
            ok = visit(post, forked, now, remaining - 1)
            history.pop()
            if not ok:
                return False
        return True

    visit(spec.initial(parsed), WakePolicy.from_config(config), 1_000_000, depth)
    return result
