"""Each host finding: its property fails under the seed default and holds under its option.

The explorations run at bounds below the default (spec/host.md, HOST-F*), each
the least that still holds the finding's loop or trace, so that the test is
quick; the default exploration shows the same (``inboxspec findings``,
``checker/manifests/host.json``). A forever-property's failure is a lasso,
printed as its prefix and then its loop.
"""

from __future__ import annotations

import pytest

from inboxspec import machines
from inboxspec.checker.traces import describe, describe_lasso
from inboxspec.machines.frame import forever_properties
from tests.session_shared import SharedExplorations

# finding -> (property, option, bounds, whether it is a forever-property)
FINDINGS = {
    "HOST-F1": ("no_forged_cadence_forever", "stamp_true_sender", {"subscriptions": "0"}, True),
    "HOST-F2": ("no_harness_line_wakes_forever", "harness_lines_as_agent_mail",
                {"subscriptions": "0", "forgeries": "0"}, True),
    "HOST-F2-counted": ("no_counted_wakes_forever", "harness_lines_as_agent_mail",
                        {"subscriptions": "0", "forgeries": "0"}, True),
    "HOST-F2-next-turn": ("no_harness_line_wakes_forever", "harness_lines_at_next_turn",
                          {"subscriptions": "0", "forgeries": "0"}, True),
    "HOST-F2-counted-next-turn": ("no_counted_wakes_forever", "harness_lines_at_next_turn",
                                  {"subscriptions": "0", "forgeries": "0"}, True),
    "HOST-F3": ("idle_is_true", "pending_counts_as_held", {"forgeries": "0"}, False),
}


@pytest.mark.parametrize("finding", sorted(FINDINGS))
def test_the_finding_fails_by_default_and_holds_with_its_option(finding: str,
                                                                explorations: SharedExplorations) -> None:
    prop, option, bounds, forever = FINDINGS[finding]
    default = explorations.get("host", bounds)
    fixed = explorations.get("host", bounds, {option: True})
    variables = machines.get("host").explorer.variables
    if forever:
        lasso = default.lassos[prop]
        lines = describe_lasso(lasso.prefix, lasso.loop, variables)
        print(f"{finding} {prop}: lasso", *lines, sep="\n")
        assert lasso.loop, "a lasso has a loop"
        assert any("-- loop:" in line for line in lines)
        # The loop returns to the state it leaves, and no step of it is the environment's hand.
        assert lasso.loop[-1][2] == lasso.loop[0][0]
        hand = ("user_input", "approve", "deny", "set_setting")
        assert all(step[1].event not in hand for step in lasso.loop)
        assert prop not in fixed.lassos
    else:
        trace = default.violations[prop]
        print(f"{finding} {prop}: shortest trace", *describe(trace, variables), sep="\n")
        assert prop not in fixed.violations


def test_every_host_finding_of_the_description_is_tested() -> None:
    explorer = machines.get("host").explorer
    declared = {(p.finding, p.name, p.option) for p in explorer.invariants if p.finding}
    declared |= {(p.finding, p.name, option) for p in forever_properties(explorer) if p.finding
                 for option in p.fixing_options}
    tested = {(f.split("-counted")[0].split("-next")[0], prop, option)
              for f, (prop, option, _b, _f) in FINDINGS.items()}
    assert declared <= tested
