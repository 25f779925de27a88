"""CrossHair checks the writer proofs' contracts symbolically, and each contract bites.

The contracts are the PEP 316 docstrings of ``root_category`` (``impl/writer_proofs.py``) and
``first_fault`` (``impl/writer_fs.py``). CI runs them with a bounded budget per condition
(``INBOXSPEC_CROSSHAIR_BUDGET``, seconds, default 1 here); a copy of the module with one deliberate
bug must yield a counterexample on the line of the contract that the bug breaks.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import inboxspec.impl.writer_proofs as writer_proofs
from tests.crosshair_runner import (
    assert_contracts_hold,
    broken_copy,
    contract_line,
    failing_lines,
    run_crosshair,
)

pytestmark = pytest.mark.slow

SOURCE = Path(writer_proofs.__file__)
TARGETS = ("inboxspec.impl.writer_proofs.root_category", "inboxspec.impl.writer_fs.first_fault")


def test_contracts_hold() -> None:
    assert_contracts_hold(*TARGETS)


# contract comment -> (function, exact source fragment, its buggy replacement)
MUTANTS = {
    "an exceeded bound wins over every other fault": (
        "writer_fs",
        "first_fault",
        "    for detail in PRECEDENCE:\n        if detail in faults:",
        "    for detail in PRECEDENCE[1:] + PRECEDENCE[:1]:\n        if detail in faults:",
    ),
    "the reported detail is one of the install's faults": (
        "writer_fs",
        "first_fault",
        "            return detail\n    return None",
        '            return detail\n    return "unreadable" if faults else None',
    ),
    "the running CLI's own root is always the running CLI category": (
        "writer_proofs",
        "root_category",
        "    if root == needed.own:\n",
        "    if root == needed.own and not needed.receipt:\n",
    ),
}


@pytest.fixture(scope="module")
def mutant_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """Every broken variant as its own module, checked in one CrossHair run (one start-up)."""
    folder = tmp_path_factory.mktemp("mutants")
    targets = []
    for index, contract in enumerate(sorted(MUTANTS)):
        module, function, fragment, broken = MUTANTS[contract]
        mutant = broken_copy((SOURCE.parent / f"{module}.py").read_text(encoding="utf-8"), fragment, broken)
        (folder / f"mutant_{index}.py").write_text(mutant, "utf-8")
        targets.append(f"mutant_{index}.{function}")
    # A broken variant's counterexample comes quickly; the conditions it does not break need not run long.
    # A counterexample to a broken variant comes quickly; the conditions it keeps need not run long.
    result = run_crosshair(*targets, budget="1.5", cwd=folder)
    return folder, result.stdout + result.stderr


@pytest.mark.parametrize("contract", sorted(MUTANTS))
def test_contract_finds_counterexample_in_broken_variant(contract: str, mutant_run: tuple[Path, str]) -> None:
    _folder, output = mutant_run
    index = sorted(MUTANTS).index(contract)
    module = MUTANTS[contract][0]
    source = (SOURCE.parent / f"{module}.py").read_text(encoding="utf-8")
    assert contract_line(source, contract) in failing_lines(output, f"mutant_{index}"), output
