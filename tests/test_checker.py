"""The model checker: the compiled view is the chart, traces are shortest, bugs are caught."""

from __future__ import annotations

import ast
import io
import itertools
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, NoReturn

import pytest
from statemachine import State, StateChart

from inboxspec import machines
from inboxspec.checker import explore as explore_module
from inboxspec.checker.compiled import ChartNotCompilable, CompiledChart
from inboxspec.checker.explore import Explorations, edges, explore
from inboxspec.checker.findings import check_findings
from inboxspec.checker.generated_cases import write_or_check
from inboxspec.checker.manifest import check_manifest
from inboxspec.checker.refine import refine
from inboxspec.checker.traces import describe
from inboxspec.cli import main
from inboxspec.impl import wake_gate as impl
from inboxspec.machines.wake_gate import MACHINE
from inboxspec.model.wake_gate import WakeGateChart
from tests.test_host_findings import FINDINGS as HOST_FINDINGS

description = MACHINE.explorer
CONFIGURATIONS: list[dict[str, bool]] = [{}] + [{option: True} for option in description.options]
BROKEN_ADAPTER = Path(__file__).parent / "adapters" / "broken_reference_adapter.py"


@pytest.mark.parametrize("options", CONFIGURATIONS, ids=lambda o: next(iter(o), "default"))
def test_compiled_view_agrees_with_send_on_every_transition(options: dict[str, bool]) -> None:
    compiled = edges("wake-gate", options=options, via="compiled")
    dispatched = edges("wake-gate", options=options, via="dispatch")
    assert compiled == dispatched and len(compiled) > 1000


def test_default_exploration_matches_the_manifest() -> None:
    with machines.only(["wake-gate"]):  # every machine's: `check` (tests/test_check_command.py)
        problems, explorations = check_manifest()
    assert problems == []
    assert explorations["wake-gate"].states == 240


def test_manifest_notices_a_changed_model(monkeypatch: pytest.MonkeyPatch) -> None:
    # A chart that never re-arms on a counted wake reaches other states.
    monkeypatch.setattr(WakeGateChart, "counted_wake_under_cap", lambda self: False)
    with machines.only(["wake-gate"]):
        problems, _ = check_manifest()
    assert any("distinct_states" in p for p in problems)


def sequence_violates(invariant: Any, letters: tuple[int, ...], relation: dict[Any, Any],
                      actions: list[Any], start: Any, bounds: Any) -> bool:
    state = start
    for index in letters:
        post, output = relation[(state, index)]
        if output is not None and invariant.applies(actions[index]) and not invariant.holds(
                state, post, output, bounds):
            return True
        state = post
    return False


def test_violation_traces_are_shortest() -> None:
    result = explore("wake-gate")
    relation = edges("wake-gate")
    actions = list(description.alphabet(result.bounds))
    start = description.initial(result.bounds)
    for invariant in description.invariants:
        trace = result.violations.get(invariant.name)
        if trace is None:
            continue
        bounds = result.bounds
        assert sequence_violates(invariant, tuple(actions.index(a) for _, a, _, _ in trace),
                                 relation, actions, start, bounds)
        for length in range(1, len(trace)):
            for letters in itertools.product(range(len(actions)), repeat=length):
                assert not sequence_violates(invariant, letters, relation, actions, start, bounds), (
                    f"{invariant.name}: a {length}-step trace exists, the explorer gave {len(trace)}")


def test_findings_fail_by_default_and_hold_with_their_options() -> None:
    # The wake gate's; every machine's are part of `check` (tests/test_check_command.py).
    with machines.only(["wake-gate"]):
        results = check_findings()
    assert {r.finding for r in results if r.machine == "wake-gate"} == {"WAKE-F1", "WAKE-F2", "WAKE-F3",
                                                                        "WAKE-F4"}
    assert all(r.ok and r.trace for r in results)


