"""Explorer traces as people and other tools read them: text, conformance cases, ITF.

A trace is a list of steps ``(pre, action, post, output)`` from the explorer.
Turning it into a case needs concrete inputs (the machine's ``concretize``)
and exact expected outputs. Those come from the reference implementation:
a counterexample found in a (possibly broken) model then pins the behaviour
the spec asks for along the trace that broke it. Where the model's own
outputs differ from the reference's, ``model_disagreements`` says at which
steps.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from inboxspec import machines
from inboxspec.checker.forked import ScratchUnavailable
from inboxspec.conformance.compare import canonical
from inboxspec.machines.fixtures import FixtureError
from inboxspec.machines.frame import Bounds, Explorer, Step, readable_trace
from inboxspec.machines.interface import json_key, rememberable


def show(value: Any) -> str:
    """A snapshot field as a reader sees it: named tuples by field name, the rest as Python writes it."""
    names = getattr(value, "_fields", None)
    if isinstance(value, tuple) and names is not None:
        return "(" + ", ".join(f"{name}={show(item)}" for name, item in zip(names, value, strict=True)) + ")"
    if isinstance(value, (tuple, list)):
        return "[" + ", ".join(show(item) for item in value) + "]"
    return repr(value)


def changes(variables: Sequence[str], before: Sequence[Any], after: Sequence[Any]) -> str:
    """The control state after a step, then each other field the step changed, by name: a named
    tuple's changes field by field within it (the host's ``s2.gate.streak=1``), anything else whole."""
    changed: list[str] = []
    for name, old, new in zip(variables[1:], before[1:], after[1:], strict=True):
        _changed(name, old, new, changed)
    return f"{after[0]}" + (": " + ", ".join(changed) if changed else "")


def _changed(path: str, old: Any, new: Any, changed: list[str]) -> None:
    if old == new:
        return
    names = getattr(new, "_fields", None)
    if names is not None and type(old) is type(new):
        for name, old_item, new_item in zip(names, old, new, strict=True):
            _changed(f"{path}.{name}", old_item, new_item, changed)
        return
    changed.append(f"{path}={show(new)}")


def describe(trace: list[Step], variables: Sequence[str]) -> list[str]:
    """One line per step, in the spec's event names: what the step changed in the state, by field
    name (``variables``), and the chart's output. A trace starts from the machine's initial state."""
    lines = []
    for number, (pre, action, post, output) in enumerate(trace, start=1):
        shown = "" if output is None else "  -> " + json.dumps(output, sort_keys=True)
        lines.append(f"{number:>3}. {action.label:<26} {changes(variables, pre, post)}{shown}")
    return lines


def describe_lasso(prefix: list[Step], loop: list[Step], variables: Sequence[str]) -> list[str]:
    """A lasso as lines: the prefix's steps, then the loop's, numbered on, between two markers.

    The loop's last step returns to the state its first step leaves, so the
    loop repeats forever; the prefix is empty when the cycle passes through the
    initial state.
    """
    lines = describe([*prefix, *loop], variables)
    first = len(prefix) + 1
    lines.insert(len(prefix), f"     -- loop: steps {first}-{len(prefix) + len(loop)} repeat forever --")
    lines.append(f"     -- back to the state before step {first} --")
    return lines


def trace_lines(explorer: Explorer, trace: list[Step], bounds: Bounds,
                options: Mapping[str, bool]) -> list[str]:
    """A shortest trace of an exploration at ``bounds`` with ``options``, as people read it: the
    explorer's readable form of it (``frame.readable_trace``), ``describe``d."""
    readable = readable_trace(explorer, trace, bounds, options)
    return describe(readable.steps, readable.variables)


