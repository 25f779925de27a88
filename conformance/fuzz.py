"""``inboxspec conform --fuzz N --seed S``: random differential testing of a port.

Fixed cases can be looked up: an adapter that reads the bundled case files
and replays their expectations passes them all with no implementation at
all. Fuzzing sends traces that exist nowhere else. For every machine in the
registry that the adapter implements, ``N`` random cases come from the
machine's own generator (``Machine.fuzz``), the reference implementation
computes their expected outputs at run time (``Machine.run_case``), and they
go to the adapter as ordinary ``run`` requests under fresh ids.

Everything is deterministic for a seed: each machine's generator gets its own
``random.Random`` seeded from the seed and the machine's name, and shrinking
tries candidates in a fixed order.

A failing case is shrunk before it is reported, generically, by re-running
the reference for every candidate and asking the adapter again:

1. delta debugging on the step list (Zeller's ddmin: drop chunks of steps,
   halving the chunk size until no single step can go, keeping at least one);
2. simplifying values: drop a config key, drop a list element inside a
   step's arguments, replace an integer by 0 or by its half, a text by "".

A candidate is kept when the port still disagrees with the reference on it in
the same way (:func:`signature`: the same event and kind of expected output).
The shrunk trace is printed as a case file ready to commit (PROTO-FUZZ-3).
Nothing here names a machine's own vocabulary; the one convention it reads is
the frame's: finding options live in ``config["options"]`` and their feature
tags are ``option:<name>``.
"""

from __future__ import annotations

import copy
import json
import random
import re
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from inboxspec.conformance.casefiles import (
    Case,
    CaseFileError,
    case_files,
    read_case_file,
    replies_past_the_bound,
)
from inboxspec.conformance.interrupts import RunInterrupted, raise_if_interrupted
from inboxspec.conformance.progress import Progress
from inboxspec.conformance.runner import (
    ERROR,
    FAIL,
    SKIP,
    CaseResult,
    Coverage,
    EndedMidRun,
    RunReport,
    Session,
    UnusableRun,
    end_session,
    run_cases,
    unknown_listings,
    unsupported_reason,
)
from inboxspec.machines import interface
from inboxspec.spec import index as spec_index

# Candidate runs allowed while shrinking one failure (each is one round trip).
DEFAULT_SHRINK_BUDGET = 1000
# Wall-clock cap on shrinking one failure: an adapter that hangs on every
# candidate costs a --timeout each. Shrinking is deterministic unless this cap
# cuts it short, which the report then says (``cut_short``).
DEFAULT_SHRINK_SECONDS = 120.0
# Failures shrunk and printed per machine; the rest are listed by id.
SHRUNK_PER_MACHINE = 1

CaseRunner = Callable[[Mapping[str, Any], Sequence[Mapping[str, Any]]], dict[str, Any]]
Generator = Callable[[random.Random], tuple[dict[str, Any], list[dict[str, Any]]]]


class FuzzTarget(Protocol):
    """What fuzzing needs of a registry entry (``inboxspec.machines.frame.Machine``)."""

    @property
    def name(self) -> str: ...
    @property
    def features(self) -> tuple[str, ...]: ...
    @property
    def run_case(self) -> CaseRunner: ...
    @property
    def fuzz(self) -> Generator: ...
    @property
    def cases(self) -> Path: ...
    @property
    def generated_cases(self) -> Path: ...


def machine_rng(seed: int, machine: str) -> random.Random:
    # A string seed is hashed with SHA-512 by random.seed: stable across runs and
    # Python versions, and independent of PYTHONHASHSEED.
    return random.Random(f"inboxspec-fuzz:{seed}:{machine}")


def features_of(target: FuzzTarget, config: Mapping[str, Any]) -> tuple[str, ...]:
    options = config.get("options")
    if not isinstance(options, Mapping):
        return ()
    return tuple(tag for tag in interface.features_for_options(options) if tag in target.features)


