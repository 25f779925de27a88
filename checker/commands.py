"""The model-checking subcommands: explore, findings, refine, cases generate, cases project."""

from __future__ import annotations

import argparse
import json
import os
import stat
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from inboxspec import machines
from inboxspec.checker.limits import MAX_REFINE_STEPS, MAX_STATES
from inboxspec.conformance.reportfile import in_system_directory, print_json, write_atomically
from inboxspec.conformance.runner import report_unusable
from inboxspec.machines.frame import bound_integer

if TYPE_CHECKING:
    from inboxspec.checker.explore import Configuration

# The searches are imported by the commands that run them, not here: every ``inboxspec`` command
# builds the whole parser (``add_checker_parsers``), ``conform`` included.


def _pairs(values: list[str], what: str) -> dict[str, str]:
    pairs: dict[str, str] = {}
    for value in values:
        name, equals, raw = value.partition("=")
        if not equals or not name:
            raise ValueError(f"{what} must look like NAME=VALUE, not {value!r}")
        if name in pairs:
            raise ValueError(f"{what} {name} is given twice")
        pairs[name] = raw
    return pairs


def _options(values: list[str]) -> dict[str, bool]:
    parsed = {}
    for name, raw in _pairs(values, "--option").items():
        if raw.lower() not in ("true", "false"):
            raise ValueError(f"option {name} is true or false, not {raw!r}")
        parsed[name] = raw.lower() == "true"
    return parsed


# The most worker processes a command line may ask for: more than any machine here has cores, and
# few enough that forking them and their queues' threads fits an ordinary process limit (asked
# for 300, the search could not fork; for 2,000, not start its threads).
MAX_WORKERS = 64

# ``inboxspec refine``'s depth when neither --depth nor --reachable is given.
DEFAULT_REFINE_DEPTH = 4


def whole_number(least: int, most: int | None = None) -> Callable[[str], int]:
    """An argparse type: a whole number written in ASCII digits, from ``least`` to ``most`` (no
    most: unbounded); argparse reports anything else with the usage, exit 2."""
    span = f"from {least} to {most}" if most is not None else f"of {least} or more"

    def parse(raw: str) -> int:
        try:
            value = bound_integer(raw)  # ASCII digits alone: not 1_0, not ' 3 ', not another script's
        except ValueError:
            value = least - 1
        if value < least or (most is not None and value > most):
            raise argparse.ArgumentTypeError(f"a whole number {span}, not {raw!r}")
        return value

    return parse


worker_count = whole_number(1, MAX_WORKERS)


def _output_file(raw: str | None, option: str) -> Path | None:
    """The file an ``--emit-*`` option names, checked before the exploration: ValueError when it
    is empty, names a directory, or lies in a directory that does not exist."""
    if raw is None:
        return None
    path = Path(raw)
    if not raw or path.is_dir() or not path.parent.is_dir():
        raise ValueError(f"{option} needs a file in a directory that exists, not {raw!r}")
    return path


def _progress(states: int, depth: int, seconds: float) -> None:
    print(f"\r  {states:,} states, depth {depth}, {states / max(seconds, 1e-9):,.0f} states/s",
          end="", file=sys.stderr, flush=True)


