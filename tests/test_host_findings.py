"""Each host finding: its property fails under the seed default and holds under its option.

The explorations run at bounds below the default (spec/host.md, HOST-F*), each
the least that still holds the finding's loop or trace, so that the test is
quick; the default exploration shows the same (``inboxspec findings``,
``checker/manifests/host.json``). A forever-property's failure is a lasso,
printed as its prefix and then its loop.
"""

from __future__ import annotations

import random
import re
from pathlib import Path
from typing import cast

import pytest

from inboxspec import machines
from inboxspec.checker.traces import describe, describe_lasso, lasso_lines
from inboxspec.machines.frame import ReplayMismatch, forever_properties, readable_trace
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


@pytest.mark.parametrize("finding", ["HOST-F1", "HOST-F2", "HOST-F3"])
def test_a_printed_trace_names_each_session_by_one_address_and_is_the_trace_explored(
        finding: str, explorations: SharedExplorations) -> None:
    """The printed form (``HostExplorer.readable``) replays the trace on the chart; each step's
    replayed state, made canonical, is the one explored (else ``ReplayMismatch``), and its label
    is a letter of the alphabet, its sessions named by the replayed chart's addresses."""
    prop, _option, bounds, forever = FINDINGS[finding]
    explorer = machines.get("host").explorer
    default = explorations.get("host", bounds)
    trace = ([*default.lassos[prop].prefix, *default.lassos[prop].loop] if forever
             else default.violations[prop])
    variables, shown, _names = readable_trace(explorer, trace, default.bounds, default.options)
    assert tuple(variables) == ("control", *default.bounds["addresses"])
    labels = {action.label for action in explorer.alphabet(default.bounds)}
    assert len(shown) == len(trace)
    for (pre, _action, post, output), (shown_pre, letter, shown_post, shown_output) in zip(
            trace, shown, strict=True):
        assert letter.label in labels and letter.event == _action.event
        assert (shown_pre[0], shown_post[0]) == (pre[0], post[0])  # the control state
        assert shown_output is not None and "sessions" not in shown_output
        if output is not None:  # a trace keeps the chart's outputs where the search kept them
            assert [e["type"] for e in shown_output["events"]] == [e["type"] for e in output["events"]]
    # Each step is replayed from the one before: consecutive printed states join up.
    assert all(shown[n][2] == shown[n + 1][0] for n in range(len(shown) - 1))


def test_a_trace_that_does_not_replay_to_the_states_explored_is_refused(
        explorations: SharedExplorations) -> None:
    prop, _option, bounds, _forever = FINDINGS["HOST-F3"]
    default = explorations.get("host", bounds)
    trace = default.violations[prop]
    explorer = machines.get("host").explorer
    # The last step's state replaced by the one before it: a trace the exploration did not take.
    pre, action, _post, output = trace[-1]
    tampered = [*trace[:-1], (pre, action, pre, output)]
    with pytest.raises(ReplayMismatch, match=f"step {len(trace)} "):
        readable_trace(explorer, tampered, default.bounds, default.options)
    # Replayed with another bound than the exploration's, the clock moves otherwise, and the states
    # reached differ from the ones explored.
    other = {**default.bounds, "floor_ms": default.bounds["floor_ms"] + 1}
    lasso = explorations.get("host", FINDINGS["HOST-F1"][2]).lassos["no_forged_cadence_forever"]
    with pytest.raises(ReplayMismatch):
        readable_trace(explorer, [*lasso.prefix, *lasso.loop], other, default.options)


def test_a_lasso_says_how_its_printed_states_close_the_loop(explorations: SharedExplorations) -> None:
    """The loop closes as the explorer's snapshots see it. Printed, HOST-F1's closes as it is;
    HOST-F2's harness-line lasso subscribes anew in each round (the replayed chart's subscription id
    grows, which the snapshot numbers anew), so it closes up to that; and at ``max_streak=2`` the
    counted-wakes lasso ends with the two sessions in each other's places, which its next round
    then names so."""
    explorer = machines.get("host").explorer
    endings = {
        ("no_forged_cadence_forever", "subscriptions=0"): " --",
        ("no_harness_line_wakes_forever", ""): ", up to what the explorer's snapshots leave out --",
        ("no_counted_wakes_forever", "subscriptions=0 forgeries=0 max_streak=2"):
            ", with s1 in s2's place and s2 in s1's place --",
    }
    for (prop, written), ending in endings.items():
        bounds = dict(pair.split("=") for pair in written.split())
        default = explorations.get("host", bounds)
        lasso = default.lassos[prop]
        readable = readable_trace(explorer, [*lasso.prefix, *lasso.loop], default.bounds, default.options)
        lines = lasso_lines(explorer, lasso.prefix, lasso.loop, default.bounds, default.options)
        assert lines[-1] == f"     -- back to the state before step {len(lasso.prefix) + 1}{ending}"
        assert readable.names is not None
        loop_start, shown = len(lasso.prefix), readable.steps
        # Named alike, the printed states close the loop unless the snapshots leave something out.
        same_names = readable.names[loop_start] == readable.names[-1]
        assert same_names is (ending != ", with s1 in s2's place and s2 in s1's place --")
        assert (shown[-1][2] == shown[loop_start][0]) is (ending == " --")