def expected_case(target: FuzzTarget, case_id: str, description: str, config: dict[str, Any],
                  steps: Sequence[Mapping[str, Any]], source: str) -> Case:
    """A case whose expectations are the reference's outputs for these inputs, now."""
    inputs = [{k: copy.deepcopy(v) for k, v in s.items() if k in ("event", "args")} for s in steps]
    result = target.run_case(copy.deepcopy(config), copy.deepcopy(inputs))
    config_error = result.get("config_error")
    with_expect = [] if config_error is not None else [
        {**step, "expect": output} for step, output in zip(inputs, result["outputs"], strict=True)]
    return Case(machine=target.name, id=case_id, description=description, requirements=(),
                features=features_of(target, config), config=copy.deepcopy(config),
                steps=tuple(with_expect) if config_error is None else tuple(inputs),
                expect_config_error=config_error, source=source)


@dataclass
class Shrunk:
    """One failure, shrunk: the original and the minimal trace, as a committable case file."""

    original: CaseResult
    result: CaseResult
    original_steps: int
    candidates_tried: int
    case_file: dict[str, Any]
    cut_short: bool = False
    # Whether the shrunk case, sent once more after shrinking, failed the same way again; None when
    # --shrink-seconds ran out before that one more run ended.
    confirmed: bool | None = None

    def as_json(self) -> dict[str, Any]:
        return {"failure": self.original.case.id, "detail": self.result.detail,
                "original_steps": self.original_steps, "steps": len(self.result.case.steps),
                "candidates_tried": self.candidates_tried, "cut_short": self.cut_short,
                "confirmed": self.confirmed, "case_file": self.case_file}


@dataclass
class FuzzRun:
    results: list[CaseResult] = field(default_factory=list)
    shrunk: list[Shrunk] = field(default_factory=list)
    # The signal that ended the run early (PROTO-SIG-1); results and shrunk are those so far.
    interrupted: str | None = None
    # The failed restart that ended the run early (PROTO-RUN-6); results and shrunk are those so far.
    unusable: str | None = None


class _Sender:
    """Sends one-off cases through the session under fresh sequence numbers."""

    def __init__(self, session: Session, timeout: float, window: int, first_seq: int,
                 progress: Progress | None = None) -> None:
        self.session = session
        self.timeout = timeout
        self.window = window
        self.seq = first_seq
        self.progress = progress  # told of each result of a run with ``shown=True``
        # Where in the run's reported results each seq's result went, over every call: a duplicate
        # reply to a case of an earlier call (PROTO-RUN-4) replaces that case's result there.
        self.reported: list[CaseResult] | None = None
        self.position: dict[int, int] = {}

    def run(self, cases: list[Case], reported: list[CaseResult] | None = None,
            shown: bool = False) -> list[CaseResult]:
        """The results in the cases' order; with ``reported``, each is also appended there
        as soon as it and every case before it are known, so an interrupted run keeps them."""
        results = self._results(cases, reported, shown)
        return [results[seq] for seq in sorted(results)]

    def one(self, case: Case, timeout: float | None, deadline: float) -> CaseResult | None:
        """``case``'s result, waited for ``timeout`` seconds in place of the run's when given; None
        when ``deadline`` (``time.monotonic()``) passed first (``run_cases``)."""
        results = self._results([case], None, False, timeout, deadline)
        return next(iter(results.values()), None)

    def _results(self, cases: list[Case], reported: list[CaseResult] | None, shown: bool,
                 timeout: float | None = None, deadline: float | None = None) -> dict[int, CaseResult]:
        work = []
        for case in cases:
            self.seq += 1
            work.append((self.seq, case))
        if reported is not None:
            self.reported = reported
        results: dict[int, CaseResult] = {}
        position = self.position
        sent = {seq for seq, _ in work}
        next_index = 0
        for seq, result in run_cases(self.session, work, self.timeout if timeout is None else timeout,
                                     self.window, deadline=deadline):
            if seq in position and self.reported is not None:  # a duplicate reply blamed a reported case
                self.reported[position[seq]] = result
            if seq not in sent:
                continue  # a case of an earlier call (a shrink candidate's is reported nowhere)
            results[seq] = result
            if shown and self.progress is not None:
                self.progress.finished(result.case.machine, result.case.id)
            if reported is None or seq in position:
                continue
            while next_index < len(work) and work[next_index][0] in results:
                position[work[next_index][0]] = len(reported)
                reported.append(results[work[next_index][0]])
                next_index += 1
        return results


