"""``inboxspec check``: the main job.

It lints the bundled cases, replays every case in-process against the
reference implementation, replays every valid-input case against the model
chart as well, and checks that the generated spec sections are current.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import sys
from collections import defaultdict
from collections.abc import Callable, Hashable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from inboxspec import machines
from inboxspec.checker import spec_sections
from inboxspec.checker.explore import Configuration, Explorations, available_cores, check_explorations
from inboxspec.checker.forked import ScratchUnavailable, WorkerLost
from inboxspec.checker.refine import RefinementLost, Refinements
from inboxspec.checker.traces import Replays
from inboxspec.conformance.casefiles import Case, lint, registered_case_dirs
from inboxspec.conformance.compare import first_difference, one_line
from inboxspec.conformance.interrupts import RunInterrupted, ending_after, raising_on_signals
from inboxspec.conformance.progress import Progress
from inboxspec.conformance.reportfile import print_json, print_whole
from inboxspec.conformance.runner import report_unusable
from inboxspec.machines.fixtures import FixtureError
from inboxspec.machines.frame import Machine
from inboxspec.spec import index as spec_index
from inboxspec.temporary import temporary_directories_in_memory


@dataclass
class MachineTally:
    requirements: int = 0
    cases: int = 0
    passed: int = 0
    failed: int = 0
    model_checked: int = 0
    model_failed: int = 0
    failures: list[str] = field(default_factory=list)


def _has_error_step(case: Case) -> bool:
    return case.expect_config_error is not None or any("error" in s["expect"] for s in case.steps)


def run_check(only: Sequence[str] | None = None, workers: int | None = None,
              explorations: Explorations | None = None, progress: Progress | None = None,
              refinements: Refinements | None = None) -> dict[str, Any]:
    """The main job over every registered machine, or over ``only`` those.

    The explorations and the refinements run in worker processes (``started_check``:
    ``workers``, by default every core this process may use, for the explorations, one
    more for the refinements) while this one lints and replays the cases; or they are
    taken from ``explorations`` and ``refinements``, memos the caller made (the tests
    share one), the refinements made here when the caller gives none.
    ``progress`` shows the cases replayed, the explorations made and the phase.
    """
    if only:
        with machines.only(only):
            return run_check(workers=workers, explorations=explorations, progress=progress,
                             refinements=refinements)
    shown = progress or Progress({}, enabled=False)
    if explorations is not None:
        return _run_check(explorations, shown, refinements or Refinements(REFINE_DEPTH))
    with started_check(workers, shown) as (memo, started):
        return _run_check(memo, shown, started)


@contextlib.contextmanager
def started_check(workers: int | None, progress: Progress,
                  on_explored: Callable[[Hashable], None] | None = None
                  ) -> Iterator[tuple[Explorations, Refinements]]:
    """The memos of one run of ``check``, their work begun on forked workers: every exploration it
    asks for (``check_configurations``) on ``workers`` processes (by default every core this
    process may use), and the refinements on one more (none with a single worker); each made in
    this process instead where processes cannot be forked. ``progress`` counts the explorations
    made, and ``on_explored(key)``, if given, is called as each is. The workers end on leaving."""
    configurations = check_configurations()
    usable = available_cores() if workers is None else workers

    def explored(key: Hashable) -> None:
        progress.finished("explorations", key)
        if on_explored is not None:
            on_explored(key)

    with rarer_young_collections(), check_explorations(on_explored=explored) as memo, \
            Refinements(REFINE_DEPTH) as refinements:
        progress.set_total("explorations", len({memo.key(c) for c in configurations}))
        memo.start(configurations, usable)
        refinements.start(refined_machines(), usable)
        yield memo, refinements


# How many allocations the check's processes make between two collections of the youngest
# generation (Python's default: 700). The refinements and the replays allocate many short-lived
# containers, and Python starts a full collection at most every hundred young ones (its other two
# thresholds), walking all the process holds: fewer young collections, fewer full ones. 10,000 took
# the five machines' check from 26.3 to 25.7 processor seconds (three runs of benchmarks/check_time.py
# each way, alternated); the explorations' searches gain nothing from it (they run no full collection).
YOUNG_COLLECTION_EVERY = 10_000


@contextlib.contextmanager
def rarer_young_collections() -> Iterator[None]:
    """The youngest generation collected every YOUNG_COLLECTION_EVERY allocations or less often,
    while inside (the workers forked meanwhile keep it); the caller's setting is put back on leaving."""
    thresholds = gc.get_threshold()
    if thresholds[0]:  # 0: automatic collection is off already
        gc.set_threshold(max(thresholds[0], YOUNG_COLLECTION_EVERY), *thresholds[1:])
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)


def check_configurations() -> list[Configuration]:
    """Every exploration the model checks ask for: each machine at its manifest's bounds,
    and at its default bounds with each option on; the largest (by manifest) first; then
    the coverage explorations of the generated cases, which are small."""
    from inboxspec.checker.generated_cases import sources
    from inboxspec.checker.manifest import sized_configurations

    sized = sized_configurations(lambda manifest: manifest.get("bounds", {}))
    sized += [(0, (entry.name, bounds, options))
              for entry in machines.all_machines() for bounds, options in sources(entry.name)[1]]
    sized.sort(key=lambda pair: -pair[0])
    return [configuration for _size, configuration in sized]