SPEC = Path(__file__).resolve().parent.parent / "spec" / "host.md"
EVERY_FIX = {"stamp_true_sender": True, "pending_counts_as_held": True}


@pytest.mark.parametrize("harness_lines", ["harness_lines_as_agent_mail", "harness_lines_at_next_turn"])
def test_with_every_findings_option_on_every_property_holds(harness_lines: str,
                                                            explorations: SharedExplorations) -> None:
    """spec/host.md, *Decided*: with every finding's option on (one harness-line option at a time:
    they exclude each other), no invariant fails and no forever-property has a cycle at the default
    bounds, in as many states as the spec says."""
    result = explorations.get("host", None, {**EVERY_FIX, harness_lines: True})
    assert result.violations == {} and result.lassos == {}
    assert set(result.invariants_checked) == {i.name for i in machines.get("host").explorer.invariants}
    assert set(result.forever_checked) == {p.name for p in forever_properties(machines.get("host").explorer)}
    said = re.search(r"holds at the default bounds: ([\d,]+)\s+states with\s+`harness_lines_as_agent_mail`,"
                     r"\s+([\d,]+) with\s+`harness_lines_at_next_turn`", SPEC.read_text(encoding="utf-8"))
    assert said is not None, "spec/host.md's sentence on every finding's option on"
    states = said.group(1 if harness_lines == "harness_lines_as_agent_mail" else 2)
    assert result.states == int(states.replace(",", ""))


# Random walks of the host explorer's own steps, replayed for the reader: with three sessions the
# canonical form also mirrors the sessions, and a renaming that is not its own inverse shows.
WALKS = [({"sessions": "3", "subscriptions": "0", "forgeries": "1"}, {}),
         ({"sessions": "3", "hand": "1"}, {"stamp_true_sender": True}),
         ({"sessions": "3", "max_streak": "2", "floor_ms": "2"}, {"harness_lines_at_next_turn": True}),
         ({"max_streak": "2", "subscriptions": "0"}, {"pending_counts_as_held": True})]


@pytest.mark.parametrize(("bounds", "options"), WALKS)
def test_random_walks_replay_for_the_reader_and_as_a_case_under_the_labels_they_print(
        bounds: dict[str, str], options: dict[str, bool]) -> None:
    """Each walk replays without ``ReplayMismatch`` both ways (``readable``, and ``concretize`` for a
    case), the case's steps name the sessions the printed labels name, and a printed letter that
    names a session is the one its output's send or subscribe record names."""
    from inboxspec.checker.compiled import take_step
    from inboxspec.checker.explore import set_up
    from inboxspec.machines.host import Snapshot

    explorer, parsed, chosen, chart, data, actions = set_up("host", bounds, options)
    bound = [chart.bind(action.event, action.kwargs) for action in actions]
    rng = random.Random(f"{bounds}{options}")
    for _walk in range(12):
        state, trace = cast(Snapshot, explorer.initial(parsed)), []
        for _step in range(50):
            index = rng.choice([i for i, a in enumerate(actions) if a.offered(state)])
            fire = bound[index][state.control]
            _fired, post, output = take_step(data, state, fire, explorer.load, explorer.store)
            trace.append((state, actions[index], post, output))
            state = cast(Snapshot, post)
        shown = readable_trace(explorer, trace, parsed, chosen).steps
        case_steps = explorer.concretize([(pre, a, post) for pre, a, post, _ in trace], parsed, chosen)
        for (_pre, letter, _post, output), case_step in zip(shown, case_steps, strict=True):
            assert output is not None
            named = {k: letter.kwargs[k] for k in ("session", "to") if k in letter.kwargs}
            assert {k: case_step["args"][k] for k in named} == named
            if "error" in output:
                continue
            for record in output["events"]:
                if record["type"] == "send":
                    assert (record["session"], record["to"]) == (named["session"], named["to"])
                elif record["type"] == "subscribe":
                    assert (record["session"], record["target"]) == (letter.kwargs["session"],
                                                                     letter.kwargs["peer"])