def fuzz(session: Session, targets: Sequence[FuzzTarget], count: int, seed: int, *,
         timeout: float, window: int, without_features: Sequence[str] = (),
         shrink_budget: int = DEFAULT_SHRINK_BUDGET,
         shrink_seconds: float = DEFAULT_SHRINK_SECONDS, progress: Progress | None = None) -> FuzzRun:
    """Run ``count`` random cases per target through the adapter and shrink failures.

    A signal ends it early (PROTO-SIG-1), as does an adapter that does not start again after a
    fault and a fixture that cannot be laid out (PROTO-RUN-6, PROTO-FIX-1): the run holds every
    result reported so far, and the failure being shrunk is reported unshrunk.
    """
    run = FuzzRun()
    try:
        _fuzz_targets(run, session, targets, count, seed, timeout, window, without_features,
                      shrink_budget, shrink_seconds, progress)
    except RunInterrupted as interruption:
        run.interrupted = interruption.signal_name
    except EndedMidRun as failure:
        run.unusable = str(failure)
    return run


def _fuzz_targets(run: FuzzRun, session: Session, targets: Sequence[FuzzTarget], count: int,
                  seed: int, timeout: float, window: int, without_features: Sequence[str],
                  shrink_budget: int, shrink_seconds: float, progress: Progress | None) -> None:
    sender = _Sender(session, timeout, window, first_seq=0, progress=progress)
    for target in sorted(targets, key=lambda t: t.name):
        rng = machine_rng(seed, target.name)
        cases = []
        for index in range(1, count + 1):
            raise_if_interrupted()  # generating many cases takes a while: a signal ends it too
            try:
                config, steps = target.fuzz(rng)
                cases.append(expected_case(target, f"{target.name}/fuzz-{seed}-{index}",
                                           f"Random trace {index} of conform --fuzz --seed {seed}",
                                           config, steps, f"fuzz seed {seed}"))
            except Exception as error:  # a bug of inboxspec's own, not of the port
                raise UnusableRun(f"{target.name}: the generator or the reference failed on random "
                                  f"case {index} of seed {seed}: {type(error).__name__}: {error}") from error
        # PROTO-FRAME-3, as for bundled cases: a case that no reply within --max-line-bytes can pass is
        # refused, not sent (the adapter was blamed, restarted, and the case shrunk as a failure). Each
        # is measured at the largest sequence number it could be sent as.
        last_seq = sender.seq + len(cases)
        too_long = replies_past_the_bound(((last_seq, case) for case in cases), session.max_line_bytes)
        if too_long:
            raise UnusableRun(too_long[0], too_long)
        to_send = []
        for case in cases:
            reason = unsupported_reason(session, case, without_features)
            if reason is None:
                to_send.append(case)
            else:
                run.results.append(CaseResult(case, SKIP, reason))
                if progress is not None:
                    progress.finished(target.name, case.id)
        results = sender.run(to_send, reported=run.results, shown=True)
        failures = [r for r in results if r.outcome in (FAIL, ERROR)]
        for failure in failures[:SHRUNK_PER_MACHINE]:
            if progress is not None:
                progress.set_phase(f"shrinking {failure.case.id}")
            run.shrunk.append(_shrink(sender, target, failure, seed, shrink_budget, shrink_seconds))
            if progress is not None:
                progress.set_phase("")


def signature(result: CaseResult) -> tuple[Any, ...]:
    """What kind of disagreement a result is, so that shrinking keeps to one kind.

    A failed step is known by its event and the non-numeric part of its
    expected output (``{"announce": false}``, ``{"error": "invalid_batch"}``):
    without this, dropping arguments would trade the bug being shrunk for
    another one found on the way.
    """
    if result.outcome == FAIL:
        match = FAILING_STEP.match(result.detail)
        if match is not None and int(match[1]) < len(result.case.steps):
            step = result.case.steps[int(match[1])]
            return FAIL, step["event"], json.dumps(_shape(step["expect"]), sort_keys=True)
        return FAIL, result.detail.split(" ", 1)[0]
    return result.outcome, result.detail.split(":", 1)[0]