def _explore(args: argparse.Namespace) -> int:
    from inboxspec.checker.explore import checked_invariants, default_workers, explore
    from inboxspec.checker.forked import WorkerLost
    from inboxspec.checker.parallel import ShardingError
    from inboxspec.checker.traces import (
        concrete_steps,
        lasso_lines,
        model_disagreements,
        to_case,
        to_itf,
        to_itf_lasso,
        trace_lines,
    )
    from inboxspec.machines import interface
    from inboxspec.machines.frame import forever_properties

    try:
        options = _options(args.option)
        bounds = _pairs(args.bound, "--bound")
        if args.write_manifest and (args.bound or options):
            raise ValueError("--write-manifest records the default bounds and options only")
        if args.invariant is not None:
            explorer = machines.get(args.machine).explorer
            known = [*(i.name for i in explorer.invariants), *(p.name for p in forever_properties(explorer))]
            if args.invariant not in known:
                raise ValueError(f"--invariant names one of the {args.machine} properties "
                                 f"({', '.join(known)}), not {args.invariant!r}")
            # The properties an option on replaces are not checked under it (Invariant.replaced_by).
            checked = {i.name for i in checked_invariants(explorer, args.machine, None, options)}
            if args.invariant in {i.name for i in explorer.invariants} - checked:
                raise ValueError(f"{args.invariant} is replaced by the options on, and not checked "
                                 "under them: no violation of it to emit")
            if not (args.emit_case or args.emit_itf):
                raise ValueError("--invariant chooses the violation that --emit-case or --emit-itf writes")
        emit_case = _output_file(args.emit_case, "--emit-case")
        emit_itf = _output_file(args.emit_itf, "--emit-itf")
        workers = args.workers or default_workers(args.machine, bounds)
        result = explore(args.machine, bounds, options, workers=workers,
                         progress=None if args.json or not sys.stderr.isatty() else _progress,
                         max_states=args.max_states)
    except ValueError as error:
        return report_unusable("explore", str(error), args.json)
    except (WorkerLost, ShardingError) as error:  # a worker that died or could not start
        return report_unusable("explore", f"the exploration could not be made: {error}", args.json)
    if not args.json and sys.stderr.isatty():
        print(file=sys.stderr)
    explorer = machines.get(args.machine).explorer
    summary = result.summary()
    if args.write_manifest:
        from inboxspec.checker.manifest import write_manifest

        write_manifest(args.machine)
        summary["wrote_manifest"] = str(machines.get(args.machine).manifest)
    expected = {i.name for i in explorer.invariants
                if i.finding is not None and not options.get(i.option or "", False)}
    forever = {p.name: p for p in forever_properties(explorer)}
    expected_lassos = {name for name, p in forever.items() if p.expected_to_fail_under(options)}
    unexpected = sorted((set(result.violations) - expected) | (set(result.lassos) - expected_lassos))
    summary["unexpected_violations"] = unexpected
    # Invariants an option on replaces (Invariant.replaced_by): no promise under it, so not checked.
    replaced = [i.name for i in explorer.invariants if i.name not in result.invariants_checked]
    summary["replaced_by_the_options"] = replaced
    summary["traces"] = {name: trace_lines(explorer, trace, result.bounds, result.options)
                         for name, trace in result.violations.items()}
    summary["lassos"] = {name: {"prefix": len(lasso.prefix), "loop": len(lasso.loop),
                                "expected": name in expected_lassos,
                                "steps": lasso_lines(explorer, lasso.prefix, lasso.loop, result.bounds,
                                                     result.options)}
                         for name, lasso in result.lassos.items()}
    failed = {**{name: trace for name, trace in result.violations.items()},
              **{name: [*lasso.prefix, *lasso.loop] for name, lasso in result.lassos.items()}}
    chosen: str | None = args.invariant or next(iter(unexpected or sorted(failed)), None)
    if (emit_case or emit_itf) and (chosen is None or chosen not in failed):
        return report_unusable("explore", "no property failed: no violation to emit" if chosen is None
                         else f"{chosen} holds: no violation of it to emit", args.json)
    if emit_case and chosen is not None:
        requirements = (forever[chosen].requirements if chosen in result.lassos
                        else next(i for i in explorer.invariants if i.name == chosen).requirements)
        # A lasso becomes a case as its prefix and one turn of its loop.
        case = to_case(args.machine, f"{args.machine}/counterexample-{chosen.replace('_', '-')}",
                       f"The shortest trace that breaks {chosen} replays with the reference's outputs",
                       list(requirements), explorer.config(result.bounds, options),
                       concrete_steps(explorer, failed[chosen], result.bounds, result.options),
                       features=interface.features_for_options(options) or None)
        written = _written(emit_case, json.dumps({"machine": args.machine, "cases": [case]}, indent=2))
        if written is not None:
            return report_unusable("explore", written, args.json)
        summary["emitted_case"] = args.emit_case
        summary["model_disagrees_with_reference_at_steps"] = model_disagreements(args.machine, case)
    if emit_itf and chosen is not None:
        if chosen in result.lassos:
            lasso = result.lassos[chosen]
            itf = to_itf_lasso(args.machine, explorer.variables, lasso.prefix, lasso.loop, chosen,
                               explorer.initial(result.bounds))
        else:
            itf = to_itf(args.machine, explorer.variables, result.violations[chosen], chosen,
                         explorer.initial(result.bounds))
        written = _written(emit_itf, json.dumps(itf, indent=2))
        if written is not None:
            return report_unusable("explore", written, args.json)
        summary["emitted_itf"] = args.emit_itf
    if args.json:
        print_json(summary)
    else:
        print(f"{args.machine}: {result.states:,} distinct states, {result.transitions:,} transitions, "
              f"max depth {result.max_depth}, {result.seconds:.3f}s, "
              f"{result.states_per_second:,.0f} states/s")
        # The bounds --bound sets, then those the description works out from them (not set apart).
        settable = machines.get(args.machine).explorer.default_bounds
        bounds = summary["bounds"]
        derived = {name: value for name, value in bounds.items() if name not in settable}
        print(f"bounds: {({name: value for name, value in bounds.items() if name in settable})}"
              + (f"  derived from them: {derived}" if derived else "")
              + f"  options: {options or 'seed defaults'}")
        print(f"chart transitions covered: {summary['chart_transitions_covered']}")
        holding = [name for name in result.invariants_checked if name not in result.violations]
        print(f"invariants holding: {', '.join(holding) or 'none'}")
        if replaced:
            print(f"not checked, replaced by the options on: {', '.join(replaced)}")
        for name in sorted(result.violations):
            kind = "UNEXPECTED violation" if name in unexpected else "expected failure (a finding)"
            print(f"\n{kind}: {name}; shortest trace:")
            print("\n".join(summary["traces"][name]))
        if forever:
            cycle_free = [name for name in forever if name not in result.lassos]
            print(f"\nforever-properties holding (no bad cycle): {', '.join(cycle_free) or 'none'}")
        for name in sorted(result.lassos):
            kind = "UNEXPECTED cycle" if name in unexpected else "expected failure"
            print(f"\n{kind}: {name}; lasso (shortest prefix, then a loop):")
            print("\n".join(summary["lassos"][name]["steps"]))
        for key in ("emitted_case", "emitted_itf", "wrote_manifest"):
            if key in summary:
                print(f"\nwrote {summary[key]}")
        if summary.get("model_disagrees_with_reference_at_steps"):
            print("note: the model's outputs differ from the reference's at steps "
                  f"{summary['model_disagrees_with_reference_at_steps']}; the case expects the reference's")
    return 1 if unexpected else 0


