"""The inboxspec command line.

Exit codes, for every subcommand: 0 clean, 1 a check failed, 2 the command
could not run (bad arguments, unreadable input, unusable adapter, a lost
exploration worker, temporary directories that cannot be made); a command
ended by SIGINT, SIGTERM or SIGHUP exits 128 plus its number, with nothing it
started left running.
Under ``--json`` a bad argument is reported as JSON too (``{"ok": false,
"unusable": ...}``), so that a pipeline reading the report always has one.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn

from inboxspec import __version__
from inboxspec.conformance.interrupts import RunInterrupted, ending_after, raising_on_signals
from inboxspec.conformance.interrupts import exit_code as interrupt_exit_code
from inboxspec.conformance.reportfile import print_json, standard_streams_present, stderr_written_whole


def _cases_lint(args: argparse.Namespace) -> int:
    from inboxspec.conformance.casefiles import CaseFileError, lint, registered_case_dirs
    from inboxspec.conformance.compare import one_line

    try:
        report = lint(args.cases or registered_case_dirs())
    except CaseFileError as error:
        if args.json:
            from inboxspec.conformance.runner import unusable_report

            print_json(unusable_report(str(error), error.problems))
        for problem in error.problems:
            print(f"inboxspec: {one_line(problem)}", file=sys.stderr)
        return 2
    if args.json:
        print_json({"ok": report.ok, "cases": report.cases, "problems": report.problems,
                    "coverage": report.coverage})
    else:
        for problem in report.problems:  # a file's name may hold a newline, an escape, a surrogate
            print(one_line(problem))
        for machine, (covered, total) in sorted(report.coverage.items()):
            print(f"{machine}: {covered}/{total} requirements cited")
        print(f"lint: {report.cases} cases, {len(report.problems)} problems")
    return 0 if report.ok else 1


def _spec_generate(args: argparse.Namespace) -> int:
    from inboxspec.checker.spec_sections import UnreadableDocument, generate

    try:
        drifts = generate(args.spec_dir, write=not args.check)
    except (UnreadableDocument, OSError) as error:
        print(f"inboxspec spec: {error}", file=sys.stderr)
        return 2
    for drift in drifts:
        verb = "drifted" if args.check else "regenerated"
        print(f"{drift.document.name}: {drift.section} {verb}")
    if args.check and drifts:
        print("spec: generated sections are stale; run `inboxspec spec generate`")
        return 1
    return 0


def _check(args: argparse.Namespace) -> int:
    from inboxspec.check import main

    return main(args.json, args.machine, args.workers)


class UsageError(Exception):
    """A command line that argparse rejects, with the usage of the (sub)command it concerns."""

    def __init__(self, message: str, usage: str) -> None:
        super().__init__(message)
        self.usage = usage


class ArgumentParser(argparse.ArgumentParser):
    """Raises :class:`UsageError` instead of exiting, so ``main`` can still write the JSON report.

    Subcommand parsers are of the same class (argparse makes them ``type(parent)``).
    """

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{self.prog}: {message}", self.format_usage())


def build_parser() -> argparse.ArgumentParser:
    # The module's docstring, its reST literals as plain backticks for a terminal.
    parser = ArgumentParser(prog="inboxspec", description=__doc__.replace("``", "`"))
    parser.add_argument("--version", action="version", version=f"inboxspec {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    from inboxspec.checker.commands import worker_count

    check = commands.add_parser("check", help="run every bundled case and check (the main job)")
    check.add_argument("--json", action="store_true", help="machine-readable report")
    check.add_argument("--workers", type=worker_count, default=None, metavar="N",
                       help="processes for the explorations (default: every core this process may use)")
    check.add_argument("--machine", action="append", default=[], metavar="NAME",
                       help="check only this machine (repeatable; default: every machine)")
    check.set_defaults(func=_check, handles_signals=True)

    cases = commands.add_parser("cases", help="work with conformance case files")
    cases_commands = cases.add_subparsers(dest="cases_command", required=True, metavar="COMMAND")
    lint = cases_commands.add_parser("lint", help="schema, ids, requirement coverage, style")
    lint.add_argument("cases", nargs="*", type=Path, help="case directories (default: bundled)")
    lint.add_argument("--json", action="store_true")
    lint.set_defaults(func=_cases_lint)

    spec = commands.add_parser("spec", help="work with the prose spec")
    spec_commands = spec.add_subparsers(dest="spec_command", required=True, metavar="COMMAND")
    generate = spec_commands.add_parser("generate", help="rewrite generated sections of spec/")
    generate.add_argument("--check", action="store_true", help="only report drift; exit 1 on it")
    generate.add_argument("--spec-dir", type=Path, default=None)
    generate.set_defaults(func=_spec_generate)

    from inboxspec.checker.commands import add_checker_parsers
    from inboxspec.conformance.matrix import add_matrix_parser
    from inboxspec.conformance.runner import add_conform_parser

    add_conform_parser(commands)
    add_matrix_parser(commands)
    add_checker_parsers(commands, cases_commands)
    # Each (sub)command's parser, which an argument no parser took is reported against (``_run``).
    for choices in (commands.choices, cases_commands.choices, spec_commands.choices):
        for command_parser in choices.values():
            command_parser.set_defaults(command_parser=command_parser)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """The command line: the exit code of the command ``argv`` names (see the module)."""
    from inboxspec.conformance.compare import safe_output

    standard_streams_present()
    safe_output()  # every command prints the names and texts of files it was given
    with stderr_written_whole():  # a stalled reader of stderr holds no command past a signal's grace
        try:
            code = _run(argv)
            sys.stdout.flush()  # a failed write of buffered output shows here, not at the interpreter's exit
        except OSError as error:
            # A file no command could write or read past its own handling, most often its report itself
            # (a closed pipe, a full disk): a reader has nothing whole, so it could not run (2), not a
            # traceback and exit 1, which reads as a failed check.
            print(f"inboxspec: {error}", file=sys.stderr)
            _settle_stdout()
            return 2
    return code


def _settle_stdout() -> None:
    """Flush standard output, or, when it takes no more, point it at /dev/null, so that nothing left
    in its buffer fails again as the interpreter exits."""
    try:
        sys.stdout.flush()
    except (OSError, ValueError):
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            os.close(devnull)
        except (OSError, ValueError):  # no descriptor (a test's captured stream): nothing flushes it
            pass


def _run(argv: Sequence[str] | None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    # Pre-scanned, since the arguments may not parse: everything before a lone `--`. Whether a JSON
    # report is asked for on stdout: `matrix --json FILE` names a file instead, which its command writes.
    options = arguments[: arguments.index("--")] if "--" in arguments else arguments
    as_json = "--json" in options and "matrix" not in options[:1]
    try:
        parser = build_parser()
        try:
            args, unknown = parser.parse_known_args(arguments)
            if unknown:  # argparse would say so as the top-level command, with its usage
                getattr(args, "command_parser", parser).error(f"unrecognized arguments: {' '.join(unknown)}")
        except UsageError as error:
            _report_unusable(str(error), as_json)
            print(f"{error.usage}{error}", file=sys.stderr)
            return 2
        if getattr(args, "handles_signals", False):  # check, conform and matrix end their own work
            code: int = args.func(args)
            return code
        # Every other command's clean-up is its finally blocks (an exploration's workers, a fixture
        # directory), which a signal's default action would skip: it raises instead.
        with raising_on_signals():
            code = args.func(args)
        return code
    except RunInterrupted as stop:
        with ending_after(stop):  # its reader has the grace to take these, as a report's has
            try:
                if stop.report_cut:  # a part of its report is on stdout: no other report after it
                    print(f"inboxspec: ended by {stop.signal_name} while its report was written: the "
                          "report is cut", file=sys.stderr)
                    return stop.exit_code
                message = f"ended by {stop.signal_name} before it finished"
                _report_unusable(message, as_json, interrupted=stop.signal_name)
                print(f"inboxspec: {message}", file=sys.stderr)
            except OSError as error:  # not taken within the grace (ReportCut), or its reader is gone
                print(f"inboxspec: ended by {stop.signal_name}: {error}", file=sys.stderr)
        return stop.exit_code
    except KeyboardInterrupt:
        # Ctrl-C outside a conformance run (which handles it itself): a message, not a traceback.
        with ending_after(RunInterrupted("SIGINT")), contextlib.suppress(OSError):
            _report_unusable("interrupted by SIGINT", as_json, interrupted="SIGINT")
            print("inboxspec: interrupted by SIGINT", file=sys.stderr)
        return interrupt_exit_code("SIGINT")


def _report_unusable(message: str, as_json: bool, **marks: str) -> None:
    if as_json:
        from inboxspec.conformance.runner import unusable_report

        print_json(unusable_report(message, **marks))


if __name__ == "__main__":
    raise SystemExit(main())