def test_the_findings_command_takes_one_machine(capsys: pytest.CaptureFixture[str]) -> None:
    """``findings --machine`` (spec/host.md sends the design reviewer there for the host's): that
    machine's findings and forever-properties alone; an unknown machine is a usage error."""
    assert main(["findings", "--machine", "wake-gate", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert {entry["machine"] for entry in listed} == {"wake-gate"}
    assert {entry["finding"] for entry in listed if entry["kind"] == "invariant"} == {
        "WAKE-F1", "WAKE-F2", "WAKE-F3", "WAKE-F4"}
    assert main(["findings", "--machine", "no-such-machine"]) == 2
    assert "invalid choice: 'no-such-machine'" in capsys.readouterr().err


def test_injected_model_bug_becomes_a_case_that_separates_implementations(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    # The injected bug: a self-wake exactly one floor later counts as rapid.
    def rapid_at_the_floor(self: Any) -> bool:
        return self.last_self_wake_ms is not None and self.now_ms - self.last_self_wake_ms <= self.floor_ms

    monkeypatch.setattr(WakeGateChart, "_is_rapid", rapid_at_the_floor)
    case_file = tmp_path / "counterexample.json"
    code = main(["explore", "wake-gate", "--emit-case", str(case_file), "--json"])
    report = json.loads(capsys.readouterr().out)
    assert code == 1 and report["unexpected_violations"] == ["self_wake_a_floor_later_is_exempt"]
    # Shortest: a self-wake, the clock at exactly the floor, a self-wake (or the same with a zero floor).
    assert len(report["traces"]["self_wake_a_floor_later_is_exempt"]) == 3
    monkeypatch.undo()

    def conform(adapter: str) -> int:
        return subprocess.run([sys.executable, "-m", "inboxspec", "conform", "--adapter", adapter,
                               "--cases", str(case_file)], capture_output=True, timeout=120).returncode

    assert conform(f"{sys.executable} -m inboxspec.conformance.adapter") == 0
    assert conform(f"{sys.executable} {BROKEN_ADAPTER}") == 1


def test_itf_trace_is_written(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    itf_file = tmp_path / "trace.itf.json"
    main(["explore", "wake-gate", "--invariant", "zero_floor_self_wakes_are_exempt",
          "--emit-itf", str(itf_file)])
    capsys.readouterr()
    itf = json.loads(itf_file.read_text())
    assert itf["vars"] == ["control", "streak", "age", "floor_ms", "action", "output"]
    assert [s["action"] for s in itf["states"]] == [
        "init", "decide [self]", "set_floor 0", "elapse -1 ms", "decide [self]"]
    assert itf["states"][-1]["streak"] == {"#bigint": "1"}


def test_generated_cases_are_current_and_cover_every_transition() -> None:
    assert write_or_check(write=False, only=["wake-gate"]) == []


@pytest.mark.parametrize("options", CONFIGURATIONS, ids=lambda o: next(iter(o), "default"))
def test_refinement_to_depth_four(options: dict[str, bool]) -> None:
    result = refine("wake-gate", 4, options)
    assert result.mismatch == [] and result.sequences == len(description.alphabet(
        description.parse_bounds({}))) ** 4


def test_refinement_catches_a_changed_implementation_rule(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(impl, "is_rapid", lambda last, now, rules: last is not None
                        and now - last <= rules.floor_ms)
    result = refine("wake-gate", 3)
    assert result.mismatch and result.mismatch[-1].startswith("reference")


def test_unsupported_chart_features_are_refused() -> None:
    class WithEntryAction(StateChart):  # type: ignore[type-arg]
        idle = State(initial=True)
        busy = State()
        go = idle.to(busy, on="note") | busy.to(idle, on="note")

        def note(self) -> None: ...

        def on_enter_busy(self) -> None: ...

    with pytest.raises(ChartNotCompilable, match="entry callbacks"):
        CompiledChart(WithEntryAction)


BAD_EXPLORE_ARGUMENTS = [
    ["--bound", "nope=1"],
    ["--option", "clamp_backwards_clock=maybe"],
    ["--bound", "max_streak=x"],
    ["--emit-case", "/dev/null", "--invariant", "user_input_always_wakes"],  # it holds: nothing to emit
]


@pytest.mark.parametrize("arguments", BAD_EXPLORE_ARGUMENTS)
def test_explore_rejects_bad_arguments(arguments: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explore", "wake-gate", *arguments]) == 2
    assert "inboxspec explore:" in capsys.readouterr().err


def test_a_trace_line_shows_the_control_state_and_only_the_fields_that_changed() -> None:
    from inboxspec.machines.frame import Action
    from inboxspec.machines.wake_gate import Snapshot

    start = Snapshot(control="no_episode", streak=0, age=None, floor_ms=30_000)
    step = Action("decide chatter", "decide")
    (line,) = describe([(start, step, start._replace(streak=1), None)], Snapshot._fields)
    assert line.endswith("decide chatter             no_episode: streak=1")
    (line,) = describe([(start, step, start._replace(control="refusing_unannounced"), {"wake": False})],
                       Snapshot._fields)
    assert "refusing_unannounced  -> " in line and "=" not in line.split("->")[0]



def test_a_trace_line_shows_a_named_tuple_field_part_by_part_and_anything_else_whole() -> None:
    from typing import NamedTuple

    from inboxspec.machines.frame import Action

    class Gate(NamedTuple):
        state: str
        streak: int

    class View(NamedTuple):
        gate: Gate
        pending: tuple[str, ...]

    before = ("running", View(Gate("open", 0), ()), View(Gate("open", 0), ()))
    after = ("running", View(Gate("open", 1), ()), View(Gate("open", 0), ("hi",)))
    (line,) = describe([(before, Action("tick", "tick"), after, None)], ("control", "s1", "s2"))
    assert line.endswith("running: s1.gate.streak=1, s2.pending=['hi']")
    # A field whose new value is of another type is shown whole, either way.
    changed = ("running", None, View(Gate("open", 0), ()))
    (line,) = describe([(before, Action("tick", "tick"), changed, None)], ("control", "s1", "s2"))
    assert line.endswith("running: s1=None")
    (line,) = describe([(changed, Action("tick", "tick"), before, None)], ("control", "s1", "s2"))
    assert line.endswith("running: s1=(gate=(state='open', streak=0), pending=[])")

    class Other(NamedTuple):
        gate: Gate
        pending: tuple[str, ...]

    other = ("running", Other(Gate("open", 1), ()), View(Gate("open", 0), ()))
    (line,) = describe([(before, Action("tick", "tick"), other, None)], ("control", "s1", "s2"))
    assert line.endswith("running: s1=(gate=(state='open', streak=1), pending=[])")

# The bounds of the host's finding trace below: tests/test_host_findings.py's for HOST-F3. Its findings
# at the default bounds need its default-bound explorations, which are the main job's
# (tests/test_check_command.py's CHECKED_WHOLE says why); the trace is printed as check_findings prints it.
HOST_FINDING_BOUNDS = HOST_FINDINGS["HOST-F3"][2]


def test_findings_name_each_changed_field_for_every_machine(explorations: Explorations) -> None:
    """Every machine's findings print named fields, each step only what it changed."""
    with machines.only([name for name in machines.names() if name != "host"]):
        results = check_findings(explorations)
    shown = [(r.machine, r.finding, explorations.get(r.machine).violations[r.invariant], r.trace)
             for r in results]
    host = machines.get("host").explorer
    for invariant in host.invariants:
        if invariant.finding is not None:
            trace = explorations.get("host", HOST_FINDING_BOUNDS).violations[invariant.name]
            shown.append(("host", invariant.finding, trace, describe(trace, host.variables)))
    assert {machine for machine, *_ in shown} == set(machines.names())
    for machine, finding, trace, lines in shown:
        variables = machines.get(machine).explorer.variables
        assert len(trace) == len(lines)
        for (pre, _action, post, _output), line in zip(trace, lines, strict=True):
            state_text = line.split("  -> ")[0]
            assert "('" not in state_text, line  # no positional tuple
            for name, before, after in zip(variables[1:], pre[1:], post[1:], strict=True):
                assert (f" {name}=" in state_text) == (before != after), (finding, name, line)


def test_itf_writes_named_entries_as_records(explorations: Explorations) -> None:
    from inboxspec.checker.traces import to_itf

    explorer = machines.get("peer-delivery").explorer
    result = explorations.get("peer-delivery")
    trace = result.violations["eviction_spares_the_smaller_sender"]
    itf = to_itf("peer-delivery", explorer.variables, trace, "eviction_spares_the_smaller_sender",
                 explorer.initial(result.bounds))
    (entry, *_rest) = itf["states"][1]["held"]
    assert entry == {"sender": "a", "sender_mode": {"tag": "None", "value": {"#tup": []}},
                     "attestation": "absent", "cause": "mode-mismatch", "deadline_in": {"#bigint": "300000"}}


def test_generated_functions_share_their_compiled_text_and_nothing_else() -> None:
    # A text is compiled once; each function still reads the names of its own namespace.
    from inboxspec.checker import compiled

    source = ["def add(x):", "    return step + x  # test_checker"]
    before = compiled._compiled.cache_info()
    one = compiled.generated_function(source, {"step": 1}, "add")
    ten = compiled.generated_function(source, {"step": 10}, "add")
    after = compiled._compiled.cache_info()
    assert (one(1), ten(1)) == (2, 11)
    assert (after.misses - before.misses, after.hits - before.hits) == (1, 1)


@pytest.mark.parametrize(("arguments", "message"), [
    (["wake-gate", "--bound", "max_streak=3", "--bound", "max_streak=4"],
     "--bound max_streak is given twice"),
    (["wake-gate", "--option", "reject_empty_batch=true", "--option", "reject_empty_batch=false"],
     "--option reject_empty_batch is given twice"),
    (["wake-gate", "--invariant", "nope", "--emit-case", "{tmp}/case.json"], "properties ("),
    (["wake-gate", "--invariant", "no_ping_pong_forever"], "--invariant chooses the violation that"),
    (["peer-delivery", "--option", "fair_eviction=true", "--invariant", "eviction_takes_the_oldest",
      "--emit-case", "{tmp}/case.json"], "eviction_takes_the_oldest is replaced by the options on"),
    (["host", "--bound", "hand=7"], "the host's hand bound chooses among letters, from 0 to 1; 7 would"),
    (["host", "--bound", "forgeries=3"], "the host's forgeries bound chooses among letters, from 0 to 2"),
])
def test_explore_refuses_what_it_would_ignore_before_it_searches(
        arguments: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A repeated pair took its last value, an unknown --invariant was found out only after the
    search (when nothing it could name failed, as "no violation of None"), --invariant without a
    trace to write did nothing, and the host's hand=7 explored what hand=1 does while its summary
    printed 7. Each is refused at once, exit 2."""
    def no_search(*args: Any, **kwargs: Any) -> NoReturn:
        raise AssertionError("explored")

    monkeypatch.setattr(explore_module, "explore", no_search)  # which the command imports as it runs
    assert main(["explore", *(a.replace("{tmp}", str(tmp_path)) for a in arguments), "--json"]) == 2
    assert message in json.loads(capsys.readouterr().out)["unusable"]
    assert not (tmp_path / "case.json").exists()


@pytest.mark.parametrize("arguments", [
    *BAD_EXPLORE_ARGUMENTS,
    ["--emit-case", ""],
    ["--emit-case", "/no/such/directory/case.json"],
    ["--emit-itf", "/"],
    ["--invariant", ""],
    ["--write-manifest", "--bound", "max_streak=2"],
])
def test_a_bad_explore_argument_still_writes_the_json_report(arguments: list[str],
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    """Under --json a pipeline reads a report whatever went wrong (the command line's promise), and
    a file that cannot be written is refused before the exploration, not by a traceback after it."""
    assert main(["explore", "wake-gate", *arguments, "--json"]) == 2
    out, err = capsys.readouterr()
    report = json.loads(out)
    assert report["ok"] is False and report["unusable"] and err.startswith("inboxspec explore: ")
    assert "Traceback" not in err


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full, where every write fails")
@pytest.mark.parametrize("option", ["--emit-case", "--emit-itf"])
def test_an_emitted_trace_that_cannot_be_written_is_a_message(option: str,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    """A write that fails after the exploration (here with ENOSPC): exit 2 and the report, not a traceback."""
    assert main(["explore", "wake-gate", option, "/dev/full", "--json"]) == 2
    out, err = capsys.readouterr()
    assert json.loads(out)["unusable"].startswith("cannot write /dev/full:") and "Traceback" not in err


def test_a_refinement_past_its_most_steps_stops_with_a_message(capsys: pytest.CaptureFixture[str]) -> None:
    """The host's depth 8 is within the depth limit and would run for days: a refinement stops past
    --max-steps (a million by default), exit 2; the wake gate's depth 3 compares 2,892 steps."""
    assert main(["refine", "wake-gate", "--depth", "3", "--max-steps", "2891", "--json"]) == 2
    assert json.loads(capsys.readouterr().out)["unusable"] == (
        "the wake-gate refinement to depth 3 passed 2,891 steps compared and stopped (allow more with "
        "--max-steps, or refine less deep)")
    assert main(["refine", "wake-gate", "--depth", "3", "--max-steps", "2892", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["steps"] == 2892


@pytest.mark.parametrize("arguments", [["--depth", "9"], ["--option", "x"], ["--option", "nosuch=true"]])
def test_a_bad_refine_argument_still_writes_the_json_report(arguments: list[str],
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["refine", "wake-gate", *arguments, "--json"]) == 2
    out, err = capsys.readouterr()
    assert json.loads(out)["ok"] is False and err.startswith("inboxspec refine: ")


BOTH_HARNESS_OPTIONS = ["--option", "harness_lines_as_agent_mail=true",
                        "--option", "harness_lines_at_next_turn=true"]


@pytest.mark.parametrize("arguments", [
    ["explore", "host", *BOTH_HARNESS_OPTIONS],  # HOST-OPT: the two MUST NOT both be on
    ["explore", "host", "--bound", "floor_ms=9007199254740992", "--emit-case", "{tmp}/case.json"],
    ["explore", "host", "--bound", "max_streak=99999999999999999999999"],
    ["refine", "host", *BOTH_HARNESS_OPTIONS, "--depth", "1"],
])
def test_bounds_and_options_that_make_a_configuration_the_reference_refuses_are_refused(
        arguments: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Explored, they reported properties of a machine no port may build (both harness-line options:
    "forever-properties holding"), refine blamed the model, and --emit-case ended in a traceback."""
    assert main([*(a.replace("{tmp}", str(tmp_path)) for a in arguments), "--json"]) == 2
    out, err = capsys.readouterr()
    assert json.loads(out)["unusable"] == ("the reference refuses the host configuration these bounds and "
                                           "options make (invalid_config): explore and refine only machines "
                                           "a port may build")
    assert "Traceback" not in err and not (tmp_path / "case.json").exists()


@pytest.mark.parametrize("workers", ["1", "2"])
def test_an_exploration_past_its_most_states_stops_with_a_message(workers: str,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """A bound too large for an exhaustive search (here a wake gate's max_streak of a million, which
    grew by 13 MB a second) stops at --max-states: exit 2, the report, no worker left."""
    import multiprocessing

    arguments = ["explore", "wake-gate", "--bound", "max_streak=1000000", "--max-states", "2000",
                 "--workers", workers, "--json"]
    assert main(arguments) == 2
    out, err = capsys.readouterr()
    assert json.loads(out)["unusable"] == ("the wake-gate exploration passed 2,000 distinct states at "
                                           "these bounds and stopped (allow more with --max-states)")
    assert "Traceback" not in err and multiprocessing.active_children() == []
    assert explore("wake-gate", max_states=240).states == 240  # the default exploration: exactly 240
    with pytest.raises(ValueError, match="passed 239 distinct states"):
        explore("wake-gate", max_states=239)


@pytest.mark.parametrize(("machine", "bound"), [
    ("wake-gate", "floors=" + ",".join(str(floor) for floor in range(600))),  # 1,210 letters
    ("peer-delivery", "held_cap=7"),
    ("peer-delivery", "senders=" + ",".join(f"s{n}" for n in range(7))),
])
def test_a_bound_that_multiplies_letters_is_refused_before_the_search(
        machine: str, bound: str, capsys: pytest.CaptureFixture[str]) -> None:
    """A peer delivery held_cap of a million took 2 GB before the first state."""
    assert main(["explore", machine, "--bound", bound, "--json"]) == 2
    assert "beyond an exhaustive search" in json.loads(capsys.readouterr().out)["unusable"]
    name, _, value = bound.partition("=")
    with pytest.raises(ValueError, match="beyond an exhaustive search"):
        refine(machine, 1, bounds={name: value})


def test_the_readme_states_the_explorations_limits() -> None:
    from inboxspec.checker.explore import MAX_LETTERS
    from inboxspec.checker.limits import MAX_REFINE_STEPS, MAX_STATES

    readme = " ".join((Path(__file__).parent.parent / "README.md").read_text(encoding="utf-8").split())
    assert (f"A search stops, exit 2, past {MAX_STATES:,} distinct states (`--max-states N` allows more), "
            f"and an alphabet of more than {MAX_LETTERS:,} letters is refused") in readme
    assert f"A refinement stops, exit 2, past {MAX_REFINE_STEPS:,} steps compared" in readme
    assert f"a reachable one (`--reachable`) past as many steps replayed, or {MAX_STATES:,} states" in readme


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize("on_a_terminal", [True, False])
def test_refine_on_a_terminal_shows_how_far_it_has_got_and_otherwise_nothing(
        on_a_terminal: bool, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """A deep refinement runs for minutes: on a terminal its counts are redrawn on stderr as it goes
    (here at every sequence); piped, stderr stays empty."""
    from inboxspec.checker import refine as refine_module

    monkeypatch.setattr(refine_module, "PROGRESS_EVERY_S", -1.0)
    stderr = _Terminal() if on_a_terminal else io.StringIO()
    monkeypatch.setattr(sys, "stderr", stderr)
    assert main(["refine", "wake-gate", "--depth", "2"]) == 0
    assert capsys.readouterr().out.startswith("wake-gate: 225 sequences of 2 letters")
    drawn = [line for line in stderr.getvalue().split("\r") if line.strip()]
    if not on_a_terminal:
        assert drawn == []
        return
    counts = [int(line.split()[0].replace(",", "")) for line in drawn]
    assert counts == list(range(1, 226)), counts[:5]
    assert all(line.rstrip("\n").endswith("steps compared") for line in drawn)
    assert stderr.getvalue().endswith("\n")


@pytest.mark.parametrize("value", ["١٠", "1_0", " 3 ", "3 ", "+3", "3.0", "", "0x10"])
@pytest.mark.parametrize(("machine", "name"), [
    ("wake-gate", "max_streak"), ("wake-gate", "floors"), ("peer-delivery", "held_cap"),
    ("idle-subscriptions", "ttl_ms"), ("inbox-refresh", "horizon_ms"), ("host", "box_cap"),
])
def test_an_integer_bound_is_ascii_digits_alone(machine: str, name: str, value: str) -> None:
    """``int`` takes other scripts' digits, underscores and spaces; a bound does not (frame.bound_integer)."""
    explorer = machines.get(machine).explorer
    with pytest.raises(ValueError, match="integer"):
        explorer.parse_bounds({name: value})
    assert explorer.parse_bounds({name: "1"})[name] in (1, (1,))


def test_findings_are_listed_by_number_whichever_property_shows_them() -> None:
    """A newcomer's review: the host's findings were listed F3, F2, F2, F1 (the invariants' first, then
    the forever-properties'), and counted as 1/1 where its spec has three."""
    from inboxspec.checker.findings import finding_order

    shown = [("host", "HOST-F3"), ("host", "HOST-F2"), ("host", None), ("host", "HOST-F10"),
             ("host", "HOST-F1"), ("wake-gate", "WAKE-F1")]
    assert sorted(shown, key=lambda entry: finding_order(*entry)) == [
        ("host", "HOST-F1"), ("host", "HOST-F2"), ("host", "HOST-F3"), ("host", "HOST-F10"), ("host", None),
        ("wake-gate", "WAKE-F1")]


def test_the_findings_report_names_each_finding_once_in_its_summary(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["findings", "--machine", "wake-gate", "--workers", "1"]) == 0
    one_process = capsys.readouterr().out
    assert main(["findings", "--machine", "wake-gate"]) == 0  # its explorations on every core
    lines = capsys.readouterr().out.splitlines()
    assert lines == one_process.splitlines()
    headers = [line.split(" [")[0] for line in lines if " [wake-gate] " in line]
    assert headers == ["WAKE-F1", "WAKE-F2", "WAKE-F3", "WAKE-F4", "forever"]
    assert lines[-1] == ("findings: 4 (WAKE-F1, WAKE-F2, WAKE-F3, WAKE-F4); shown as properties: 4/4 as "
                         "expected; forever-properties: 1/1 as expected")


def test_explore_prints_the_bounds_it_derives_apart_from_those_bound_sets(
        capsys: pytest.CaptureFixture[str]) -> None:
    """A newcomer's review: `boundaries` was printed among the bounds, and --bound boundaries=5 then
    failed as an unknown bound."""
    assert main(["explore", "wake-gate"]) == 0
    (line,) = [line for line in capsys.readouterr().out.splitlines() if line.startswith("bounds: ")]
    settable, _, derived = line.removeprefix("bounds: ").partition("  derived from them: ")
    assert set(ast.literal_eval(settable)) == set(machines.get("wake-gate").explorer.default_bounds)
    assert "'boundaries'" in derived and "'boundaries'" not in settable


def test_an_emitted_file_replaces_a_link_or_a_file_and_a_pipe_is_written_as_opened(tmp_path: Path) -> None:
    """`--emit-case` wrote in place: a link at its name took the write to the link's target, and a full
    disk left half a file where the earlier one was (found by an attack on the commands). A file or a
    link to one is replaced in one rename now; a device or a pipe the user means is written as opened."""
    victim = tmp_path / "victim.json"
    victim.write_text("precious", encoding="utf-8")
    emitted = tmp_path / "emitted.json"
    emitted.symlink_to(victim)
    argv = ["explore", "wake-gate", "--invariant", "every_refusal_episode_is_announced", "--emit-itf"]
    assert main([*argv, str(emitted)]) == 0
    assert victim.read_text(encoding="utf-8") == "precious" and not emitted.is_symlink()
    assert "states" in json.loads(emitted.read_text(encoding="utf-8"))
    reading, writing = os.pipe()
    try:
        os.set_blocking(reading, False)
        assert main([*argv, f"/proc/self/fd/{writing}"]) == 0  # a pipe: written through its name
        assert b'"states"' in os.read(reading, 1 << 20)
    finally:
        os.close(reading)
        os.close(writing)


def test_an_inbox_refresh_job_named_twice_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    """`--bound jobs=result,result,...` a thousand times over made each refinement step a thousand times
    as long, which the step limit does not bound (found by an attack on the commands): each job at most
    once, so the catalogue bounds the jobs."""
    many = ",".join(["result"] * 1000)
    assert main(["refine", "inbox-refresh", "--depth", "1", "--bound", f"jobs={many}", "--json"]) == 2
    assert "jobs are distinct names" in json.loads(capsys.readouterr().out)["unusable"]
    assert main(["explore", "inbox-refresh", "--bound", "jobs=result,moved", "--json"]) in (0, 1)


def test_an_emitted_case_to_dev_stdout_redirected_into_a_log_is_appended(tmp_path: Path) -> None:
    """`--emit-case /dev/stdout` with stdout appended to a log (`>> log`): it was refused, exit 2, since
    a descriptor's name lies in /dev (found by the attack on the fixes); it is written as opened,
    appended, and the log keeps what it held."""
    log = tmp_path / "log"
    log.write_text("earlier\n", encoding="utf-8")
    with log.open("ab") as stream:
        done = subprocess.run([sys.executable, "-m", "inboxspec", "explore", "wake-gate", "--invariant",
                               "every_refusal_episode_is_announced", "--emit-case", "/dev/stdout"],
                              stdout=stream, stderr=subprocess.PIPE, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    text = log.read_text(encoding="utf-8")
    assert text.startswith("earlier\n") and '"wake-gate/counterexample-every-refusal-episode' in text