def _written(path: Path, text: str) -> str | None:
    """Write ``text`` and a newline to ``path``; None, or why it could not be written. A regular file
    there (or none, or a link to one) is replaced in one rename (``write_atomically``): written in
    place, a full disk left half a file where the earlier one was, and a link to a file took the write
    to its target. Anything else, and any name in ``/dev`` or ``/proc``, is written as opened, appended:
    a device, a pipe or a descriptor the user means (``/dev/null``, ``/dev/stdout`` into a log)."""
    data = (text + "\n").encode("utf-8")
    try:
        try:
            regular = stat.S_ISREG(os.stat(path).st_mode)
        except FileNotFoundError:  # none there (or a link to nothing, which the rename replaces)
            regular = True
        if regular and not in_system_directory(path):
            write_atomically(path, data)
        else:  # appended: /dev/stdout redirected to a log (``>> log``) keeps what the log held
            with open(path, "ab") as stream:
                stream.write(data)
    except OSError as error:
        return f"cannot write {path}: {error}"
    return None


def _findings_configurations() -> list[Configuration]:
    """Each registered machine at its default bounds, and with each option on: the largest (by its
    manifest) first."""
    from inboxspec.checker.manifest import sized_configurations

    sized = sorted(sized_configurations(lambda _manifest: {}), key=lambda pair: -pair[0])
    return [configuration for _size, configuration in sized]


