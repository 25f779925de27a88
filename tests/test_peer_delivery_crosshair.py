"""CrossHair checks the peer-delivery contracts symbolically, and each one bites.

The contracts are the PEP 316 docstrings of the pure functions in
``impl/peer_delivery.py``. CI runs them with a bounded budget per condition
(``INBOXSPEC_CROSSHAIR_BUDGET``, seconds, default 1 here, 3 for the broken variants); the README documents
a deeper run. Each contract is shown to catch a broken variant: a copy of the
module with one deliberate bug must yield a counterexample on that contract's
line. To keep CI short, all targets run in one CrossHair process, and all
broken variants in another.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import inboxspec.impl.peer_delivery as peer_delivery
from tests.crosshair_runner import (
    assert_contracts_hold,
    broken_copy,
    contract_line,
    counterexamples,
    failing_lines,
)

pytestmark = pytest.mark.slow

# A broken variant's counterexample can need a tuple with repeated senders, or a message that
# passes every host verdict of the ingress guard (one more verdict halves the odds): longer.
MUTANT_BUDGET = os.environ.get("INBOXSPEC_CROSSHAIR_BUDGET", "6")
SOURCE = Path(peer_delivery.__file__)
FUNCTIONS = ("resolve_dialog_expiry", "judge", "admit", "due_positions", "render_label", "is_receipt_state")


def test_contracts_hold() -> None:
    assert_contracts_hold(*[f"inboxspec.impl.peer_delivery.{name}" for name in FUNCTIONS])


# contract (its comment, or the start of its `post:` line) -> (function, source fragment, broken replacement)
MUTANTS = {
    "post: __return__.invalid ==": (
        "resolve_dialog_expiry",
        '(isinstance(raw, str) and raw == "default")',
        '(isinstance(raw, str) and raw == "Default")',
    ),
    "only the ingress guard drops": (
        "judge",
        "    if at_ingress:\n",
        "    if True:\n",
    ),
    "an accept setting holds only a garbled attestation": (
        "judge",
        '    if recipient.setting == "accept":\n',
        '    if recipient.setting == "accept" and facts.sender_mode is not None:\n',
    ),
    "a refuse setting never delivers or holds": (
        "judge",
        '    if recipient.setting == "refuse":\n',
        '    if recipient.setting == "refuse" and facts.attestation != "valid":\n',
    ),
    "a held verdict always names a cause": (
        "judge",
        '        return Verdict("held", cause="starting-up")',
        '        return Verdict("held")',
    ),
    "the buffer never exceeds its cap": (
        "admit",
        "    if len(senders) <= cap:\n",
        "    if len(senders) <= cap + 1:\n",
    ),
    "an entry is evicted only past the cap, and never the new one": (
        "admit",
        "    if not fair:\n        return 0\n",
        "    if not fair:\n        return len(senders) - 1\n",
    ),
    "without the option, eviction takes the oldest": (
        "admit",
        "    if not fair:\n        return 0\n    counts",
        "    if not fair:\n        return 1 if len(senders) > 2 else 0\n    counts",
    ),
    "with it, the evicted sender holds at least as many entries as any other": (
        "admit",
        "most = max(counts.values())",
        "most = min(counts[s] for s in senders[:-1])",
    ),
    "only an entry with a deadline that has come expires": (
        "due_positions",
        "deadline is not None and deadline <= now_ms)",
        "deadline is not None and deadline <= now_ms + 1)",
    ),
    "no entry whose deadline has come stays": (
        "due_positions",
        "deadline is not None and deadline <= now_ms)",
        "deadline is not None and deadline < now_ms)",
    ),
    'post: "\\\\n" not in __return__': (
        "render_label",
        'return collapsed[:LABEL_MAX].rstrip(" ")',
        'return collapsed[:LABEL_MAX].rstrip(" ") + " "',
    ),
    "post: __return__ == (isinstance(value, str)": (
        "is_receipt_state",
        "return isinstance(value, str) and value in RECEIPT_STATES",
        "return isinstance(value, str) and value in RECEIPT_STATES[:5]",
    ),
}


def only_contract(source: str, function: str, keep: int) -> str:
    """The source with every postcondition of ``function`` but the one on line ``keep`` commented out.

    Each broken variant is then checked against its own contract alone, so CrossHair
    stops at the first counterexample instead of spending its budget on the others.
    Line numbers do not move.
    """
    lines = source.splitlines(keepends=True)
    start = next(i for i, line in enumerate(lines) if line.startswith(f"def {function}("))
    end = next(i for i in range(start + 2, len(lines)) if lines[i].strip().startswith('"""'))
    in_block = False
    for i in range(start, end):
        stripped = lines[i].strip()
        indent = lines[i][: len(lines[i]) - len(lines[i].lstrip())]
        if stripped.startswith("post[]:"):
            in_block = True
        elif stripped.startswith("post:") and i + 1 != keep:
            lines[i] = f"{indent}(another contract)\n"
        elif in_block and stripped and not stripped.startswith("#") and i + 1 != keep:
            lines[i] = f"{indent}# (another contract)\n"
    return "".join(lines)


def test_every_contract_finds_a_counterexample_in_its_broken_variant(tmp_path: Path) -> None:
    source = SOURCE.read_text(encoding="utf-8")
    targets = []
    for number, (marker, (function, fragment, broken)) in enumerate(MUTANTS.items()):
        mutant = broken_copy(only_contract(source, function, contract_line(source, marker)), fragment, broken)
        (tmp_path / f"peer_mutant_{number}.py").write_text(mutant, "utf-8")
        targets.append(f"peer_mutant_{number}.{function}")
    report = counterexamples(*targets, cwd=tmp_path, budget=MUTANT_BUDGET)
    missed = []
    for number, marker in enumerate(MUTANTS):
        if contract_line(source, marker) not in failing_lines(report, f"peer_mutant_{number}"):
            missed.append(marker)
    assert not missed, f"contracts that missed their broken variant: {missed}\n{report}"