@dataclass
class _Budget:
    candidates: int
    deadline: float
    cut_short: bool = False

    def spend(self) -> bool:
        if self.candidates <= 0:
            return False
        if time.monotonic() > self.deadline:
            self.cut_short = True
            return False
        self.candidates -= 1
        return True


def _still_failing(sender: _Sender, target: FuzzTarget, original: Case, budget: _Budget,
                   wanted: tuple[Any, ...], config: dict[str, Any],
                   steps: list[dict[str, Any]]) -> CaseResult | None:
    if not budget.spend():
        return None
    try:
        case = expected_case(target, f"{original.id}-shrink-{budget.candidates}",
                             original.description, config, steps, original.source)
    except Exception:  # the reference defines no output for this input: not a candidate
        return None
    result = _within_the_cap(sender, budget, case)
    return result if result is not None and result.outcome in (FAIL, ERROR) \
        and signature(result) == wanted else None


def _within_the_cap(sender: _Sender, budget: _Budget, case: Case) -> CaseResult | None:
    """``case``'s result, run no longer than what is left of --shrink-seconds (PROTO-FUZZ-3); None,
    and the shrinking cut short, when the cap's time ran out first. Checked only between candidates,
    the cap was overrun by a whole --timeout (found by an attack helper). A case that times out
    under the cap's shorter time shows nothing: the timeout is the cap's, not the port's."""
    left = budget.deadline - time.monotonic()
    if left <= 0:
        budget.cut_short = True
        return None
    capped = left < sender.timeout
    result = sender.one(case, left if capped else None, budget.deadline)
    if result is None or (capped and result.fault in ("timeout", "fixture-timeout")):
        budget.cut_short = True
        return None
    return result