def _findings(args: argparse.Namespace) -> int:
    from inboxspec.checker.explore import available_cores, check_explorations
    from inboxspec.checker.findings import check_findings, check_forever, finding_order

    with machines.only(args.machine or machines.names()), check_explorations() as memo:
        # Every exploration the findings read (each machine's default and each option on), on the
        # workers at once, the largest machine's first, as check explores them.
        memo.start(_findings_configurations(), args.workers or available_cores())
        results = check_findings(memo)
        cycles = check_forever(memo)
    if args.json:
        # Findings' invariants first, then the forever-properties (their lassos), each marked by "kind".
        print_json([{"kind": "invariant", **r.as_json()} for r in results]
                   + [{"kind": "forever", **c.as_json()} for c in cycles])
    else:
        # One list in finding order, whichever kind of property shows each finding (a machine's
        # forever-properties without a finding last).
        shown: list[tuple[tuple[str, int, str], list[str]]] = []
        for r in results:
            shown.append((finding_order(r.machine, r.finding), [
                f"{r.finding} [{r.machine}] property {r.invariant} ({', '.join(r.requirements)})",
                f"  seed default: {'fails' if r.fails_by_default else 'HOLDS (unexpected)'}; "
                f"with {r.option}: {'holds' if r.holds_with_option else 'FAILS (unexpected)'}",
                *("  " + line for line in r.trace)]))
        for c in cycles:
            verdict = ("fails" if c.fails_by_default and c.expected_to_fail
                       else "holds" if not c.fails_by_default and not c.expected_to_fail
                       else "FAILS (unexpected)" if c.fails_by_default else "HOLDS (expected to fail)")
            with_option = "".join(f"; with {option}: {'holds' if holds else 'FAILS (unexpected)'}"
                                  for option, holds in c.fixed_with())
            shown.append((finding_order(c.machine, c.finding), [
                f"{c.finding or 'forever'} [{c.machine}] forever-property {c.prop} "
                f"({', '.join(c.requirements)})",
                f"  seed default: {verdict}{with_option}",
                *("  " + line for line in c.lasso)]))
        for _order, lines in sorted(shown, key=lambda entry: entry[0]):
            print("\n".join(lines))
        named = sorted({r.finding for r in results} | {c.finding for c in cycles if c.finding},
                       key=lambda finding: finding_order("", finding))
        print(f"findings: {len(named)} ({', '.join(named) or 'none'}); shown as properties: "
              f"{sum(r.ok for r in results)}/{len(results)} as expected; forever-properties: "
              f"{sum(c.ok for c in cycles)}/{len(cycles)} as expected")
    return 0 if all(r.ok for r in results) and all(c.ok for c in cycles) else 1


def _refine(args: argparse.Namespace) -> int:
    from inboxspec.checker.refine import Refinement, refine, refine_reachable

    def shown(so_far: Refinement) -> None:
        counts = (f"{so_far.sequences:,} steps compared, {so_far.steps:,} steps replayed" if args.reachable
                  else f"{so_far.sequences:,} sequences, {so_far.steps:,} steps compared")
        print(f"\r  {counts}", end="", file=sys.stderr, flush=True)

    drawn = not args.json and sys.stderr.isatty()
    try:
        if args.reachable and args.depth is not None:
            raise ValueError("--depth and --reachable exclude each other: --reachable goes as deep as "
                             "the bounds let the model go")
        if args.max_states is not None and not args.reachable:
            raise ValueError("--max-states bounds a reachable refinement's states: give it with --reachable")
        bounds = _pairs(args.bound, "--bound")
        progress = shown if drawn else None
        if args.reachable:
            result = refine_reachable(args.machine, bounds, _options(args.option), progress=progress,
                                      max_steps=args.max_steps, max_states=args.max_states or MAX_STATES)
        else:
            result = refine(args.machine, args.depth or DEFAULT_REFINE_DEPTH, _options(args.option),
                            bounds, progress=progress, max_steps=args.max_steps)
    except ValueError as error:
        return report_unusable("refine", str(error), args.json)
    finally:
        if drawn:
            print(file=sys.stderr)
    report: dict[str, Any] = vars(result)
    if args.json:
        print_json(report)
    elif result.reachable_bounds is not None:
        within = ", ".join(f"{name}={_shown_bound(value)}" for name, value in result.reachable_bounds.items())
        print(f"{result.machine}: every step of every state reachable within {within}: {result.sequences:,} "
              f"steps compared, each after its state's shortest trace (the longest {result.depth} letters; "
              f"{result.steps:,} steps replayed)")
        print("\n".join(result.mismatch) if result.mismatch else "model and reference agree")
    else:
        print(f"{result.machine}: {result.sequences:,} sequences of {result.depth} letters, "
              f"{result.steps:,} steps compared")
        print("\n".join(result.mismatch) if result.mismatch else "model and reference agree")
    return 1 if result.mismatch else 0


def _shown_bound(value: Any) -> str:
    """A parsed bound as ``--bound`` writes it (a list of names joined by commas)."""
    return ",".join(map(str, value)) if isinstance(value, (list, tuple)) else str(value)


def _generate(args: argparse.Namespace) -> int:
    from inboxspec.checker import projected_cases
    from inboxspec.checker.generated_cases import write_or_check

    problems = write_or_check(write=not args.check) + projected_cases.write_or_check(write=not args.check)
    print("\n".join(problems) if problems else
          ("generated cases are current" if args.check else "generated cases written"))
    return 1 if problems else 0


