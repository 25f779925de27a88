"""``inboxspec matrix``: several adapters over the same cases, side by side.

A port author who keeps two implementations (or compares a port with the
reference) wants one table: per machine and per requirement area, which
adapters pass, fail, error or skip, and for each failing requirement, which
adapters fail it. Bowtie's compliance tables are the model.

This is a command of its own rather than ``conform --adapter`` given twice:
``conform``'s report, JSON, JUnit file, shrunk fuzz failures and exit code
all describe one implementation, and a pipeline gating one port keeps that
contract; the matrix is a comparison, whose output is the table.

A requirement's *area* is its ID up to the last dash-number (``WAKE-LANE-3``
is in ``WAKE-LANE``). A case counts in every area it cites, once per area.

Each adapter runs on its own, one after the other, through the same runner
as ``conform`` (so every protocol check applies). An adapter that cannot
start gets a column that says so; the others still run. SIGINT, SIGTERM or
SIGHUP ends the matrix as it ends ``conform`` (PROTO-SIG-1: the adapter's
processes and fixture directories gone, 128 plus the signal's number), and no
later adapter starts; since a table of the adapters that ran so far would be
read as the whole, none is printed or written. One that comes once every
adapter has run, while the matrix is printed or its files written, lets the
whole matrix be printed and written, then ends the command with 128 plus its
number, as conform's report does (PROTO-REPORT-2).

``--json FILE`` writes the matrix as JSON, each adapter's run's warnings included; its fields are
those of ``conformance/schemas/matrix-report.schema.json``, against which the tests check every
matrix they read.

``--into FILE`` replaces the block between :data:`BEGIN` and :data:`END` in
FILE with the Markdown (the README's matrix is made this way), and
``--check`` only compares, exiting 1 when the block is stale. When an adapter
could not run (exit 2), FILE is left as it was, and neither is the block
called stale: the reason is on stderr, with the tail of the adapter's stderr.
"""

from __future__ import annotations

import argparse
import functools
import json
import re
import sys
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from inboxspec.conformance.casefiles import CaseFileError, load_cases
from inboxspec.conformance.compare import escape_for_display, message_lines, one_line
from inboxspec.conformance.interrupts import RunInterrupted, received
from inboxspec.conformance.interrupts import exit_code as interrupt_exit_code
from inboxspec.conformance.reportfile import print_whole, write_atomically
from inboxspec.conformance.runner import (
    ERROR,
    EXPECTED_FAIL,
    FAIL,
    PASS,
    SKIP,
    UNEXPECTED_PASS,
    RunReport,
    Selection,
    UnusableRun,
    add_run_options,
    conform,
    contained_runs,
    registered_names,
    reported,
)

# The columns of a cell, in the order a cell lists them.
KINDS = ("fail", "error", "skip", "pass")
_KIND_OF = {PASS: "pass", FAIL: "fail", UNEXPECTED_PASS: "fail", ERROR: "error",
            SKIP: "skip", EXPECTED_FAIL: "skip"}
_AREA = re.compile(r"^(?P<area>.+)-\d+$")
BEGIN = "<!-- begin: inboxspec matrix (generated; do not edit by hand) -->"
END = "<!-- end: inboxspec matrix -->"


def area_of(requirement: str) -> str:
    """``WAKE-LANE-3`` -> ``WAKE-LANE``; an ID without a dash-number is its own area."""
    match = _AREA.match(requirement)
    return match["area"] if match else requirement


@dataclass
class AdapterRun:
    """One adapter's part of a matrix: its report, or why it could not run."""

    command: str
    label: str
    report: RunReport | None = None
    unusable: str | None = None

    @property
    def exit_code(self) -> int:
        return 2 if self.report is None else self.report.exit_code


def _labels(runs: Sequence[AdapterRun]) -> None:
    """Name each column after the implementation its adapter reported, distinctly: a name taken
    already, by an earlier column's name or its numbered form, gets the next number free. An adapter
    that named itself "port 1 (2)" after two adapters named "port 1" took the second one's label,
    and the cells and the failing requirements, keyed by label, merged the two columns."""
    used: set[str] = set()
    for position, run in enumerate(runs, start=1):
        if run.report is None:
            base = f"adapter {position}"
        else:
            implementation = run.report.implementation
            base = f"{implementation.get('name', '?')} {implementation.get('version', '')}".strip()
        label, number = base, 1
        while label in used:
            number += 1
            label = f"{base} ({number})"
        used.add(label)
        run.label = label