def refined_machines() -> list[str]:
    """The machines ``check`` refines: those with a manifest (a machine being added has none yet)."""
    from inboxspec.checker.manifest import ManifestError, load_manifest

    def has_manifest(entry: Machine) -> bool:
        try:
            return load_manifest(entry) is not None
        except ManifestError:  # not refined; the manifest check names the problem
            return False

    return [entry.name for entry in machines.all_machines() if has_manifest(entry)]


def _run_check(memo: Explorations, progress: Progress, refinements: Refinements) -> dict[str, Any]:
    progress.set_phase("linting the cases")
    report = lint(registered_case_dirs())
    # Each case run once per side: the generated cases, regenerated below to compare, are among these.
    replays = Replays()
    tallies: dict[str, MachineTally] = defaultdict(MachineTally)
    cases = report.loaded if report.ok else []
    progress.set_total("cases", len(cases))
    progress.set_phase("replaying the cases")
    for case in cases:
        progress.finished("cases", (case.source, case.id))
        tally = tallies[case.machine]
        tally.cases += 1
        actual = replays.reference(case.machine, case.config, case.inputs)
        difference = first_difference(case, actual)
        if difference is None:
            tally.passed += 1
        else:
            tally.failed += 1
            tally.failures.append(f"{case.id}: {difference}")
        if not _has_error_step(case):
            tally.model_checked += 1
            modelled = replays.model(case.machine, case.config, case.inputs)
            model_difference = first_difference(case, modelled)
            if model_difference is not None:
                tally.model_failed += 1
                tally.failures.append(f"{case.id} (model): {model_difference}")
    for machine in machines.names():
        tallies[machine].requirements = len(spec_index.requirements(machine))
    model_checks, findings = run_model_checks(memo, replays, progress, refinements)
    progress.set_phase("comparing the spec's generated sections")
    try:
        drift = [f"{d.document.name}: {d.section}"
                 for d in spec_sections.generate(write=False, findings=findings, explorations=memo)]
    except spec_sections.UnreadableDocument as error:  # a bundled document that cannot be read
        drift = [str(error)]
    ok = report.ok and not drift and not model_checks["problems"] and all(
        t.failed == 0 and t.model_failed == 0 and t.cases > 0 for t in tallies.values()
    )
    return {
        "ok": ok,
        "lint_problems": report.problems,
        "spec_drift": drift,
        "machines": {m: vars(t) for m, t in sorted(tallies.items())},
        "explorer": model_checks,
    }


def run_model_checks(memo: Explorations | None = None, replays: Replays | None = None,
                     progress: Progress | None = None,
                     refinements: Refinements | None = None) -> tuple[dict[str, Any], list[Any]]:
    """Default-bound exploration against the manifest, the findings, generated-case
    drift, and a shallow refinement of every machine; also the findings themselves,
    which the spec-drift check renders. The refinements are taken from ``refinements``
    (made on its worker while the caller replayed the cases), or made here."""
    from inboxspec.checker import projected_cases
    from inboxspec.checker.findings import check_findings, check_forever
    from inboxspec.checker.generated_cases import write_or_check
    from inboxspec.checker.manifest import check_manifest

    # The refinements first: they need no exploration, and their worker began them with the explorations.
    shown = progress or Progress({}, enabled=False)
    refinements = refinements or Refinements(REFINE_DEPTH)
    refinement_problems = []
    for name in refined_machines():
        shown.set_phase(f"refining {name}")
        refinement = refinements.get(name)
        if refinement.mismatch:
            refinement_problems.append(
                f"{name}: model and reference disagree: {' / '.join(refinement.mismatch)}")
    # Manifest, findings and generated cases share one memo: each distinct
    # (machine, bounds, options) is explored once per run.
    memo = memo or check_explorations()
    shown.set_phase("comparing the manifests")
    problems, explorations = check_manifest(memo)
    shown.set_phase("checking the findings")
    findings = check_findings(memo)
    problems += [f"{f.finding}: property {f.invariant} "
                 + ("holds by default" if not f.fails_by_default
                    else f"fails with {f.option}" if not f.holds_with_option
                    else f"fails by default, but its trace is no case: {f.case_problem}")
                 for f in findings if not f.ok]
    shown.set_phase("checking the forever-properties")
    cycles = check_forever(memo)
    problems += [f"{c.machine}: forever-property {c.prop} "
                 + ("has a cycle it should not have" if c.fails_by_default and not c.expected_to_fail
                    else "was expected to fail and holds" if not c.fails_by_default
                    else f"still has a cycle with {' and with '.join(c.options_failing())}")
                 + (f": {' / '.join(line.strip() for line in c.lasso)}" if c.lasso else "")
                 for c in cycles if not c.ok]
    shown.set_phase("comparing the generated cases")
    problems += write_or_check(write=False, explorations=memo, replays=replays)
    shown.set_phase("comparing the projected cases")
    problems += projected_cases.write_or_check(write=False)
    problems += refinement_problems
    return {
        "problems": problems,
        "explorations": {m: e.summary() for m, e in explorations.items()},
        "findings": {m: {f.finding: f.ok for f in findings if f.machine == m} for m in explorations},
        # Per machine and forever-property: did it fail exactly when expected, and its lasso if it failed.
        "forever": {m: {c.prop: {"ok": c.ok, "fails_by_default": c.fails_by_default,
                                 "expected_to_fail": c.expected_to_fail, "lasso": c.lasso}
                        for c in cycles if c.machine == m} for m in explorations},
        "refinement_depth": REFINE_DEPTH,
        "distinct_explorations": memo.runs,
    }, findings