def _project(args: argparse.Namespace) -> int:
    from inboxspec.checker import projected_cases

    problems = projected_cases.write_or_check(write=not args.check)
    print("\n".join(problems) if problems else
          ("projected cases are current" if args.check else "projected cases written"))
    return 1 if problems else 0


def add_checker_parsers(commands: Any, cases_commands: Any) -> None:
    explore_parser = commands.add_parser("explore", help="exhaustively explore a model chart")
    explore_parser.add_argument("machine", choices=machines.names())
    explore_parser.add_argument("--bound", action="append", default=[], metavar="NAME=VALUE",
                                help="an exploration bound (see the machine's `machines/<name>.py`)")
    explore_parser.add_argument("--option", action="append", default=[], metavar="NAME=VALUE",
                                help="a finding option, true or false")
    explore_parser.add_argument("--invariant", help="which violation to emit (default: the first)")
    explore_parser.add_argument("--emit-case", metavar="FILE", help="write the trace as a case file")
    explore_parser.add_argument("--emit-itf", metavar="FILE", help="write the trace as ITF JSON")
    explore_parser.add_argument("--write-manifest", action="store_true",
                                help="record this default exploration as the machine's manifest")
    explore_parser.add_argument("--workers", type=worker_count, default=None, metavar="N",
                                help="processes for the search (default: 1 when the manifest records fewer "
                                     "than 50,000 states at these bounds, every usable core otherwise)")
    explore_parser.add_argument("--max-states", type=whole_number(1), default=MAX_STATES, metavar="N",
                                help=f"stop, exit 2, past N distinct states (default: {MAX_STATES:,}; a "
                                     "bound too large for an exhaustive search would otherwise grow "
                                     "until memory runs out)")
    explore_parser.add_argument("--json", action="store_true", help="machine-readable report")
    explore_parser.set_defaults(func=_explore)

    findings = commands.add_parser("findings", help="each finding: fails by default, holds with its option")
    findings.add_argument("--machine", action="append", choices=machines.names(), default=None,
                          help="the findings of this machine only (repeatable; default: every machine)")
    findings.add_argument("--workers", type=worker_count, default=None, metavar="N",
                          help="processes for the explorations (default: every core this process may use)")
    findings.add_argument("--json", action="store_true", help="machine-readable report")
    findings.set_defaults(func=_findings)

    refine_parser = commands.add_parser(
        "refine", help="model and reference agree on every short sequence, or on every reachable step")
    refine_parser.add_argument("machine", choices=machines.names())
    refine_parser.add_argument("--depth", type=whole_number(1), default=None, metavar="N",
                               help=f"every sequence of up to N letters (default: {DEFAULT_REFINE_DEPTH})")
    refine_parser.add_argument("--reachable", action="store_true",
                               help="instead, every step of every state the model reaches within the bounds, "
                                    "after the state's shortest trace (small bounds: see the README)")
    refine_parser.add_argument("--max-steps", type=whole_number(1), default=MAX_REFINE_STEPS, metavar="N",
                               help=f"stop, exit 2, past N steps compared (default: {MAX_REFINE_STEPS:,}; "
                                    "the sequences grow as the alphabet to the depth)")
    refine_parser.add_argument("--max-states", type=whole_number(1), default=None, metavar="N",
                               help=f"with --reachable: stop, exit 2, past N distinct states (default: "
                                    f"{MAX_STATES:,})")
    refine_parser.add_argument("--bound", action="append", default=[], metavar="NAME=VALUE",
                               help="a bound of the machine's alphabet and, with --reachable, of its states")
    refine_parser.add_argument("--option", action="append", default=[], metavar="NAME=VALUE",
                               help="a finding option, true or false (repeatable)")
    refine_parser.add_argument("--json", action="store_true", help="machine-readable report")
    refine_parser.set_defaults(func=_refine)

    generate = cases_commands.add_parser("generate", help="one case per chart transition")
    generate.add_argument("--check", action="store_true", help="only report drift; exit 1 on it")
    generate.set_defaults(func=_generate)

    project = cases_commands.add_parser(
        "project",
        help="each host case as cases of the machines it composes (conformance/cases/<machine>/host/)")
    project.add_argument("--check", action="store_true", help="only report drift; exit 1 on it")
    project.set_defaults(func=_project)

    from inboxspec.conformance import expectations

    expectations.add_parser(cases_commands)