@dataclass
class Matrix:
    runs: list[AdapterRun]
    # (machine, area) -> label -> kind -> cases
    cells: dict[tuple[str, str], dict[str, Counter[str]]] = field(default_factory=dict)
    # (machine, area) -> the number of cases citing the area
    cases: dict[tuple[str, str], int] = field(default_factory=dict)
    # requirement -> label -> the ids of the cases that fail or error it
    failing: dict[str, dict[str, list[str]]] = field(default_factory=dict)

    @property
    def labels(self) -> list[str]:
        return [run.label for run in self.runs]

    @property
    def exit_code(self) -> int:
        """2 when an adapter could not run or proved nothing, else 1 on any failure, else 0."""
        codes = {run.exit_code for run in self.runs}
        return 2 if 2 in codes else 1 if 1 in codes else 0

    def machine_totals(self) -> dict[str, dict[str, Counter[str]]]:
        """Per machine and adapter: each kind, counting every case once."""
        totals: dict[str, dict[str, Counter[str]]] = defaultdict(lambda: defaultdict(Counter))
        for run in self.runs:
            for result in run.report.results if run.report else []:
                totals[result.case.machine][run.label][_KIND_OF[result.outcome]] += 1
        return dict(sorted(totals.items()))

    def as_json(self) -> dict[str, Any]:
        # WARNING: conformance/schemas/matrix-report.schema.json describes these fields, and the
        # matrix tests check every report they read against it (tests/report_schema.py); a field
        # changed here is a field changed there.
        machines: dict[str, dict[str, Any]] = defaultdict(dict)
        for (machine, area), by_label in sorted(self.cells.items()):
            machines[machine][area] = {
                "cases": self.cases[(machine, area)],
                "adapters": {label: _every_kind(by_label.get(label, Counter())) for label in self.labels},
            }
        return {
            "ok": self.exit_code == 0,
            "adapters": [{"label": run.label, "command": run.command, "exit_code": run.exit_code,
                          "implementation": run.report.implementation if run.report else None,
                          "unusable": run.unusable,
                          "totals": (_every_kind(Counter(_KIND_OF[r.outcome] for r in run.report.results))
                                     if run.report else None),
                          "warnings": run.report.warnings if run.report else None}
                         for run in self.runs],
            "machines": dict(machines),
            "failing_requirements": self.failing,
        }


def _every_kind(counts: Counter[str]) -> dict[str, int]:
    """Each of KINDS, a kind no case had as 0 (a reader finds every key in every adapter's totals)."""
    return {kind: counts[kind] for kind in KINDS}


def build_matrix(runs: list[AdapterRun]) -> Matrix:
    _labels(runs)
    matrix = Matrix(runs)
    counted: set[tuple[str, str, str]] = set()  # (machine, area, case id)
    failing: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for run in runs:
        for result in run.report.results if run.report else []:
            case = result.case
            kind = _KIND_OF[result.outcome]
            for area in dict.fromkeys(area_of(r) for r in case.requirements):
                key = (case.machine, area)
                matrix.cells.setdefault(key, {}).setdefault(run.label, Counter())[kind] += 1
                if (case.machine, area, case.id) not in counted:
                    counted.add((case.machine, area, case.id))
                    matrix.cases[key] = matrix.cases.get(key, 0) + 1
            if kind in ("fail", "error"):
                for requirement in case.requirements:
                    failing[requirement][run.label].append(case.id)
    matrix.failing = {requirement: dict(by_label) for requirement, by_label in sorted(failing.items())}
    return matrix


def _markdown_text(text: str) -> str:
    """Adapter-given text as inert Markdown: no table break, link, HTML, emphasis or mention (an
    escaped ``:`` or ``@`` keeps a bare address or an ``@team`` from becoming a link or a mention)."""
    escaped = escape_for_display(text)
    escaped = escaped.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return re.sub(r"([\\`*_\[\]|#!~:@])", r"\\\1", escaped)


def _cell(counts: Counter[str] | None, unusable: bool) -> str:
    if unusable:
        return "unusable"
    if not counts:
        return "–"
    parts = [f"{counts[kind]} {kind}" for kind in KINDS if counts[kind]]
    status = "✅" if set(counts) <= {"pass"} else "❌" if counts["fail"] or counts["error"] else "➖"
    return f"{status} {', '.join(parts)}"


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines.extend("| " + " | ".join(row) + " |" for row in rows)
    return lines