# Every sequence of this many letters is compared; `inboxspec refine` goes deeper.
REFINE_DEPTH = 3


def print_report(result: dict[str, Any]) -> None:
    """The text report on stdout, written whole (``reportfile.print_whole``)."""
    print_whole(functools.partial(_print_report, result))


def _print_report(result: dict[str, Any]) -> None:
    header = ("machine", "requirements", "cases", "passed", "failed", "model")
    rows: list[tuple[str, ...]] = [header]
    for machine, t in result["machines"].items():
        model = f"{t['model_checked'] - t['model_failed']}/{t['model_checked']}"
        rows.append((machine, str(t["requirements"]), str(t["cases"]), str(t["passed"]),
                     str(t["failed"]), model))
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    for row in rows:
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)))
    for problem in result["lint_problems"]:
        print(f"lint: {one_line(problem)}")
    for drift in result["spec_drift"]:
        print(f"spec drift: {drift} (run: inboxspec spec generate)")
    for t in result["machines"].values():
        for failure in t["failures"]:
            print(f"FAIL {failure}")
    explorer = result["explorer"]
    print()
    # A finding is shown either by an invariant or by a forever-property's cycle (the host's HOST-F1
    # and HOST-F2): the two columns count those, and every forever-property, as expected.
    rows = [("machine", "states", "transitions", "depth", "seconds", "states/s", "invariant findings",
             "forever-properties")]
    for machine, summary in explorer["explorations"].items():
        found = list(explorer["findings"].get(machine, {}).values())
        cycles = [c["ok"] for c in explorer["forever"].get(machine, {}).values()]
        rows.append((machine, str(summary["distinct_states"]), str(summary["transitions"]),
                     str(summary["max_depth"]), f"{summary['seconds']:.3f}",
                     f"{summary['states_per_second']:,}", f"{sum(found)}/{len(found)} as expected",
                     f"{sum(cycles)}/{len(cycles)} as expected" if cycles else "-"))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for row in rows:
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)))
    for problem in explorer["problems"]:
        print(f"explorer: {problem}")
    print("check: " + ("ok" if result["ok"] else "FAILED"))


def main(as_json: bool, only: Sequence[str] | None = None, workers: int | None = None) -> int:
    reporting = False
    try:
        with raising_on_signals():
            # Drawn on stderr, and only when it is a terminal (Progress), so that --json on stdout stays
            # clean; erased before the report.
            # Its fixture and worker directories in memory, unless the user chose where (cli/temporary.py).
            with Progress({}) as shown, temporary_directories_in_memory():
                result = run_check(only, workers, progress=shown)
            # The report too is written while a signal raises: once the handlers are gone, SIGINT
            # printed a traceback over a report cut short.
            reporting = True
            if as_json:
                print_json(result)
            else:
                print_report(result)
            sys.stdout.flush()
    except RunInterrupted as stop:
        with ending_after(stop):  # its reader has the grace to take these, as a report's has
            try:
                if reporting:  # a part of the report may be on stdout: no other report after it
                    print(f"inboxspec check: ended by {stop.signal_name} while its report was written: "
                          "the report is cut", file=sys.stderr)
                    return stop.exit_code
                # Raised through run_check's finally blocks: its workers and fixture directories are gone.
                return report_unusable("check", f"ended by {stop.signal_name} before it finished", as_json,
                                       stop.exit_code)
            except OSError as error:  # not taken within the grace (ReportCut), or its reader is gone
                print(f"inboxspec check: ended by {stop.signal_name}: {error}", file=sys.stderr)
                return stop.exit_code
    except machines.UnknownMachine as error:
        return report_unusable("check", str(error), as_json)
    except (FixtureError, ScratchUnavailable) as error:
        # A full or unwritable temporary directory (the bundled cases' fixtures are linted first).
        return report_unusable("check", f"its temporary directories could not be made: {error}", as_json)
    except WorkerLost as error:
        # An exploration or a refinement that never finished proves nothing either way.
        what = "a refinement" if isinstance(error, RefinementLost) else "an exploration"
        return report_unusable("check", f"{what} could not be made: {error}", as_json)
    return 0 if result["ok"] else 1