def _ddmin(fails: Callable[[list[dict[str, Any]]], CaseResult | None],
           steps: list[dict[str, Any]], result: CaseResult) -> tuple[list[dict[str, Any]], CaseResult]:
    chunks = 2
    while len(steps) >= 2:
        size = -(-len(steps) // chunks)
        for start in range(0, len(steps), size):
            candidate = steps[:start] + steps[start + size:]
            found = fails(candidate)
            if found is not None:
                steps, result = candidate, found
                chunks = max(chunks - 1, 2)
                break
        else:
            if chunks >= len(steps):
                break
            chunks = min(chunks * 2, len(steps))
    return steps, result


def _simpler_values(value: Any) -> Iterator[tuple[tuple[Any, ...], Any]]:
    """(path, replacement) pairs, each a one-point simplification inside a JSON value.

    A path ending in ``DROP`` removes the element or key before it; otherwise the
    value at the path is replaced. Removals come first, then simpler values.
    """
    if isinstance(value, dict):
        for key in value:
            yield (key, DROP), None
        for key in value:
            for path, new in _simpler_values(value[key]):
                yield (key, *path), new
    elif isinstance(value, list):
        for index in range(len(value)):
            yield (index, DROP), None
        for index, item in enumerate(value):
            for path, new in _simpler_values(item):
                yield (index, *path), new
    elif value is True:
        yield (), False
    elif type(value) is int and value != 0:
        yield (), 0
        if abs(value) > 1:
            yield (), value // 2
    elif isinstance(value, str) and value:
        yield (), ""


DROP = ("drop",)


def _apply(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    """A copy of ``value`` with one simplification from :func:`_simpler_values` applied."""
    if not path:
        return new
    value = copy.deepcopy(value)
    dropping = path[-1] == DROP
    *head, last = path[:-1] if dropping else path
    parent = value
    for key in head:
        parent = parent[key]
    if dropping:
        del parent[last]
    else:
        parent[last] = new
    return value


def _simplify(fails: Callable[[dict[str, Any], list[dict[str, Any]]], CaseResult | None],
              config: dict[str, Any], steps: list[dict[str, Any]],
              result: CaseResult) -> tuple[dict[str, Any], list[dict[str, Any]], CaseResult]:
    """One-point simplifications of the config and of each step's arguments, to a fixpoint."""
    changed = True
    while changed:
        changed = False
        for path, new in list(_simpler_values(config)):
            try:
                smaller = _apply(config, path, new)
            except (KeyError, IndexError, TypeError):
                continue  # an earlier simplification removed this place
            found = fails(smaller, steps)
            if found is not None:
                config, result, changed = smaller, found, True
        for index in range(len(steps)):
            args = steps[index].get("args")
            if not isinstance(args, dict):
                continue
            for path, new in list(_simpler_values(args)):
                try:
                    new_args = _apply(steps[index]["args"], path, new)
                except (KeyError, IndexError, TypeError):
                    continue
                candidate = [*steps[:index], {**steps[index], "args": new_args}, *steps[index + 1:]]
                found = fails(config, candidate)
                if found is not None:
                    steps, result, changed = candidate, found, True
    return config, steps, result


def _shrink(sender: _Sender, target: FuzzTarget, failure: CaseResult, seed: int,
            budget_total: int, seconds: float) -> Shrunk:
    original = failure.case
    budget = _Budget(budget_total, time.monotonic() + seconds)
    config = copy.deepcopy(original.config)
    steps = [{k: v for k, v in s.items() if k in ("event", "args")} for s in original.steps]

    wanted = signature(failure)

    def fails_steps(candidate: list[dict[str, Any]]) -> CaseResult | None:
        return _still_failing(sender, target, original, budget, wanted, config, candidate)

    def fails_both(new_config: dict[str, Any], candidate: list[dict[str, Any]]) -> CaseResult | None:
        return _still_failing(sender, target, original, budget, wanted, new_config, candidate)

    result = failure
    try:
        while True:  # a simpler value can make a step droppable, and the other way round
            before = (config, steps)
            steps, result = _ddmin(fails_steps, steps, result)
            config, steps, result = _simplify(fails_both, config, steps, result)
            if (config, steps) == before or budget.candidates <= 0 or budget.cut_short:
                break
        # Sent once more (PROTO-FUZZ-3): a port that fails a case only sometimes had a candidate kept
        # on one failure, and was handed a "still failing" case that mostly passed (found by an
        # attack helper).
        replay = expected_case(target, f"{original.id}-replay", original.description, config, steps,
                               original.source)
        again = _within_the_cap(sender, budget, replay)
    except EndedMidRun as error:
        # The candidate it names is in no report: name the failure being shrunk.
        raise EndedMidRun(f"while shrinking {original.id}: {error}") from error
    confirmed = None if again is None else again.outcome in (FAIL, ERROR) and signature(again) == wanted
    final = expected_case(target, f"{original.id}", original.description, config, steps,
                          original.source)
    shrunk = CaseResult(final, result.outcome, result.detail, fault=result.fault)
    return Shrunk(failure, shrunk, len(original.steps),
                  budget_total - budget.candidates, case_file(target, final, seed, result.detail),
                  budget.cut_short, confirmed)


FAILING_STEP = re.compile(r"^step (\d+) ")


def case_file(target: FuzzTarget, case: Case, seed: int, detail: str) -> dict[str, Any]:
    """The shrunk case as a case file that ``cases lint`` accepts, ready to commit.

    It cites the requirements of the generated transition cases that end in the
    same event with the same non-numeric outputs as the failing step: the spec
    rules that decide that output. A case that reduces to a config error cites
    what every bundled case expecting that config error cites. It never cites a
    placeholder: failing all else, the machine's bundled cases of that event,
    then the spec's first requirement (PROTO-FUZZ-3; a reviewer checks them).
    """
    entry: dict[str, Any] = {
        "id": case.id,
        "description": f"Random trace {case.id.rsplit('-', 1)[-1]} of conform --fuzz --seed {seed}"
                       " replays with exact outputs",
        "requirements": _citations(target, case, detail) or _fallback_citations(target, case),
    }
    if case.features:
        entry["features"] = list(case.features)
    entry["config"] = case.config
    if case.expect_config_error is not None:
        entry["expect_config_error"] = case.expect_config_error
        entry["steps"] = []
    else:
        entry["steps"] = list(case.steps)
    return {"machine": target.name, "cases": [entry]}


def _shape(output: Any) -> Any:
    if isinstance(output, dict):
        return {k: v for k, v in output.items() if type(v) is not int}
    return output


def _bundled_cases(target: FuzzTarget) -> list[Case]:
    cases: list[Case] = []
    for path in case_files([target.cases]):
        try:
            cases.extend(read_case_file(path))
        except CaseFileError:
            continue  # lint names it; citations come from the files that read
    return cases


def _config_error_citations(target: FuzzTarget, code: str) -> list[str]:
    """The requirements that every bundled case expecting this config error cites (else any cites)."""
    alike = [c.requirements for c in _bundled_cases(target) if c.expect_config_error == code]
    if not alike:
        return []
    common = [r for r in alike[0] if all(r in other for other in alike[1:])]
    return common or sorted({r for requirements in alike for r in requirements})


def _fallback_citations(target: FuzzTarget, case: Case) -> list[str]:
    events = {step["event"] for step in case.steps}
    cited: list[str] = []
    for bundled in _bundled_cases(target):
        if events & {step.get("event") for step in bundled.steps}:
            cited.extend(r for r in bundled.requirements if r not in cited)
    return cited or spec_index.requirements(target.name)[:1]


def _citations(target: FuzzTarget, case: Case, detail: str) -> list[str]:
    if case.expect_config_error is not None:
        return _config_error_citations(target, case.expect_config_error)
    if not case.steps:
        return []
    match = FAILING_STEP.match(detail)
    index = int(match[1]) if match else len(case.steps) - 1
    step = case.steps[min(index, len(case.steps) - 1)]
    try:
        generated = json.loads(target.generated_cases.read_text(encoding="utf-8"))["cases"]
    except (OSError, ValueError, KeyError, TypeError):
        return []
    same_event = [c for c in generated if c.get("steps") and c["steps"][-1].get("event") == step["event"]]
    same_shape = [c for c in same_event if _shape(c["steps"][-1].get("expect")) == _shape(step["expect"])]
    cited: list[str] = []
    for source in same_shape or same_event:
        cited.extend(r for r in source.get("requirements", []) if r not in cited)
    return cited


def conform_fuzz(command: str, targets: Sequence[FuzzTarget], count: int, seed: int, *,
                 timeout: float, start_timeout: float, max_line_bytes: int, window: int,
                 without_features: Sequence[str] = (), coverage: Coverage | None = None,
                 shrink_budget: int = DEFAULT_SHRINK_BUDGET,
                 shrink_seconds: float = DEFAULT_SHRINK_SECONDS, progress: bool = False,
                 seed_drawn: bool = False) -> RunReport:
    """The fuzz run as a report like any other, with the shrunk failures under ``fuzz``.

    ``seed_drawn`` says that no ``--seed`` was given and the seed was drawn at
    random for this run (PROTO-FUZZ-4); the report carries it either way.
    """
    began = time.monotonic()
    session = Session(command, start_timeout, max_line_bytes)
    session.start()
    shown = Progress({t.name: count for t in targets}, enabled=progress)
    run = FuzzRun()
    try:
        shown.start()
        run = fuzz(session, targets, count, seed, timeout=timeout, window=window,
                   without_features=without_features, shrink_budget=shrink_budget,
                   shrink_seconds=shrink_seconds, progress=shown)
    finally:
        shown.close()
        # The fixture directories of every case sent are removed here too (PROTO-FIX-1).
        end_session(session, interrupted=run.interrupted is not None)
    extra = {"fuzz": {"seed": seed, "seed_drawn": seed_drawn, "count": count,
                      "shrunk": [s.as_json() for s in run.shrunk]}}
    # What the start listed that nothing knows, and what the end found (PROTO-START-1, PROTO-STOP-1),
    # as a run of bundled cases reports them: a fuzz report dropped both.
    warnings = unknown_listings(session, [result.case for result in run.results]) + session.stop_warnings
    return RunReport(session.implementation, run.results, session.restarts,
                     time.monotonic() - began, coverage or Coverage(),
                     tuple(sorted(t.name for t in targets)), extra, interrupted=run.interrupted,
                     unusable=run.unusable, warnings=warnings)