def as_markdown(matrix: Matrix) -> str:
    labels = [_markdown_text(label) for label in matrix.labels]
    unusable = {run.label for run in matrix.runs if run.report is None}
    lines = ["Per machine (each case once):", ""]
    totals = matrix.machine_totals()
    lines += _table(["machine", *labels], [
        [f"`{machine}`", *(_cell(by_label.get(run.label), run.label in unusable) for run in matrix.runs)]
        for machine, by_label in totals.items()])
    rows = f"{len(matrix.cells)} row{'' if len(matrix.cells) == 1 else 's'}"
    lines += ["", f"<details><summary>Per requirement area ({rows}; a case counts "
                  "in each area it cites)</summary>", ""]
    lines += _table(["machine", "area", "cases", *labels], [
        [f"`{machine}`", _markdown_text(area), str(matrix.cases[(machine, area)]),
         *(_cell(by_label.get(run.label), run.label in unusable) for run in matrix.runs)]
        for (machine, area), by_label in sorted(matrix.cells.items())])
    lines += ["", "</details>", ""]
    if matrix.failing:
        lines += ["Failing requirements:", ""]
        lines += _table(["requirement", "failed or errored by"], [
            [_markdown_text(requirement),
             "; ".join(f"{_markdown_text(label)} ({len(ids)} case{'s' if len(ids) > 1 else ''})"
                       for label, ids in by_label.items())]
            for requirement, by_label in matrix.failing.items()])
    else:
        lines.append("No requirement is failed or errored by any adapter.")
    for run in matrix.runs:
        if run.unusable is not None:
            lines += ["", f"{_markdown_text(run.label)} could not run: "
                          f"{_markdown_text(run.unusable.splitlines()[0])}"]
        for warning in run.report.warnings if run.report else []:
            lines += ["", f"{_markdown_text(run.label)}, warning: {_markdown_text(warning)}"]
    return "\n".join(lines) + "\n"


def run_matrix(commands: Sequence[str], args: argparse.Namespace) -> Matrix:
    """Run the selected cases through each adapter in turn."""
    from inboxspec import machines

    chosen = registered_names((), args.machine)
    cases = load_cases(args.cases or [machines.cases_dir(name) for name in chosen])
    if args.machine:
        cases = [case for case in cases if case.machine in args.machine]
    selection = Selection(run=args.run, skip=args.skip, features=args.feature,
                          without_features=args.without_feature)
    runs = []
    for command in commands:
        run = AdapterRun(command, label="")
        try:
            run.report = conform(command, cases, selection, timeout=args.timeout,
                                 start_timeout=args.start_timeout, max_line_bytes=args.max_line_bytes,
                                 progress=True, window=args.window,  # drawn on a terminal only
                                 allow_outside_reads=args.allow_outside_reads)
        except UnusableRun as error:
            run.unusable = str(error)
        if run.report is not None and run.report.unusable is not None:  # a failed restart (PROTO-RUN-6)
            run.unusable, run.report = run.report.unusable, None
        runs.append(run)
        if received() is not None:
            break  # a signal ends the matrix: no later adapter starts (``_command`` reports it)
    return build_matrix(runs)


def replace_block(document: str, block: str) -> str:
    """``document`` with the text between BEGIN and END replaced by ``block``."""
    start, end = document.find(BEGIN), document.find(END)
    if start < 0 or end < start or document.count(BEGIN) != 1 or document.count(END) != 1:
        raise ValueError(f"it needs exactly one {BEGIN!r} line followed by one {END!r} line")
    return document[: start + len(BEGIN)] + "\n\n" + block + "\n" + document[end:]


def _command(args: argparse.Namespace) -> int:
    if args.check and args.into is None:
        print("inboxspec matrix: --check compares the block of --into FILE; give --into", file=sys.stderr)
        return 2
    if args.into is not None and not args.into.is_file():  # a FIFO would hang its read, after every run
        print(f"inboxspec matrix: --into needs an existing regular file, not {str(args.into)!r}",
              file=sys.stderr)
        return 2
    interrupted: str | None = None
    with contained_runs():
        try:
            matrix = run_matrix(args.adapter, args)
        except RunInterrupted as interruption:  # while an adapter started
            interrupted = interruption.signal_name
        except (UnusableRun, CaseFileError) as error:
            for problem in error.problems:
                print(f"inboxspec matrix: {message_lines(problem)}", file=sys.stderr)
            return 2
        except Exception as error:  # as conform's: an adapter's run ends no matrix in a traceback
            print(f"inboxspec matrix: internal error: {type(error).__name__}: {one_line(str(error))}",
                  file=sys.stderr)
            return 2
        interrupted = interrupted or received()  # read inside: the block's end forgets it
        if interrupted is None:
            # Written where the signals are still recorded (PROTO-REPORT-2): one that comes meanwhile lets
            # the matrix, whole as the runs left it, be printed and written, then ends the command.
            return reported(functools.partial(_write_matrix, args, matrix), interrupted=False,
                            command="matrix")
    # A matrix of the adapters that ran so far would be read as the whole: none is printed or written.
    print(f"inboxspec matrix: interrupted by {interrupted}: no matrix printed or written; the "
          "adapters' processes and the fixture directories are gone", file=sys.stderr)
    return interrupt_exit_code(interrupted)


