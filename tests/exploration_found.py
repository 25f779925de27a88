"""Everything an exploration found, as one comparable value: for tests that show two ways of
searching (from a step record, through a step memo) find what firing every step finds."""

from __future__ import annotations

from typing import Any

from inboxspec.checker.explore import Exploration


def _steps(steps: list[Any]) -> list[Any]:
    """Steps with their snapshots as plain tuples: equal only when every field is (a machine's own
    equality may leave out fields its outputs show, such as peer delivery's tickets)."""
    return [(tuple(pre), action, tuple(post), output) for pre, action, post, output in steps]


def found(result: Exploration) -> tuple[Any, ...]:
    """Everything a search found, whichever way it took its steps."""
    return (result.states, result.transitions, result.max_depth,
            {key: _steps(steps) for key, steps in result.coverage.items()}, list(result.coverage),
            {name: (_steps(lasso.prefix), _steps(lasso.loop)) for name, lasso in result.lassos.items()},
            result.forever_checked, result.invariants_checked,
            {name: _steps(steps) for name, steps in result.violations.items()}, list(result.violations))
