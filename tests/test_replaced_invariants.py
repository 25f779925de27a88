"""An option that replaces a rule of the seed's on purpose (a finding's fix) replaces the property
that states the rule: under the option the explorer does not check it (``Invariant.replaced_by``),
and the spec's option says so.

- With any option on, an exploration finds no violation but the other findings' (the host's
  options, 20 to 30 s each, are left to ``tests/test_host_findings.py``).
- With all of a machine's options on together, where its findings show, it finds no violation and
  no lasso: the fixes compose.
- Each ``replaced_by`` names an option of its machine, and the spec's requirement for that
  option names the property it replaces, and no other requirement of the option does.
- ``inboxspec explore --option`` says which properties the options replace, and passes; a
  replaced property asked for by name is still checked.
"""

from __future__ import annotations

import json

import pytest

from inboxspec import machines
from inboxspec.checker.explore import Explorations, explore
from inboxspec.cli import main
from inboxspec.spec import index as spec_index
from tests.test_host_findings import FINDINGS


def _options() -> list[tuple[str, str]]:
    return [(name, option) for name in machines.names() if name != "host"
            for option in machines.get(name).explorer.options]


@pytest.mark.parametrize(("name", "option"), _options())
def test_an_option_breaks_no_property_but_the_other_findings(name: str, option: str,
                                                             explorations: Explorations) -> None:
    explorer = machines.get(name).explorer
    found = explorations.get(name, options={option: True})
    others = {inv.name for inv in explorer.invariants if inv.finding is not None and inv.option != option}
    assert set(found.violations) <= others
    replaced = {inv.name for inv in explorer.invariants if option in inv.replaced_by}
    assert replaced.isdisjoint(found.invariants_checked)


# Where the fixes must compose: each machine with all its options on, at the bounds where its
# findings show (check's, the default; for the host, each bound of tests/test_host_findings.py),
# the host once with each of its two harness-line options, which exclude each other.
HOST_OPTION_SETS = (("stamp_true_sender", "harness_lines_as_agent_mail", "pending_counts_as_held"),
                    ("stamp_true_sender", "harness_lines_at_next_turn", "pending_counts_as_held"))
HOST_BOUNDS = sorted({tuple(sorted(finding[2].items())) for finding in FINDINGS.values()})
TOGETHER: list[tuple[str, dict[str, str], tuple[str, ...]]] = [
    *((name, {}, tuple(machines.get(name).explorer.options)) for name in machines.names() if name != "host"),
    *(("host", dict(bounds), options) for bounds in HOST_BOUNDS for options in HOST_OPTION_SETS),
]


def _together_id(name: str, bounds: dict[str, str], options: tuple[str, ...]) -> str:
    shown = ",".join(f"{key}={value}" for key, value in bounds.items()) or "default"
    return f"{name}-{shown}-{options[1] if name == 'host' else 'all'}"


@pytest.mark.slow
@pytest.mark.parametrize(("name", "bounds", "options"), TOGETHER, ids=[_together_id(*t) for t in TOGETHER])
def test_all_the_fixes_together_break_no_property(name: str, bounds: dict[str, str],
                                                  options: tuple[str, ...]) -> None:
    """Each finding's option fixes its property alone (above); turned on together they must not break
    one another's, nor any other property: no violation and no lasso. With harness_lines_at_next_turn
    and pending_counts_as_held on together, the host's idle_is_true once failed here: it counted the
    lines waiting for the next turn, which HOST-INV-4 and HOST-OPT-4 do not."""
    found = explore(name, bounds, dict.fromkeys(options, True))
    assert found.violations == {} and not found.lassos, (sorted(found.violations), sorted(found.lassos or []))


def test_every_host_option_is_turned_on_together() -> None:
    assert set().union(*HOST_OPTION_SETS) == set(machines.get("host").explorer.options)


def _replacements() -> list[tuple[str, str, str]]:
    return [(name, inv.name, option) for name in machines.names()
            for inv in machines.get(name).explorer.invariants for option in inv.replaced_by]


def test_some_property_is_replaced() -> None:
    assert ("peer-delivery", "eviction_takes_the_oldest", "fair_eviction") in _replacements()


@pytest.mark.parametrize(("name", "invariant", "option"), _replacements())
def test_the_spec_says_which_property_its_option_replaces(name: str, invariant: str, option: str) -> None:
    explorer = machines.get(name).explorer
    assert option in explorer.options
    # The option's own requirement: the one its finding's property cites among the options'.
    (fixed,) = [inv for inv in explorer.invariants if inv.option == option]
    assert invariant != fixed.name
    texts = spec_index.requirement_texts(spec_index.machine_spec_text(name))
    own = [r for r in fixed.requirements if "-OPT-" in r]
    assert len(own) == 1
    assert f"`{invariant}`" in texts[own[0]]
    # And no option's requirement names a property the explorer does not let it replace.
    for requirement, text in texts.items():
        if "-OPT-" in requirement and requirement != own[0]:
            assert f"`{invariant}`" not in text


def test_explore_names_the_replaced_properties_and_passes(capsys: pytest.CaptureFixture[str]) -> None:
    status = main(["explore", "peer-delivery", "--option", "fair_eviction=true", "--json"])
    summary = json.loads(capsys.readouterr().out)
    assert status == 0 and summary["unexpected_violations"] == []
    assert summary["replaced_by_the_options"] == ["eviction_takes_the_oldest"]
    asked = explore("peer-delivery", options={"fair_eviction": True},
                    invariants=["eviction_takes_the_oldest"])
    assert list(asked.violations) == ["eviction_takes_the_oldest"]