def _write_matrix(args: argparse.Namespace, matrix: Matrix) -> int:
    """The matrix in the files asked for and in ``--into``'s block, then on stdout; the exit code it
    gives. The files first: a reader of stdout that takes nothing, and a signal, cut the table after the
    grace (PROTO-REPORT-2), and the files were then never written."""
    markdown = as_markdown(matrix)
    written = _write_matrix_files(args, matrix, markdown)
    code = 2 if written == 2 else max(matrix.exit_code, written)
    print_whole(lambda: print(markdown, end=""))
    for run in matrix.runs:  # the table says so in a word; the reason in full, its quote kept apart
        if run.unusable is not None:
            print(f"inboxspec matrix: {one_line(run.label)} could not run: {message_lines(run.unusable)}",
                  file=sys.stderr)
    return code


def _write_matrix_files(args: argparse.Namespace, matrix: Matrix, markdown: str) -> int:
    """``--markdown``, ``--json`` and ``--into``'s block written (or, with ``--check``, compared): 0, or
    1 for a stale block, or 2 for a file that could not be written (said on stderr)."""
    try:
        if args.markdown is not None:
            write_atomically(args.markdown, markdown.encode("utf-8"))
        if args.json is not None:
            # ASCII: an adapter's name may hold a lone surrogate, which no UTF-8 file can (PROTO-VAL-4).
            text = json.dumps(matrix.as_json(), indent=2, ensure_ascii=True) + "\n"
            write_atomically(args.json, text.encode("utf-8"))
        if args.into is not None and matrix.exit_code == 2:
            # A document's matrix is the adapters' standing; a column that says only "unusable" is
            # not one, and --check would call the block stale when it is the run that failed.
            print(f"inboxspec matrix: {args.into} left as it was: an adapter could not run",
                  file=sys.stderr)
        elif args.into is not None:
            current = args.into.read_text(encoding="utf-8")
            wanted = replace_block(current, markdown)
            if args.check:
                if wanted != current:
                    print(f"inboxspec matrix: the matrix in {args.into} is stale; rerun this "
                          "command without --check", file=sys.stderr)
                    return 1
            elif wanted != current:
                # The file keeps its permission bits; a link there is replaced, not written through,
                # as for every file the runner writes (conformance/reportfile.py).
                write_atomically(args.into, wanted.encode("utf-8"))
    except (OSError, ValueError, UnicodeDecodeError) as error:
        print(f"inboxspec matrix: cannot write the matrix: {error}", file=sys.stderr)
        return 2
    return 0


def add_matrix_parser(commands: Any) -> None:
    parser = commands.add_parser(
        "matrix", help="run the cases through several adapters and compare them in one table")
    add_run_options(
        parser, many_adapters=True, adapter_help="an adapter command (repeatable: one column each)",
        machine_help="only this machine's cases (repeatable; default: every machine)",
        without_feature_help="treat this feature as unsupported by every adapter")
    parser.add_argument("--markdown", type=Path, default=None, metavar="FILE",
                        help="also write the matrix as Markdown to FILE")
    parser.add_argument("--json", type=Path, default=None, metavar="FILE",
                        help="also write the matrix as JSON to FILE (its fields: "
                             "conformance/schemas/matrix-report.schema.json)")
    parser.add_argument("--into", type=Path, default=None, metavar="FILE",
                        help="replace the generated matrix block in FILE (the README's): an existing "
                             "regular file, which keeps its permissions; a link at FILE is replaced "
                             "by the file, not written through")
    parser.add_argument("--check", action="store_true",
                        help="with --into: only compare; exit 1 when the block is stale")
    # It handles the interrupting signals itself (contained_runs), so the command line leaves them be.
    parser.set_defaults(func=_command, handles_signals=True)
