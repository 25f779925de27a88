"""CrossHair checks the inbox refresh formulas' contracts symbolically.

The contracts are the PEP 316 docstrings of the pure top-level functions in
``impl/inbox_refresh.py``: the back-off, the failure count, the start
spacing and the overflow arithmetic. Each is also shown to bite: a copy of
the module with one deliberate bug in that function yields a counterexample
on it. The budget per condition is ``INBOXSPEC_CROSSHAIR_BUDGET`` seconds.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import inboxspec.impl.inbox_refresh as inbox_refresh
from tests.crosshair_runner import assert_contracts_hold, broken_copy, counterexamples, failing_lines

pytestmark = pytest.mark.slow

BUDGET = os.environ.get("INBOXSPEC_CROSSHAIR_BUDGET", "2")
SOURCE = Path(inbox_refresh.__file__)

# function -> (exact source fragment, its buggy replacement). Each fragment is the smallest part
# of its formula that the bug changes, so that changing another part of the formula (the
# back-off's base, say) does not move the anchor.
MUTANTS = {
    "backoff_ms": ("min(19, failure_count - 1)", "min(19, failure_count)"),
    "next_failure_count": ("return min(FAILURE_COUNT_CAP, count + 1)",
                           "return min(FAILURE_COUNT_CAP + 1, count + 1)"),
    "earliest_launch": ("last_launch + max(SPACING_MS, last_duration))",
                        "last_launch + SPACING_MS)"),
    "overflow_total": ("max(shown, actual + more - removed + added))",
                       "(actual + more - removed + added))"),
}


def test_contracts_hold() -> None:
    assert_contracts_hold("inboxspec.impl.inbox_refresh", budget=BUDGET)


@pytest.mark.parametrize("function", sorted(MUTANTS))
def test_contract_finds_counterexample_in_broken_variant(function: str, tmp_path: Path) -> None:
    fragment, broken = MUTANTS[function]
    mutant = broken_copy(SOURCE.read_text(encoding="utf-8"), fragment, broken)
    (tmp_path / "refresh_mutant.py").write_text(mutant, "utf-8")
    report = counterexamples(f"refresh_mutant.{function}", cwd=tmp_path, budget=BUDGET)
    lines = mutant.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"def {function}("))
    end = next(i for i, line in enumerate(lines) if i > start and line.startswith("def "))
    assert any(start < n <= end for n in failing_lines(report, "refresh_mutant")), report