def lasso_lines(explorer: Explorer, prefix: list[Step], loop: list[Step], bounds: Bounds,
                options: Mapping[str, bool]) -> list[str]:
    """A lasso of an exploration, as ``trace_lines`` shows a trace (``describe_lasso``).

    Its loop returns to the state it starts from as the explorer's snapshots see it. The readable
    form may read that state otherwise; the last line then says how: the parts it names otherwise
    (the host's sessions, which play each other's parts in the next round, by the symmetry its
    search reduces by), or, where it names them alike, that the two states differ only in what the
    snapshots leave out (the host's subscription ids, numbered anew in each snapshot)."""
    readable = readable_trace(explorer, [*prefix, *loop], bounds, options)
    shown = readable.steps
    lines = describe_lasso(shown[:len(prefix)], shown[len(prefix):], readable.variables)
    start = len(prefix) + 1
    if readable.names is not None and readable.names[len(prefix)] != readable.names[-1]:
        then, now = readable.names[len(prefix)], readable.names[-1]
        places = " and ".join(f"{now[name]} in {then[name]}'s place" for name in sorted(then)
                              if now[name] != then[name])
        lines[-1] = f"     -- back to the state before step {start}, with {places} --"
    elif shown[-1][2] != shown[len(prefix)][0]:
        lines[-1] = (f"     -- back to the state before step {start}, up to what the explorer's "
                     f"snapshots leave out --")
    return lines


def concrete_steps(explorer: Explorer, trace: list[Step], bounds: Bounds,
                   options: Mapping[str, bool]) -> list[dict[str, Any]]:
    """A trace of an exploration at ``bounds`` with ``options`` as case steps (``concretize``)."""
    return explorer.concretize([(pre, a, post) for pre, a, post, _ in trace], bounds, options)


# How much of an exception's message a report shows (``described_error``).
SHOWN_ERROR_CHARS = 300


def described_error(error: BaseException) -> str:
    """``error`` as one bounded line: its type, then the start of its message."""
    try:
        text = " ".join(str(error).split())
    except Exception:  # an exception whose message cannot be made is shown by its type
        text = ""
    if len(text) > SHOWN_ERROR_CHARS:
        text = text[:SHOWN_ERROR_CHARS] + "..."
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


class NoReferenceOutputs(ValueError):
    """The reference gave no outputs for a trace (``to_case``): it rejected the config, or raised."""


