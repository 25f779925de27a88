"""Each writer-proofs finding: its property fails under the seed default and holds under its option.

The traces are those of spec/writer-proofs.md, run on the standard fixture (real files) through
the reference and through the model; the explorer's verdicts come from ``checker/findings.py``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from inboxspec import machines
from inboxspec.checker.findings import check_findings
from inboxspec.machines.writer_proofs import ARRANGEMENTS, standard_config
from inboxspec.machines.writer_proofs_driver import run_case, run_model_case


def attested_without_fences(outputs: list[dict[str, Any]]) -> bool:
    return "attestation" in outputs[-1]


def unchanged_refused_as_changed(outputs: list[dict[str, Any]]) -> bool:
    cause: object = outputs[-1].get("refusal", {}).get("cause")
    return cause == "changed"


REORDER = ARRANGEMENTS["locator-reordered"]
assert REORDER is not None
FINDINGS: dict[str, tuple[str, list[dict[str, Any]], Callable[[list[dict[str, Any]]], bool]]] = {
    "WRITER-F1": (
        "attest_requires_fences",
        [{"event": "initial"}, {"event": "attest"}],
        attested_without_fences,
    ),
    "WRITER-F2": (
        "compare_writers_by_id",
        [{"event": "swap_paths", "args": {"first": REORDER[0], "second": REORDER[1]}}, {"event": "active"}],
        unchanged_refused_as_changed,
    ),
}


@pytest.mark.parametrize("finding", sorted(FINDINGS))
@pytest.mark.parametrize("runner", [run_case, run_model_case], ids=["reference", "model"])
def test_finding_breaks_under_the_seed_and_holds_with_its_option(finding: str, runner: Any) -> None:
    option, steps, broken = FINDINGS[finding]
    assert broken(runner(standard_config({}), steps)["outputs"])
    assert not broken(runner(standard_config({option: True}), steps)["outputs"])


def test_the_explorer_agrees() -> None:
    """Each finding's property fails by default at the default bounds and holds with its option."""
    with machines.only(["writer-proofs"]):
        results = check_findings()
    assert {r.finding for r in results} == set(FINDINGS)
    assert all(r.ok for r in results), results
