"""``inboxspec cases expect``: rewrite a case file's expected outputs from the reference,
where the model agrees.

When a rule changes on purpose (a back-off formula, say), every case whose
steps pass through the rule has stale expectations, though its steps and its
intent still stand. Editing each by hand is where mistakes creep in; this
command recomputes them instead, and is safe only because two independent
descriptions must agree first:

- every case is run through the reference (``Machine.run_case``), and its
  expected outputs (or its ``expect_config_error``) become what the reference
  answered;
- every case without an error step is also run through the model chart
  (``Machine.run_model_case``). If the model answers anything else, nothing is
  written for that file, and the disagreement is printed: the rule changed in
  one description but not the other;
- the file as it would be written is held to the machine's interface data
  (``interface_lint``). A step's arguments and expected output are checked
  only then: a step sent with bad arguments on purpose is an error step, and
  whether it is one is what the reference answers (so a new case can be
  written with ``"expect": {}`` on each step and filled in here).

Steps, arguments, descriptions, citations and fixtures are never touched, and
the file keeps its JSON layout (its indent and whether it escapes non-ASCII);
a file whose layout is not one of those is refused rather than reformatted.
The diff is the reviewer's to read: the command says which cases changed.
``--check`` only reports, and exits 1 when any file would change.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import stat
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from inboxspec.conformance import confinement, interface_lint
from inboxspec.conformance.casefiles import (
    MAX_CASE_FILE_BYTES,
    CaseFileError,
    case_file_text,
    case_problems,
    cases_of,
    not_bundled,
    read_case_bytes,
)
from inboxspec.conformance.compare import first_difference
from inboxspec.conformance.reportfile import write_atomically
from inboxspec.conformance.runner import DEFAULT_TIMEOUT_S, seconds_argument

# The outputs a file's cases may come to together, measured as PROTO-RUN-5 measures them (compact):
# the file written holds them indented, so past this it would pass what a case file may hold
# (PROTO-CASES-2), and no command would read it back. Checked as the cases run, so that a file of
# many cases stops before its outputs fill the memory.
_FILE_OUTPUTS = f"past the {MAX_CASE_FILE_BYTES:,} bytes a case file holds (PROTO-CASES-2), with the " \
                f"outputs of the cases before it in the file"

# The layouts a bundled case file is written in: (indent, ensure_ascii).
LAYOUTS = ((2, False), (2, True), (1, False), (1, True))


class ExpectationError(ValueError):
    """A case file this command cannot rewrite: unreadable, in another layout, or the
    reference and the model disagree on it. ``ends_the_run``: a case was cut off inside a step
    (``sessions.CaseCutOff``), so this process runs no further case."""

    def __init__(self, message: str, *, ends_the_run: bool = False) -> None:
        super().__init__(message)
        self.ends_the_run = ends_the_run


@dataclass
class Rewrite:
    path: Path
    read: bytes  # the file's bytes, as its cases were read from them
    folder: tuple[int, int]  # its folder's identity then (``_identity``)
    changed: list[str] = field(default_factory=list)  # ids of the cases whose expectations changed
    model_checked: int = 0
    text: str = ""  # the new file text

    def write(self) -> None:
        """The new text in place of the file, if the file and its folder are still the ones read: the
        cases can run for minutes, and meanwhile an edit of the file was lost without a word, or a
        link put in the folder's place took the write outside it. A change found is an
        ExpectationError, and nothing is written (a change after this look is the editor's race)."""
        try:
            unchanged = _identity(self.path.parent) == self.folder and read_case_bytes(self.path) == self.read
        except (OSError, CaseFileError):
            unchanged = False
        if not unchanged:
            raise ExpectationError("nothing written: it, or the folder it is in, changed while its cases ran")
        try:
            write_atomically(self.path, self.text.encode("utf-8"))
        except OSError as error:  # a read-only or full file system: the next files are still read
            raise ExpectationError(f"nothing written: {error}") from None


def _identity(folder: Path) -> tuple[int, int]:
    """The folder's device and inode, read without following a link at its name (OSError: none there)."""
    info = os.lstat(folder)
    if not stat.S_ISDIR(info.st_mode):
        raise CaseFileError(f"{folder}: a symbolic link or not a directory")
    return info.st_dev, info.st_ino


def layout(text: str, data: Any) -> tuple[int, bool]:
    """The (indent, ensure_ascii) that writes ``data`` back as ``text``, byte for byte."""
    for indent, ensure_ascii in LAYOUTS:
        if case_file_text(data, indent, ensure_ascii) == text:
            return indent, ensure_ascii
    raise ExpectationError("its JSON layout is not one this command writes back unchanged "
                           "(indent 1 or 2, one trailing newline); refusing to reformat it")


def _has_error_step(actual: dict[str, Any]) -> bool:
    return "config_error" in actual or any("error" in output for output in actual["outputs"])


def _first_and_count(problems: list[str]) -> str:
    return problems[0] + (f" (and {len(problems) - 1} more)" if len(problems) > 1 else "")


def rewrite(path: Path, timeout: float = DEFAULT_TIMEOUT_S, *, allow_outside_reads: bool = False) -> Rewrite:
    """The file with every case's expectations from the reference, checked against the model; each
    case's run on each within ``timeout`` seconds (checked between its steps, and cut off inside one at as
    many seconds of processor time, ``sessions.bounded_by``), and the outputs of
    all the cases within what a case file holds. A file from outside the bundled suite whose cases
    may lead the reference to read outside their fixtures is refused unless ``allow_outside_reads``
    (PROTO-FIX-5, as the runner)."""
    # Here, not at the module's top: the command line builds this command's parser for every
    # command, and the sessions' module imports the model charts' library, which no runner reads.
    from inboxspec import machines
    from inboxspec.machines.sessions import (
        CaseBounds,
        CaseCutOff,
        CaseTooSlow,
        OutputsTooLarge,
        bounded_by,
        outputs_size,
    )

    try:
        # Read as the linter reads it first (a regular file of bounded size, plain JSON of bounded
        # depth, the case schema), so that the plain parse of its text below meets nothing worse. Read
        # once: a file saved between two reads gave a KeyError traceback, or one version's outputs
        # written under the other's steps.
        folder = _identity(path.parent)
        raw_bytes = read_case_bytes(path)
        loaded = list(cases_of(path, raw_bytes))
        text = raw_bytes.decode("utf-8")
        data = json.loads(text)
    except (ValueError, OSError, CaseFileError) as error:
        raise ExpectationError(f"cannot read it: {error}") from None
    if data["machine"] not in machines.REGISTRY:
        raise ExpectationError(f"unknown machine {data['machine']!r}")
    # A step's arguments and expected output are checked against the interface data once the
    # reference has answered (below): a step sent with bad arguments on purpose is one whose output
    # is an error, which is what the command is about to find out.
    found = case_problems(loaded) + interface_lint.problems(loaded, outputs_to_come=True)
    if found:  # an unknown event, say: the reference would refuse it with a traceback
        raise ExpectationError(f"it does not pass `inboxspec cases lint`: {_first_and_count(found)}")
    outside = [] if allow_outside_reads else confinement.problems(not_bundled(loaded))
    if outside:
        raise ExpectationError(f"it may lead the reference to read outside its fixtures (PROTO-FIX-5): "
                               f"{_first_and_count(outside)}")
    cases = {case.id: case for case in loaded}
    indent, ensure_ascii = layout(text, data)
    entry = machines.get(data["machine"])
    result = Rewrite(path, read=raw_bytes, folder=folder)
    disagreements: list[str] = []
    written = 0  # the outputs' bytes so far (``_FILE_OUTPUTS``)
    for raw in data["cases"]:
        case = cases[raw["id"]]
        try:
            with bounded_by(CaseBounds(MAX_CASE_FILE_BYTES - written, _FILE_OUTPUTS,
                                       time.monotonic() + timeout)):
                actual = entry.run_case(case.config, case.inputs)
            written += outputs_size(actual.get("outputs", ()))
            if "config_error" in actual and case.steps:
                raise ExpectationError(
                    f"{case.id}: the reference refuses its config ({actual['config_error']}), so no step "
                    f"runs: a case that expects a config error has no steps; nothing written")
            modelled = None
            if not _has_error_step(actual):
                result.model_checked += 1
                with bounded_by(CaseBounds(deadline=time.monotonic() + timeout)):
                    modelled = entry.run_model_case(case.config, case.inputs)
        except (OutputsTooLarge, CaseTooSlow) as error:
            slow = f" (--timeout {timeout:g} s)" if isinstance(error, CaseTooSlow) else ""
            raise ExpectationError(f"{case.id}: {error}{slow}; nothing written",
                                   ends_the_run=isinstance(error, CaseCutOff)) from None
        if modelled is not None and modelled != actual:
            steps = zip(case.steps, actual["outputs"], strict=True)
            recomputed = dataclasses.replace(
                case, steps=tuple({**step, "expect": output} for step, output in steps))
            disagreements.append(f"{case.id}: the model differs from the reference: "
                                 f"{first_difference(recomputed, modelled)}")
            continue
        if actual != case.expected:
            result.changed.append(case.id)
        if "config_error" in actual:
            raw["expect_config_error"] = actual["config_error"]
        else:
            raw.pop("expect_config_error", None)  # the reference builds the config after all
            for step, output in zip(raw["steps"], actual["outputs"], strict=True):
                step["expect"] = output
    if disagreements:
        raise ExpectationError("nothing written:\n  " + "\n  ".join(disagreements))
    answered = [dataclasses.replace(cases[raw["id"]], steps=tuple(raw["steps"]),
                                    expect_config_error=raw.get("expect_config_error"))
                for raw in data["cases"]]
    found = case_problems(answered) + interface_lint.problems(answered)
    if found:  # valid arguments with an error-less output the interface does not define, say
        raise ExpectationError(f"nothing written: with the reference's outputs it does not pass "
                               f"`inboxspec cases lint`: {_first_and_count(found)}")
    result.text = case_file_text(data, indent, ensure_ascii)
    size = len(result.text.encode("utf-8"))
    if size > MAX_CASE_FILE_BYTES:
        raise ExpectationError(f"nothing written: with the reference's outputs it would be {size:,} bytes, "
                               f"past the {MAX_CASE_FILE_BYTES:,} a case file holds (PROTO-CASES-2)")
    return result


def command(args: argparse.Namespace) -> int:
    code = 0
    for position, path in enumerate(args.files):
        try:
            result = rewrite(path, args.timeout, allow_outside_reads=args.allow_outside_reads)
        except ExpectationError as error:  # said on stderr, as every command's errors
            print(f"inboxspec cases expect: {path}: {error}", file=sys.stderr)
            code = 2
            if error.ends_the_run:
                # Cut off inside a step, the reference or the model may have left what it was changing
                # half changed (a shared fixture's paths still swapped: a later file's expectations were
                # rewritten from the swapped tree), so no further case runs in this process.
                rest = args.files[position + 1:]
                if rest:
                    print(f"inboxspec cases expect: not read, as a case was cut off inside a step: "
                          f"{', '.join(map(str, rest))}", file=sys.stderr)
                return code
            continue
        verb = "would change" if args.check else "changed"
        if result.changed and args.check:
            code = max(code, 1)
        elif result.changed:
            try:  # first: a file not written says nothing changed
                result.write()
            except ExpectationError as error:
                print(f"inboxspec cases expect: {path}: {error}", file=sys.stderr)
                code = 2
                continue
        for case_id in result.changed:
            print(f"{path}: {case_id}: expectations {verb}")
        print(f"{path}: {len(result.changed)} case(s) {verb}; "
              f"{result.model_checked} checked against the model")
    return code


def add_parser(cases_commands: Any) -> None:
    parser = cases_commands.add_parser(
        "expect", help="rewrite case files' expected outputs from the reference, where the model agrees")
    parser.add_argument("files", nargs="+", type=Path, metavar="FILE", help="case files to rewrite")
    parser.add_argument("--check", action="store_true", help="only report; exit 1 when a file would change")
    parser.add_argument("--timeout", type=seconds_argument, default=DEFAULT_TIMEOUT_S, metavar="SECONDS",
                        help="seconds a case may run on the reference, and again on the model, a step "
                             "included (default %(default)s, as conform's)")
    parser.add_argument(confinement.ALLOW_OPTION, action="store_true",
                        help="rewrite a file from outside the bundled suite whose cases may lead the "
                             "reference to read outside their fixtures (PROTO-FIX-5); refused by default")
    parser.set_defaults(func=command)