class Replays:
    """Case runs remembered for one run of ``check``: each (machine, config, steps) runs once
    on the reference and once on the model, however many checks replay it (the case files,
    then the generated cases regenerated to compare with them). A result is shared between
    the callers that ask for it: read it, never change it. Inputs that ``json_key`` cannot
    tell apart exactly are run every time.

    A side that raises gives ``{"raised": <the exception in one line>}``, a result with no
    outputs: the case it replays fails (``first_difference`` shows it), as a port's would
    that answered so, instead of the whole check ending in a traceback. Only a fixture that
    cannot be laid out is raised on: the check could not be made at all."""

    def __init__(self) -> None:
        self._runs: dict[tuple[str, str, Any], dict[str, Any]] = {}

    def reference(self, machine: str, config: Mapping[str, Any],
                  steps: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        return self._run("reference", machine, config, steps)

    def model(self, machine: str, config: Mapping[str, Any],
              steps: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        return self._run("model", machine, config, steps)

    def _run(self, side: str, machine: str, config: Mapping[str, Any],
             steps: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        entry = machines.get(machine)
        runner = entry.run_case if side == "reference" else entry.run_model_case
        inputs = json_key([config, list(steps)])
        if inputs is None:
            return run_side(runner, config, steps)
        key = (side, machine, inputs)
        if key not in self._runs:
            result = run_side(runner, config, steps)
            if not rememberable([config, list(steps)]):  # see json_key's WARNING
                return result
            self._runs[key] = result
        return self._runs[key]


def run_side(runner: Any, config: Mapping[str, Any], steps: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """``runner(config, steps)``, the reference's or the model's run of a case; ``{"raised": ...}``
    when it raises (see ``Replays``)."""
    try:
        result: dict[str, Any] = runner(config, steps)
    except (FixtureError, ScratchUnavailable):
        raise
    except Exception as error:  # the reference or the model is wrong on these steps (see Replays)
        return {"raised": described_error(error)}
    return result


def to_case(machine: str, case_id: str, description_text: str, requirements: list[str],
            config: dict[str, Any], steps: list[dict[str, Any]],
            features: list[str] | None = None, replays: Replays | None = None) -> dict[str, Any]:
    """A case whose expectations are the reference implementation's outputs."""
    result = (replays or Replays()).reference(machine, config, steps)
    if "outputs" not in result:
        raise NoReferenceOutputs(f"{case_id}: the reference gives no outputs for config "
                                 f"{canonical(config)[:200]}: {canonical(result)[:400]}")
    case: dict[str, Any] = {"id": case_id, "description": description_text,
                            "requirements": requirements}
    if features:
        case["features"] = features
    case["config"] = config
    case["steps"] = [{**step, "expect": expect}
                     for step, expect in zip(steps, result["outputs"], strict=True)]
    return case


def model_disagreements(machine: str, case: dict[str, Any], replays: Replays | None = None) -> list[int]:
    """Indices of steps where the model chart's output differs from the case's."""
    inputs = [{k: v for k, v in s.items() if k in ("event", "args")} for s in case["steps"]]
    modelled = (replays or Replays()).model(machine, case["config"], inputs).get("outputs")
    if not isinstance(modelled, list):  # the model raised or rejected the config: no step agrees
        return list(range(len(inputs)))
    return [i for i, (step, got) in enumerate(zip(case["steps"], modelled, strict=True))
            if canonical(step["expect"]) != canonical(got)]


def _itf_value(value: Any) -> Any:
    """ITF encodes integers as {"#bigint": "n"}, options as tagged records and named tuples as records."""
    if isinstance(value, (bool, str)):
        return value
    names = getattr(value, "_fields", None)
    if isinstance(value, tuple) and names is not None:
        return {name: _itf_value(item) for name, item in zip(names, value, strict=True)}
    if isinstance(value, int):
        return {"#bigint": str(value)}
    if value is None:
        return {"tag": "None", "value": {"#tup": []}}
    if isinstance(value, (list, tuple)):
        return [_itf_value(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _itf_value(v) for k, v in value.items()}
    raise TypeError(f"no ITF encoding for {type(value).__name__}")


def to_itf_lasso(machine: str, variables: tuple[str, ...], prefix: list[Step], loop: list[Step],
                 prop: str, initial: Any) -> dict[str, Any]:
    """A lasso in ITF: the prefix and the loop as one record per state, with ITF's ``loop``
    index naming the state the last record's successor returns to.

    The loop's last step leads back to ``states[loop]``, so, as ITF asks, that
    state is not repeated; the step that closes the loop is named in ``#meta``.
    """
    itf = to_itf(machine, variables, [*prefix, *loop[:-1]], prop, initial)
    itf["#meta"]["description"] = f"a cycle that breaks {prop}, repeated forever"
    itf["#meta"]["loop_closing_action"] = loop[-1][1].label
    itf["#meta"]["loop_closing_output"] = _itf_value(loop[-1][3] or {})
    itf["loop"] = len(prefix)
    return itf


def to_itf(machine: str, variables: tuple[str, ...], trace: list[Step], invariant: str,
           initial: Any) -> dict[str, Any]:
    """An ITF-style trace (Quint's Informal Trace Format): one record per state."""
    states = [{"#meta": {"index": 0}, **{v: _itf_value(x) for v, x in zip(variables, initial, strict=True)},
               "action": "init", "output": {}}]
    for index, (_pre, action, post, output) in enumerate(trace, start=1):
        record = {v: _itf_value(x) for v, x in zip(variables, post, strict=True)}
        states.append({"#meta": {"index": index}, **record, "action": action.label,
                       "output": _itf_value(output or {})})
    return {
        "#meta": {"format": "ITF", "format-description": "https://apalache-mc.org/docs/adr/015adr-trace.html",
                  "source": f"inboxspec explore {machine}", "description": f"violates {invariant}"},
        "vars": [*variables, "action", "output"],
        "states": states,
    }
