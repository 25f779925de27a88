"""CrossHair checks the idle-subscriptions contracts symbolically.

The contracts are the PEP 316 docstrings of ``must_push_out`` (the priors
bound, IDLE-REQ-3) and ``next_fire`` (the held-messages back-off, IDLE-HELD-2)
in ``impl/idle_subscriptions.py``, and ``_advance`` (the sanitiser's
phrase-matching step, IDLE-LABEL-3) in ``impl/idle_label.py``. The
sanitiser's whole-string properties are checked by hypothesis, far faster
(tests/test_idle_subscriptions_label.py).
CI runs them with a bounded budget per condition
(``INBOXSPEC_CROSSHAIR_BUDGET``, seconds, default 1 here); each contract is
also shown to bite: a copy of the module with one deliberate bug, and only
that contract left, yields a counterexample on that contract's line.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import inboxspec.impl.idle_label as idle_label
import inboxspec.impl.idle_subscriptions as idle_subscriptions
from tests.crosshair_runner import assert_contracts_hold, assert_counterexample_on, broken_copy, contract_line
from tests.test_crosshair import only_contract

pytestmark = pytest.mark.slow



def test_contracts_hold() -> None:
    assert_contracts_hold("inboxspec.impl.idle_subscriptions")
    assert_contracts_hold("inboxspec.impl.idle_label._advance")


# contract comment -> (module, function, exact source fragment, its buggy replacement)
MUTANTS = {
    "no fire while messages are held": (
        idle_subscriptions, "next_fire",
        "    if held == 0:\n        return fire_at, fire_at\n",
        "    if held <= 1:\n        return fire_at, fire_at\n",
    ),
    "a fire happens at its due time": (
        idle_subscriptions, "next_fire",
        "    if held == 0:\n        return fire_at, fire_at\n",
        "    if held == 0:\n        return now_ms, fire_at\n",
    ),
    "a due fire with nothing held is never lost": (
        idle_subscriptions, "next_fire",
        "    if held == 0:\n        return fire_at, fire_at\n",
        "    if held == 0 and fire_at < now_ms:\n        return fire_at, fire_at\n",
    ),
    "a held fire is re-checked after now, on the back-off grid": (
        idle_subscriptions, "next_fire",
        "    checks = (now_ms - fire_at) // backoff_ms + 1\n",
        "    checks = (now_ms - fire_at) // backoff_ms\n",
    ),
    "the priors kept never exceed the bound": (
        idle_subscriptions, "must_push_out",
        "    return priors > priors_kept\n",
        "    return priors > priors_kept + 1\n",
    ),
    "a prior is pushed out only when the bound needs it": (
        idle_subscriptions, "must_push_out",
        "    return priors > priors_kept\n",
        "    return priors >= priors_kept\n",
    ),
    "the match is a prefix of the phrase that ends with the new code point": (
        idle_label, "_advance",
        # _advance is _kmp_step on the prefix phrase: the step it delegates to is broken.
        "    return k + 1 if letter == phrase[k] else 0\n",
        "    return k + 1 if letter == phrase[k] or letter == \"x\" else 0\n",
    ),
    "a match that continues grows by exactly one": (
        idle_label, "_advance",
        "    while k and letter != phrase[k]:\n",
        "    while k and letter != \"z\":\n",
    ),
}


@pytest.mark.parametrize("contract", sorted(MUTANTS))
def test_contract_finds_counterexample_in_broken_variant(contract: str, tmp_path: Path) -> None:
    module, function, fragment, broken = MUTANTS[contract]
    assert module.__file__ is not None  # a module imported from source has a file
    # Only the contract under test stays, so the run checks one condition.
    mutant = only_contract(broken_copy(Path(module.__file__).read_text(encoding="utf-8"), fragment, broken),
                           contract)
    name = f"{Path(module.__file__).stem}_mutant"
    assert_counterexample_on(mutant, name, function, contract_line(mutant, contract), tmp_path, budget="4")
