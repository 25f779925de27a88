"""``inboxspec conform``: run the conformance cases through an adapter.

The runner trusts nothing the adapter says. Every reply is validated against
the protocol's JSON Schema and must echo the request's ``seq`` and case id.
Any fault (a crash, a hang past the per-case timeout, a line that is not
JSON, is too long, or answers another case) errors that one case; the
adapter is then restarted and the run goes on. Only an adapter that cannot
complete ``start`` makes the run unusable (exit 2); when that is a restart, the
report still holds what the run answered before it (PROTO-RUN-6).

Skip-file entries are still run: one that passes is reported as an
unexpected pass and fails the run, so the list cannot rot.

A run proves only what it executed. One that executed no case (every case
skipped, none selected, an adapter that lists no machine) is not a pass but an
unusable run, and ``--require MACHINE`` / ``--min-executed N`` let a pipeline
demand coverage (PROTO-EXEC-1, PROTO-EXEC-2). ``--fuzz N`` sends random traces
instead of the bundled cases, so an adapter cannot look the answers up
(``conformance/fuzz.py``).
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import dataclasses
import fnmatch
import functools
import heapq
import json
import math
import os
import re
import secrets
import stat
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, NamedTuple

import fastjsonschema

from inboxspec.conformance import confinement, interface_lint, process_tree, warden
from inboxspec.conformance.adapter_process import (
    DEFAULT_MAX_LINE_BYTES,
    STOP_GRACE_S,
    AdapterFault,
    AdapterProcess,
    kill_all,
    split_command,
)
from inboxspec.conformance.casefiles import (
    Case,
    CaseFileError,
    load_cases,
    not_bundled,
    read_regular_file,
    replies_past_the_bound,
)
from inboxspec.conformance.compare import (
    STDERR_TAIL,
    Difference,
    cut_text,
    find_difference,
    indented_block,
    message_lines,
    one_line,
    printable_json,
    safe_output,
)
from inboxspec.conformance.fixtures import FixtureError, FixturePool, FixtureTimeout, may_change, undo
from inboxspec.conformance.interrupts import RunInterrupted, interruptible, raise_if_interrupted, received
from inboxspec.conformance.interrupts import exit_code as interrupt_exit_code
from inboxspec.conformance.progress import Progress
from inboxspec.conformance.reportfile import ReportCut, print_json, print_whole, writing_report
from inboxspec.machines.frame import bound_integer
from inboxspec.machines.schema_dialect import unique_items_in_linear_time

PROTOCOL_VERSION = 1
DEFAULT_TIMEOUT_S = 10.0
DEFAULT_START_TIMEOUT_S = 20.0
# Run requests in flight at once. Overlapping the adapter's work with the
# runner's checking is what keeps the protocol path near in-process speed.
DEFAULT_WINDOW = 16
# WARNING: spec/conformance-protocol.md (PROTO-CLI-1, PROTO-FUZZ-4) states these two; change both together.
# The largest number of seconds any option takes: a day. Past it a timer overflows the
# system's (select takes no 1e300), and nothing the runner waits for needs longer.
MAX_SECONDS = 86400.0
FUZZ_SEED_BITS = 32

# Outcomes of one case.
PASS, FAIL, ERROR, SKIP = "pass", "fail", "error", "skip"
ERRORED = "errored"  # an error result's fault when the adapter itself answered `errored`
EXPECTED_FAIL, UNEXPECTED_PASS = "expected-fail", "unexpected-pass"


class UnusableRun(Exception):
    """The run cannot proceed at all (exit code 2): ``problems`` lists why, the message first."""

    def __init__(self, message: str, problems: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.problems = list(problems) or [message]


def _protocol_schema(name: str) -> dict[str, Any]:
    path = resources.files("inboxspec.conformance").joinpath(f"schemas/protocol/{name}")
    schema: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return schema


def _protocol_validator(name: str) -> Callable[[Any], Any]:
    """A compiled validator for one protocol message schema.

    Every reply is validated, so this is on the runner's hot path:
    fastjsonschema compiles the schema to Python (about 8 us a reply here,
    against about 46 us for jsonschema's interpreter; see
    benchmarks/conformance_throughput.py). The protocol schemas are draft-07
    for that reason; case files, validated once, use jsonschema and 2020-12.
    """
    validate: Callable[[Any], Any] = fastjsonschema.compile(_protocol_schema(name))
    # An adapter's reply is hostile: a start reply's ``machines`` of integers that all hash alike took
    # 22 minutes to refuse, deaf to signals (found by an attack helper).
    unique_items_in_linear_time(validate)
    return validate


START_REPLY = _protocol_validator("start-reply.schema.json")
RUN_REPLY = _protocol_validator("run-reply.schema.json")
# The members of a start reply's implementation that a report keeps (PROTO-START-1): those its schema
# names, each of a bounded length; another member, of any size, is left out (PROTO-REPORT-1).
REPORTED_IMPLEMENTATION = tuple(
    _protocol_schema("start-reply.schema.json")["properties"]["implementation"]["properties"])
# The kinds of run reply, one of which each carries: the run reply schema's oneOf, each a `required`.
_REPLY_KINDS = tuple(kind for alternative in _protocol_schema("run-reply.schema.json")["oneOf"]
                     for kind in alternative["required"])
# Characters of a text the adapter wrote that a result's detail quotes (a skip's reason, an errored
# message and its context, a wrong seq or id), then the count left out: a result kept each whole, and
# the report grew with every reply (PROTO-REPORT-1); a listing's warning quotes a name so (PROTO-START-1).
# WARNING: spec/conformance-protocol.md gives this number; tests/test_conform_process.py compares them.
QUOTED_CHARS = 300
_FIXTURES = FixturePool()  # the temporary fixture directories of the current run
_LAYOUT_SECONDS: dict[int, float] = {}  # per seq: time spent laying out its fixture (PROTO-FIX-3)


def _protocol_problem(validate: Callable[[Any], Any], message: Any) -> str | None:
    try:
        validate(message)
    except fastjsonschema.JsonSchemaValueException as error:
        return str(error.message)
    return None


@dataclass
class CaseResult:
    case: Case
    outcome: str
    detail: str = ""
    # Where a failing result first departs from the expectation (compare.py).
    difference: Difference | None = None
    # From sending the case's request to judging its reply; None when nothing was sent.
    seconds: float | None = None
    # For an error, and only then: the fault (adapter_process.CASE_FAULTS), which the detail starts
    # with, or ERRORED for the adapter's own `errored` reply, whose detail starts `adapter errored: `.
    fault: str | None = None

    def as_json(self) -> dict[str, Any]:
        body: dict[str, Any] = {"id": self.case.id, "machine": self.case.machine,
                                "outcome": self.outcome, "detail": self.detail}
        if self.fault is not None:
            body["fault"] = self.fault
        if self.difference is not None:
            body["first_difference"] = self.difference.as_json()
        if self.seconds is not None:
            body["seconds"] = round(self.seconds, 6)
        return body


@dataclass
class Selection:
    run: list[str] = field(default_factory=list)
    skip: list[str] = field(default_factory=list)
    features: list[str] = field(default_factory=list)
    without_features: list[str] = field(default_factory=list)
    expected_failures: list[str] = field(default_factory=list)

    def wants(self, case: Case) -> bool:
        if self.run and not any(fnmatch.fnmatchcase(case.id, g) for g in self.run):
            return False
        if any(fnmatch.fnmatchcase(case.id, g) for g in self.skip):
            return False
        return not self.features or bool(set(self.features) & set(case.features))

    def expects_failure(self, case: Case) -> bool:
        return self._expected_failure(case.id)

    @functools.cached_property
    def _expected_failure(self) -> Callable[[str], bool]:
        return glob_matcher(self.expected_failures)


def glob_matcher(globs: Sequence[str]) -> Callable[[str], bool]:
    """Whether an id matches one of ``globs`` as ``fnmatch.fnmatchcase`` matches: a glob without a
    wildcard (``*``, ``?``, ``[``) is the id itself, looked up in a set, so that a skip file of a
    thousand ids costs a lookup per case, not a thousand matches."""
    literal = {glob for glob in globs if not has_wildcard(glob)}
    patterns = [re.compile(fnmatch.translate(glob)).match for glob in globs if has_wildcard(glob)]
    return lambda case_id: case_id in literal or any(match(case_id) for match in patterns)


_WILDCARDS = frozenset("*?[")


def has_wildcard(glob: str) -> bool:
    """Whether ``glob`` matches more than the id it spells (``fnmatch``'s ``*``, ``?`` or ``[``)."""
    return not _WILDCARDS.isdisjoint(glob)


# The largest skip file read: a line per case of every machine is far less.
MAX_SKIP_FILE_BYTES = 1024 * 1024

# WARNING: written out in spec/conformance-protocol.md (PROTO-CLI-2); change both together.
# The most entries with a wildcard that the skip files of one run hold together. An entry without
# one is the id itself, looked up in a set; one with a wildcard is matched against every case id
# (``glob_matcher``, ``unmatched_skip_entries``): a skip file of 56,000 such entries took 8 s
# before the run even started, and one whose entries each match one case, about a minute.
MAX_SKIP_WILDCARD_ENTRIES = 1000
# The longest glob of --run, --skip or a skip file (PROTO-CLI-2), in characters: five times the longest
# case id (200, the case-file schema). fnmatch looks for the ``]`` that closes each ``[`` to the end of
# the glob, so its time grows with the square of the glob's length: one skip-file entry of 60,000
# ``[`` took 92 s, the run deaf to SIGTERM meanwhile, and a skip file may hold 1 MiB of them.
# WARNING: spec/conformance-protocol.md states it (PROTO-CLI-2); change both together.
MAX_GLOB_CHARS = 1000


class SkipEntry(NamedTuple):
    """One glob of a skip file, with where it was written (for the message that refuses it)."""

    path: Path
    line: int
    glob: str


def read_skip_file(path: Path) -> list[SkipEntry]:
    """A skip file's globs: a regular file of UTF-8 text, at most MAX_SKIP_FILE_BYTES, read as case
    files are (a FIFO hung the runner in ``open``, past every signal; ``/dev/zero`` filled memory)."""
    try:
        text = read_regular_file(path, "a skip file", MAX_SKIP_FILE_BYTES).decode("utf-8")
    except (CaseFileError, UnicodeDecodeError) as error:
        raise UnusableRun(f"cannot read skip file {path}: {error}") from None
    # A line ends at a newline alone (PROTO-CLI-2): str.splitlines would also end one at a form feed
    # or U+2028, so "# a comment<U+2028>wake-gate/*" skipped every wake-gate case.
    entries = [SkipEntry(path, number, glob) for number, line in enumerate(text.split("\n"), 1)
               if (glob := line.split("#", 1)[0].strip())]
    for entry in entries:
        if len(entry.glob) > MAX_GLOB_CHARS:
            raise UnusableRun(f"skip file {path}: line {entry.line}: a glob of {len(entry.glob):,} "
                              f"characters, more than {MAX_GLOB_CHARS:,}")
    return entries


def read_skip_files(paths: Iterable[Path]) -> list[SkipEntry]:
    """Every entry of the skip files, in order; UnusableRun past MAX_SKIP_WILDCARD_ENTRIES entries
    with a wildcard in all of them."""
    entries = [entry for path in paths for entry in read_skip_file(path)]
    wildcards = sum(1 for entry in entries if has_wildcard(entry.glob))
    if wildcards > MAX_SKIP_WILDCARD_ENTRIES:
        raise UnusableRun(f"the skip files hold {wildcards} entries with a wildcard (*, ? or [), more than "
                          f"{MAX_SKIP_WILDCARD_ENTRIES}: list the case ids themselves")
    return entries


def unmatched_skip_entries(entries: Sequence[SkipEntry], cases: Sequence[Case],
                           machines_of_run: Iterable[str]) -> list[str]:
    """A problem per skip-file entry that matches the id of none of ``cases`` (those the run loaded,
    before ``--run``, ``--skip`` and the features select among them): a typo, a case renamed or
    removed, or a byte that does not show (a byte-order mark). Such an entry would stay in the list
    for ever, marking nothing, so the run is refused instead. An entry whose text before its first
    ``/``, as a glob, matches a registered machine that this run does not cover (``--machine``) may
    be another run's (``peer-delivery/x``, ``peer-*/host/*``, ``*/host/x``), and is not checked."""
    from inboxspec import machines

    others = set(machines.names()) - set(machines_of_run)
    ids = [case.id for case in cases]
    known = set(ids)

    def another_runs(glob: str) -> bool:
        prefix = glob.split("/", 1)[0]
        if not has_wildcard(prefix):  # a machine's name itself: one lookup, as for an id below. Matched
            return prefix in others  # as a glob, each of 160,000 ids took a pattern's compiling: 23 s
        return any(fnmatch.fnmatchcase(other, prefix) for other in others)

    def matches_a_case(glob: str) -> bool:
        if not has_wildcard(glob):  # the id itself (glob_matcher's split): one lookup
            return glob in known
        return any(map(glob_matcher([glob]), ids))

    return [f"skip file {entry.path}: line {entry.line}: {entry.glob!r} matches no case of this run"
            for entry in entries if not another_runs(entry.glob) and not matches_a_case(entry.glob)]


class Session:
    """The adapter across restarts: what it said in ``start``, and a fresh process on demand."""

    def __init__(self, command: str, start_timeout: float, max_line_bytes: int) -> None:
        self.command = command
        self.start_timeout = start_timeout
        self.max_line_bytes = max_line_bytes
        self.process: AdapterProcess | None = None
        self.implementation: dict[str, Any] = {}
        self.machines: set[str] = set()
        self.features: dict[str, set[str]] = {}
        self.restarts = 0
        self.stop_warnings: list[str] = []  # what the end of the run found (``stop``)
        # The cases answered in this run, by seq (``run_cases``, PROTO-RUN-4): kept for the session,
        # across restarts as within one ``run_cases`` call, not for one call alone. ``--fuzz`` runs
        # cases in several calls (a machine's, then each shrink candidate's), and a reply sent twice for
        # the last case of one call was blamed on the first case of the next (wrong-seq), which a shrink
        # then "kept failing" into a counterexample that passed on replay (found by an attack helper).
        self.answered: dict[int, Case] = {}

    def start(self) -> None:
        try:
            # The same directory for every start of the run, removed with the fixtures (PROTO-PROC-6).
            temporary = _FIXTURES.root.adapter_temporary()
        except FixtureError as error:  # no adapter was started: the run's own directory failed
            raise UnusableRun(f"no adapter can be started without its temporary directory "
                              f"({error})") from None
        try:
            process = AdapterProcess(self.command, self.max_line_bytes, temporary)
        except AdapterFault as fault:
            raise UnusableRun(f"the adapter did not start ({fault.detail})") from fault
        try:
            self._handshake(process)
        except BaseException:
            process.kill()  # a failed or interrupted start leaves nothing running
            raise

    def _handshake(self, process: AdapterProcess) -> None:
        try:
            process.send({"cmd": "start", "version": PROTOCOL_VERSION})
            reply = process.receive(self.start_timeout)
            problem = _protocol_problem(START_REPLY, reply)
            if problem is not None:
                raise AdapterFault("bad-start", problem)
        except AdapterFault as fault:
            tail = process.stderr_tail().strip()
            process.kill()
            quoted = "\n".join(f"  {line}" for line in tail.split("\n"))
            hint = f"{STDERR_TAIL}{quoted}" if tail else ""
            raise UnusableRun(
                f"the adapter did not complete start ({fault.kind}: {fault.detail}){hint}"
            ) from fault
        sent = reply["implementation"]
        implementation = {member: sent[member] for member in REPORTED_IMPLEMENTATION if member in sent}
        machines = set(reply["machines"])
        features = {m: set(f) for m, f in reply.get("features", {}).items()}
        if self.restarts and (implementation, machines, features) != (
                self.implementation, self.machines, self.features):
            # PROTO-RUN-6: the cases were chosen by the first listing, and a report names one
            # implementation; an adapter that starts again as another is a restart that failed.
            process.kill()
            raise UnusableRun("the restarted adapter's start reply lists another implementation, other "
                              "machines or other features than its first start")
        self.process = process
        self.implementation, self.machines, self.features = implementation, machines, features

    def restart(self) -> None:
        if self.process is not None:
            self.process.kill()
        self.process = None
        self.restarts += 1
        self.start()

    def stop(self) -> None:
        if self.process is not None:
            status = self.process.stop()
            if status is None:
                self.stop_warnings.append(
                    f"the adapter did not exit within {STOP_GRACE_S:g} s of stop (PROTO-STOP-1); "
                    f"the runner ended its processes")
            elif status != 0:
                how = f"was ended by signal {-status}" if status < 0 else f"exited with status {status}"
                self.stop_warnings.append(f"the adapter {how} after stop (PROTO-STOP-1)")
            self.process = None

    def kill(self) -> None:
        """End the adapter's tree at once, without asking: an interrupted run."""
        if self.process is not None:
            self.process.kill()
            self.process = None


def unsupported_reason(session: Session, case: Case,
                        without_features: Iterable[str]) -> str | None:
    if case.machine not in session.machines:
        return f"the adapter does not support machine {case.machine}"
    missing = [f for f in case.features
               if f not in session.features.get(case.machine, set()) or f in without_features]
    if missing:
        return f"unsupported feature(s): {', '.join(missing)}"
    return None


# The most unknown listings (``unknown_listings``) a report names one by one.
# WARNING: spec/conformance-protocol.md (PROTO-START-1) gives this number, as it gives QUOTED_CHARS
# (PROTO-REPORT-1); tests/test_conform_process.py compares them.
MAX_LISTING_WARNINGS = 20


def unknown_listings(session: Session, cases: Iterable[Case]) -> list[str]:
    """What the adapter's start lists that nothing knows (PROTO-START-1): a machine that is not
    registered, or, for a machine this run has cases of, a feature that none of them carries and the
    machine does not define. Not an error (a port may list what a later suite uses), but a feature
    listed under a misspelt name skips, silently, every case that needs the real one. (Only the
    machines with cases are read: reading a machine imports its module.)"""
    from inboxspec import machines

    tags: dict[str, set[str]] = defaultdict(set)
    for case in cases:
        tags[case.machine].update(case.features)
    # A start reply may list a million names within the line bound: the report names the first few,
    # and only those are written out (each of 1.2 million was, before 20 were kept: 497 MB, found by
    # an attack helper). In order: the unknown machines, then each machine's unknown features.
    warnings: list[str] = []
    more = 0
    unknown_machines = [name for name in session.machines if name not in machines.REGISTRY]
    named = heapq.nsmallest(MAX_LISTING_WARNINGS, unknown_machines)
    more += len(unknown_machines) - len(named)
    warnings += [f"the adapter lists machine {_quoted(repr(name))}, which is not one of "
                 f"{', '.join(machines.names())}" for name in named]
    for name, listed in sorted(session.features.items()):
        if name not in tags:
            continue
        known = tags[name] | set(machines.features(name) if name in machines.REGISTRY else ())
        unknown = listed - known
        named = heapq.nsmallest(MAX_LISTING_WARNINGS - len(warnings), unknown)
        more += len(unknown) - len(named)
        warnings += [f"the adapter lists feature {_quoted(repr(feature))} for {name}, which no case of this "
                     f"run carries and {name} does not define: a misspelt feature skips the cases that need "
                     "the real one" for feature in named]
    if more:
        warnings.append(f"and {more} more unknown machine(s) or feature(s)")
    return warnings


def _request(case: Case, seq: int, timeout: float | None = None) -> dict[str, Any]:
    body = {"id": case.id, "machine": case.machine, "config": case.config, "steps": case.inputs}
    if "fixture" in case.config:
        # PROTO-FIX-1: a fresh tree for every request that can change it, a checked shared one
        # otherwise (PROTO-FIX-4); every one removed at the end. Laying it out counts against the
        # case's timeout (PROTO-FIX-3).
        began = time.monotonic()
        shared = not may_change(case.machine, [str(step.get("event")) for step in case.steps])
        try:
            body["fixture_dir"] = _FIXTURES.directory_for(
                case.config["fixture"], shared=shared,
                deadline=None if timeout is None else began + timeout,
                lend_to=seq, restore=undo(case.machine, case.inputs))
        except FixtureTimeout as error:
            raise AdapterFault("fixture-timeout", str(error)) from None
        except FixtureError as error:
            raise FixtureLost(f"{case.source}: {case.id}: {error}") from None
        _LAYOUT_SECONDS[seq] = time.monotonic() - began
    return {"cmd": "run", "seq": seq, "case": body}


def _reply_problem(reply: Any, problem: str) -> str:
    """What is wrong with a run reply, as the schema found it; where the reply carries not exactly one
    of its kinds, which it carries, since the schema's own words for that ("valid exactly by one
    definition") name none."""
    if isinstance(reply, dict):
        kinds = [kind for kind in _REPLY_KINDS if kind in reply]
        if len(kinds) != 1:
            carried = ", ".join(kinds) if kinds else "none of them"
            return f"a run reply carries exactly one of {', '.join(_REPLY_KINDS)}; this one carries {carried}"
    return problem[:200]


def _reply_timeout(timeout: float, seq: int) -> float:
    """What is left of a case's timeout once its fixture is laid out (PROTO-FIX-3)."""
    return max(timeout - _LAYOUT_SECONDS.pop(seq, 0.0), 0.0)


def _quoted(text: str) -> str:
    """A text of the adapter's as a result's detail quotes it (``QUOTED_CHARS``)."""
    return cut_text(text, QUOTED_CHARS)


def _judge(case: Case, seq: int, reply: Any) -> CaseResult:
    """What one reply means for its case; an AdapterFault if the reply breaks the protocol."""
    problem = _protocol_problem(RUN_REPLY, reply)
    if problem is not None:
        shown = _reply_problem(reply, problem)
        raise AdapterFault("bad-reply", f"reply does not match the protocol: {shown}")
    if reply["seq"] != seq or type(reply["seq"]) is not int:
        raise AdapterFault("wrong-seq", f"reply seq {_quoted(repr(reply['seq']))} is not {seq}")
    if reply["id"] != case.id:
        raise AdapterFault("wrong-case", f"reply is for case {_quoted(repr(reply['id']))}")
    if "skipped" in reply:
        return CaseResult(case, SKIP, f"adapter skipped: {_quoted(reply['skipped']['reason'])}")
    if "errored" in reply:
        errored = reply["errored"]
        context = f" {_quoted(json.dumps(errored['context']))}" if "context" in errored else ""
        message = _quoted(errored["message"])
        return CaseResult(case, ERROR, f"adapter errored: {message}{context}", fault=ERRORED)
    difference = find_difference(case, reply["result"])
    if difference is None:
        return CaseResult(case, PASS)
    return CaseResult(case, FAIL, difference.render(), difference)


def _fault_result(session: Session, case: Case, fault: AdapterFault) -> CaseResult:
    """The error of the case a fault blames; the caller restarts the adapter once it has yielded
    the result (``_restarted``)."""
    detail = f"{fault.kind}: {fault.detail}"
    tail = session.process.stderr_tail().strip() if session.process else ""
    if tail and fault.kind == "crashed":
        detail += f"\n    adapter stderr (tail): {tail[-400:]}"
    return CaseResult(case, ERROR, detail, fault=fault.kind)


class EndedMidRun(UnusableRun):
    """The run cannot go on, and ends where it is: what the adapter answered so far is still
    reported (PROTO-RUN-6), and the run is unusable."""


class RestartFailed(EndedMidRun):
    """The adapter did not start again after a fault (PROTO-RUN-6): the run ends there, and what it
    answered so far, the case the fault blamed included, is still reported."""


class FixtureLost(EndedMidRun):
    """A case's fixture could not be laid out once cases had run (the run's root replaced, the disk
    full): the run ends there, and what was answered before is still reported (PROTO-FIX-1). It lost
    every result before (found by an attack helper)."""


def _restarted(session: Session, blamed: CaseResult) -> None:
    """A new adapter after the fault that errored ``blamed``; RestartFailed when it does not start.

    Called after ``blamed`` is yielded, so that the run has it when the restart fails."""
    try:
        session.restart()
    except UnusableRun as error:
        raise RestartFailed(f"after {blamed.case.id} ({blamed.detail}), restart failed: {error}") from error


def _timed(result: CaseResult, sent_at: float | None) -> CaseResult:
    """``result`` with the time from its request's send to now, when it was sent."""
    if sent_at is not None:
        result.seconds = time.monotonic() - sent_at
    return result


def _answered_before(reply: Any, answered: dict[int, Case]) -> tuple[int, Case] | None:
    """The earlier case this reply answers again: it echoes that case's ``seq`` *and* id.

    A reply with an answered ``seq`` and some other id is no second answer to
    anything: it is a wrong reply to the case being waited for, which takes
    the blame (PROTO-RUN-4).
    """
    seq = reply.get("seq") if isinstance(reply, dict) else None
    if type(seq) is int and seq in answered and reply.get("id") == answered[seq].id:
        return seq, answered[seq]
    return None


def run_cases(session: Session, work: list[tuple[int, Case]], timeout: float,
              window: int, *, deadline: float | None = None) -> Iterator[tuple[int, CaseResult]]:
    """Run cases through the adapter, keeping up to ``window`` requests in flight.

    Adapters answer in request order, so the oldest unanswered case is the one
    the adapter was working on when anything went wrong: it takes the blame,
    the adapter is restarted, and the other in-flight cases are sent again.
    The per-case timeout runs from the moment a case becomes the oldest.

    A reply that repeats the ``seq`` of a case already answered (in this call or an earlier one of
    the session: ``Session.answered``) blames that case, not the one waiting
    (PROTO-RUN-4): the result already yielded for its seq is replaced by yielding the seq again,
    which may be a seq of an earlier call.

    With ``deadline`` (``time.monotonic()``), the call ends when it passes, whatever is left: the
    cases not answered are not yielded, and an adapter still working on one is restarted, so that
    no reply of this call reaches the next. (A shrink's cap, PROTO-FUZZ-3: answers to earlier
    candidates sent again each restarted the adapter and sent the case again, 92 s for a 3 s cap.)
    """
    pending = collections.deque(work)
    in_flight: collections.deque[tuple[int, Case]] = collections.deque()
    answered = session.answered
    sent_at: dict[int, float] = {}  # per-case timing (CaseResult.seconds): the latest send
    while pending or in_flight:
        raise_if_interrupted()
        if deadline is not None and time.monotonic() >= deadline:
            _end_at_deadline(session, in_flight, pending)
            return
        while pending and len(in_flight) < window:
            seq, case = pending[0]
            assert session.process is not None
            try:
                session.process.send(_request(case, seq, timeout))
            except AdapterFault as fault:
                if in_flight:
                    break  # an earlier case brought the adapter down; receiving will say which
                pending.popleft()
                blamed = _fault_result(session, case, fault)
                yield seq, blamed
                _restarted(session, blamed)
                _FIXTURES.release(seq)  # its adapter ended: its tree is done with
                continue
            sent_at[seq] = time.monotonic()
            in_flight.append(pending.popleft())
        if not in_flight:
            continue
        seq, case = in_flight.popleft()
        assert session.process is not None
        wait = _reply_timeout(timeout, seq)
        # The wait, too, ends at the deadline: the adapter's reply after it is not taken.
        cut = deadline is not None and deadline - time.monotonic() < wait
        if deadline is not None and cut:
            wait = max(deadline - time.monotonic(), 0.0)
        try:
            reply = session.process.receive(wait)
            earlier = _answered_before(reply, answered)
            if earlier is not None:
                in_flight.appendleft((seq, case))
                pending.extendleft(reversed(in_flight))
                in_flight.clear()
                earlier_seq, earlier_case = earlier
                # Answered no more (PROTO-RUN-4): the same reply again after the restart is a wrong
                # reply to the case waited for, which it uses up. Kept answered, the case was blamed
                # again after every restart, and the run never ended (found by an attack helper).
                del answered[earlier_seq]
                duplicate = AdapterFault("duplicate-reply",
                                         f"the adapter answered this case (seq {earlier_seq}) twice")
                blamed = _timed(_fault_result(session, earlier_case, duplicate), sent_at.get(earlier_seq))
                yield earlier_seq, blamed
                _restarted(session, blamed)
                continue
            result = _judge(case, seq, reply)
            _FIXTURES.release(seq)  # PROTO-FIX-4: its tree restored for the next case, or removed
            answered[seq] = case
        except AdapterFault as fault:
            if cut and fault.kind == "timeout":  # the deadline's, not the adapter's: no blame
                in_flight.appendleft((seq, case))
                _end_at_deadline(session, in_flight, pending)
                return
            pending.extendleft(reversed(in_flight))
            in_flight.clear()
            blamed = _timed(_fault_result(session, case, fault), sent_at.get(seq))
            yield seq, blamed
            _restarted(session, blamed)
            _FIXTURES.release(seq)  # its adapter ended: its tree is done with
            continue
        yield seq, _timed(result, sent_at.get(seq))


def _end_at_deadline(session: Session, in_flight: Iterable[tuple[int, Case]],
                     pending: Iterable[tuple[int, Case]]) -> None:
    """The end of a ``run_cases`` call at its deadline: an adapter still working on a case of the call
    is restarted, so that no reply of this call reaches the next, and every case's tree goes."""
    unanswered = list(in_flight)
    if unanswered:
        try:
            session.restart()
        except UnusableRun as error:
            raise RestartFailed(f"after the cap on the time of {unanswered[0][1].id}, restart "
                                f"failed: {error}") from error
    for seq, _case in [*unanswered, *pending]:
        _FIXTURES.release(seq)


@dataclass(frozen=True)
class Coverage:
    """What a run must have executed to count (PROTO-EXEC-1, PROTO-EXEC-2)."""

    require: tuple[str, ...] = ()
    min_executed: int = 1
    # The most cases that may be skipped, whatever skipped them (None: any number). A port that
    # lists no feature, or answers `skipped` to what it cannot run, otherwise passes with skips.
    max_skipped: int | None = None


def _tally(results: Iterable[CaseResult]) -> dict[str, int]:
    outcomes = Counter(r.outcome for r in results)
    return {
        "executed": sum(n for outcome, n in outcomes.items() if outcome != SKIP),
        "passed": outcomes[PASS],
        "failed": outcomes[FAIL] + outcomes[UNEXPECTED_PASS],
        "errored": outcomes[ERROR],
        "skipped": outcomes[SKIP],
        "expected_failures": outcomes[EXPECTED_FAIL],
    }


@dataclass
class RunReport:
    implementation: dict[str, Any]
    results: list[CaseResult]
    restarts: int
    seconds: float
    coverage: Coverage = field(default_factory=Coverage)
    # Machines the run was meant to cover (selected cases, or fuzzed machines),
    # so that a machine with nothing executed still gets its row.
    machines: tuple[str, ...] = ()
    extra: dict[str, Any] = field(default_factory=dict)
    # The signal that ended the run early (PROTO-SIG-1): the results are those so far.
    interrupted: str | None = None
    # Why the run ended early without a signal: the adapter did not start again after a fault
    # (PROTO-RUN-6). The results are those so far, and the run is unusable (exit 2).
    unusable: str | None = None
    # Reported, not failed: what the adapter's start listed that nothing knows (``unknown_listings``)
    # and an adapter that outlived ``stop`` (``Session.stop``).
    warnings: list[str] = field(default_factory=list)

    def counts(self) -> dict[str, dict[str, int]]:
        """Per machine: executed, passed, failed, errored, skipped, expected failures."""
        by_machine: dict[str, list[CaseResult]] = defaultdict(list)
        for machine in (*self.machines, *self.coverage.require):
            by_machine.setdefault(machine, [])
        for result in self.results:
            by_machine[result.case.machine].append(result)
        return {m: _tally(r) for m, r in sorted(by_machine.items())}

    @property
    def executed(self) -> int:
        return sum(1 for r in self.results if r.outcome != SKIP)

    @property
    def failed(self) -> bool:
        return any(r.outcome in (FAIL, ERROR, UNEXPECTED_PASS) for r in self.results)

    def coverage_problems(self) -> list[str]:
        """Why this run proves too little to pass; empty when it proves enough."""
        problems: list[str] = []
        if self.executed == 0:
            problems.append(f"no case was executed ({len(self.results)} selected, "
                            f"{sum(1 for r in self.results if r.outcome == SKIP)} skipped)")
        elif self.executed < self.coverage.min_executed:
            problems.append(f"{self.executed} case(s) executed, fewer than "
                            f"--min-executed {self.coverage.min_executed}")
        counts = self.counts()
        for machine in self.coverage.require:
            if counts[machine]["executed"] == 0:
                problems.append(f"--require {machine}: no case of it was executed")
        skipped = [r for r in self.results if r.outcome == SKIP]
        if self.coverage.max_skipped is not None and len(skipped) > self.coverage.max_skipped:
            first = skipped[0]
            problems.append(f"{len(skipped)} case(s) skipped, more than --max-skipped "
                            f"{self.coverage.max_skipped} (the first: {first.case.id}, {first.detail})")
        return problems

    @property
    def ok(self) -> bool:
        return (not self.failed and not self.coverage_problems() and self.interrupted is None
                and self.unusable is None)

    @property
    def exit_code(self) -> int:
        """128 + the signal for an interrupted run; 2 for a run a failed restart ended; 1 for any
        failure; otherwise 2 when the run proves too little; else 0."""
        if self.interrupted is not None:
            return interrupt_exit_code(self.interrupted)
        if self.unusable is not None:
            return 2
        if self.failed:
            return 1
        return 2 if self.coverage_problems() else 0

    def as_json(self) -> dict[str, Any]:
        # WARNING: conformance/schemas/conform-report.schema.json describes these fields, and
        # ``unusable_report``'s; change both together (tests/report_schema.py checks every report
        # the runner tests read against it).
        totals: Counter[str] = Counter(r.outcome for r in self.results)
        return {
            "ok": self.ok,
            "implementation": self.implementation,
            "executed": self.executed,
            "coverage_problems": self.coverage_problems(),
            "totals": {k: totals.get(k, 0) for k in
                       (PASS, FAIL, ERROR, SKIP, EXPECTED_FAIL, UNEXPECTED_PASS)},
            "machines": self.counts(),
            "restarts": self.restarts,
            "seconds": round(self.seconds, 3),
            "results": [r.as_json() for r in self.results],
            "interrupted": self.interrupted,
            "warnings": self.warnings,
            # Only in a run that a failed restart ended (PROTO-RUN-6), as in the report of a run that
            # could not start (``unusable_report``).
            **({"unusable": self.unusable, "problems": [self.unusable]} if self.unusable is not None else {}),
            **self.extra,
        }


def conform(command: str, cases: list[Case], selection: Selection, *, timeout: float,
            start_timeout: float, max_line_bytes: int, progress: bool,
            window: int = DEFAULT_WINDOW, coverage: Coverage | None = None,
            allow_outside_reads: bool = False) -> RunReport:
    began = time.monotonic()
    chosen = [c for c in cases if selection.wants(c)]
    # PROTO-CASES-1: what `cases lint` rejects is not run. The loader has checked all else it
    # checks; a case's departures from its machine's interface data (an unknown event, an argument
    # the event does not take) are checked here, for the cases this run sends that are not the
    # package's own (``check`` lints those, and the lint costs half a second a run); and so, unless
    # the run allows reads outside, is that each keeps a port's reads inside its fixture (PROTO-FIX-5).
    foreign = not_bundled(chosen)
    problems = interface_lint.problems(foreign)
    if not allow_outside_reads:
        problems += confinement.problems(foreign)
    problems += replies_past_the_bound(enumerate(chosen, start=1), max_line_bytes)  # PROTO-FRAME-3
    if problems:
        raise CaseFileError(problems[0], problems)
    session = Session(command, start_timeout, max_line_bytes)
    session.start()
    coverage = coverage or Coverage()
    results: dict[int, CaseResult] = {}
    work: list[tuple[int, Case]] = []
    for seq, case in enumerate(chosen, start=1):
        reason = unsupported_reason(session, case, selection.without_features)
        if reason is None:
            work.append((seq, case))
        else:
            results[seq] = CaseResult(case, SKIP, reason)
    warnings = unknown_listings(session, cases)
    shown = Progress(Counter(c.machine for c in chosen), enabled=progress)
    for seq, result in results.items():
        shown.finished(result.case.machine, seq)
    interrupted: str | None = None
    unusable: str | None = None
    try:
        shown.start()
        for seq, result in run_cases(session, work, timeout, window):
            case = result.case
            if selection.expects_failure(case) and result.outcome != SKIP:
                result = (dataclasses.replace(result, outcome=UNEXPECTED_PASS,
                                              detail="on the skip list but passes; "
                                                     "remove it from the skip file")
                          if result.outcome == PASS
                          else dataclasses.replace(result, outcome=EXPECTED_FAIL))
            results[seq] = result
            shown.finished(case.machine, seq)
    except RunInterrupted as interruption:  # PROTO-SIG-1: what ran so far is still reported
        interrupted = interruption.signal_name
    except EndedMidRun as failure:  # PROTO-RUN-6: so is what ran before the run could not go on
        unusable = str(failure)
    finally:
        shown.close()
        end_session(session, interrupted=interrupted is not None)
    ordered = [results[seq] for seq in sorted(results)]
    return RunReport(session.implementation, ordered, session.restarts, time.monotonic() - began,
                     coverage, tuple(sorted({c.machine for c in chosen})), interrupted=interrupted,
                     unusable=unusable, warnings=warnings + session.stop_warnings)


def end_session(session: Session, *, interrupted: bool) -> None:
    """The end of every run, however it ends: the adapter's tree gone, every fixture removed.

    An interrupted run does not ask the adapter to stop; it ends its tree at once.
    """
    try:
        if interrupted:
            session.kill()
        else:
            session.stop()
    finally:
        _FIXTURES.close()


def print_report(report: RunReport) -> None:
    """The text report on stdout, written whole (PROTO-REPORT-2)."""
    print_whole(functools.partial(_print_report, report))


def _print_report(report: RunReport) -> None:
    name = report.implementation.get("name", "?")
    version = report.implementation.get("version", "")
    # What an adapter sent (its name, a skip's reason, an error's message, its stderr) goes to the
    # terminal through one_line, each line indented below the report's own (PROTO-VAL-4).
    print(f"implementation: {one_line(str(name))} {one_line(str(version))}".rstrip())
    columns = ("executed", "passed", "failed", "errored", "skipped")
    rows: list[tuple[str, ...]] = [("machine", *columns)]
    for machine, counts in report.counts().items():
        skipped = counts["skipped"] + counts["expected_failures"]
        rows.append((machine, *(str(counts[c]) for c in columns[:-1]), str(skipped)))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for row in rows:
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)))
    for result in report.results:
        if result.outcome in (FAIL, ERROR, UNEXPECTED_PASS):
            # A case file's name and description may hold a newline or an escape sequence.
            print(f"\n{result.outcome.upper()} {result.case.id}  ({one_line(result.case.source)})")
            print(f"  {one_line(result.case.description)}")
            print(indented_block(result.detail, "  "))
    if report.restarts:
        print(f"\nadapter restarted {report.restarts} time(s)")
    for warning in report.warnings:  # names the adapter chose: one_line, as everything it sends
        print(f"\nwarning: {one_line(warning)}")
    for shrunk in report.extra.get("fuzz", {}).get("shrunk", []):
        cut = ", cut short by --shrink-seconds" if shrunk["cut_short"] else ""
        again = {True: "failing again when sent once more",
                 False: "NOT failing so when sent once more (the port fails it only sometimes)",
                 None: "not sent once more (--shrink-seconds ran out)"}[shrunk["confirmed"]]
        print(f"\nSHRUNK {shrunk['failure']}: {shrunk['original_steps']} steps down to "
              f"{shrunk['steps']} ({shrunk['candidates_tried']} candidates tried{cut}), {again}; "
              f"it failed with:\n{indented_block(shrunk['detail'], '  ')}")
        print("  as a case file, ready for conformance/cases/ (check its requirements):")
        print(printable_json(shrunk["case_file"]))
    for problem in report.coverage_problems():
        print(f"\nNOT A PASS: {problem}")
    if report.unusable is not None:  # a failed restart ended the run (PROTO-RUN-6)
        print(f"\nUNUSABLE: {message_lines(report.unusable)}")
    verdict = (f"INTERRUPTED by {report.interrupted} (the results so far)" if report.interrupted
               else "UNUSABLE (the results so far)" if report.unusable is not None
               else {0: "ok", 1: "FAILED", 2: "UNUSABLE (nothing proven)"}[report.exit_code])
    print(f"\nconform: {verdict} in {report.seconds:.2f}s")


def registered_names(required: Iterable[str], chosen: Sequence[str] = ()) -> list[str]:
    """The names of the machines a run covers: every registered one, or those ``--machine`` names.
    Names alone: reading a machine imports its module (its model and its reference), which a run of
    case files does not need (``machines.cases_dir``)."""
    from inboxspec import machines

    for flag, names in (("--require", list(required)), ("--machine", list(chosen))):
        unknown = sorted(set(names) - set(machines.names()))
        if unknown:
            raise UnusableRun(f"{flag}: unknown machine(s) {', '.join(unknown)}; "
                              f"known: {', '.join(machines.names())}")
    return sorted(set(chosen)) if chosen else machines.names()


def unusable_report(message: str, problems: Sequence[str] | None = None,
                    **marks: Any) -> dict[str, Any]:
    """The ``--json`` report of a run that could not run (exit 2, or a signal before any case)."""
    return {"ok": False, "unusable": message, "problems": list(problems or [message]), **marks}


def report_unusable(command: str, message: str, as_json: bool, status: int = 2) -> int:
    """A command that could not run: under ``--json`` its report on stdout (``unusable_report``, as
    every command's bad argument gives), and its message on stderr; returns ``status``."""
    if as_json:
        print_json(unusable_report(message))
    print(f"inboxspec {command}: {message}", file=sys.stderr)
    return status


@contextlib.contextmanager
def contained_runs() -> Iterator[None]:
    """What runs of adapters are made inside (``conform``'s, ``matrix``'s): what an adapter says
    printed safely, orphans of its tree found (the runner a child subreaper), the interrupting
    signals recorded for the runs' wait points to raise (PROTO-SIG-1), and, however the block
    ends, every process an adapter started ended and every fixture directory removed
    (PROTO-PROC-1, PROTO-FIX-1)."""
    safe_output()
    # Orphans of the adapter's tree are re-parented to the runner, where they are found (PROTO-PROC-1).
    process_tree.become_subreaper()
    # Forked first, before any adapter or thread: it does this end if the runner is KILLed (PROTO-PROC-5).
    watching = warden.start()
    try:
        with interruptible():
            try:
                yield
            finally:
                kill_all()
                _FIXTURES.close()
                warden.stop(watching)  # here, where a signal is recorded, not raised (PROTO-SIG-1)
    finally:
        warden.stop(watching)  # done above, unless interruptible() itself failed: stopping twice is one stop


def _command(args: argparse.Namespace) -> int:
    with contained_runs():
        try:
            return _run_command(args)
        except RunInterrupted as interruption:  # before any case ran: during start, say
            name = interruption.signal_name
            # The line first: the report's reader may be gone with the same signal (Ctrl-C on a pipeline).
            print(f"inboxspec conform: interrupted by {name} before any case ran", file=sys.stderr)
            if args.json:
                try:
                    with writing_report():
                        print_json(unusable_report(f"interrupted by {name} before any case ran",
                                                   interrupted=name))
                except OSError as error:
                    print(f"inboxspec conform: the report could not be written: {error}", file=sys.stderr)
            return interruption.exit_code
        except Exception as error:
            message = f"internal error: {type(error).__name__}: {one_line(str(error))}"
            if args.json:
                print_json(unusable_report(message))
            print(f"inboxspec conform: {message}", file=sys.stderr)
            return 2


def _run_command(args: argparse.Namespace) -> int:
    from inboxspec import machines

    coverage = Coverage(require=tuple(args.require), min_executed=args.min_executed,
                        max_skipped=args.max_skipped)
    try:
        targets = registered_names(args.require, args.machine)
        _refuse_junit_over_another_file(args)
        progress = True  # Progress draws on stderr, and only when it is a terminal: --json stays clean
        if args.seed is not None and args.fuzz is None:
            raise UnusableRun("--seed seeds the random cases of --fuzz; without --fuzz it would do nothing")
        if args.fuzz is not None:
            from inboxspec.conformance.fuzz import conform_fuzz

            fixed = [flag for flag, given in (("--cases", args.cases), ("--run", args.run),
                                              ("--skip", args.skip), ("--feature", args.feature),
                                              ("--skip-file", args.skip_file)) if given]
            if args.allow_outside_reads:  # the random cases are the fuzzer's own, like the bundled
                fixed.append(confinement.ALLOW_OPTION)
            if fixed:
                raise UnusableRun(f"--fuzz sends random cases; it does not take {', '.join(fixed)}")
            seed_drawn = args.seed is None
            # PROTO-FUZZ-4: unless asked for, the seed is one the adapter cannot know in advance.
            seed = secrets.randbits(FUZZ_SEED_BITS) if seed_drawn else args.seed
            print(f"inboxspec conform: fuzz seed {seed}"
                  + (f" (drawn at random; replay with --seed {seed})" if seed_drawn else ""),
                  file=sys.stderr)
            report = conform_fuzz(args.adapter, [machines.get(name) for name in targets], args.fuzz, seed,
                                  timeout=args.timeout, start_timeout=args.start_timeout,
                                  max_line_bytes=args.max_line_bytes, window=args.window,
                                  without_features=args.without_feature, coverage=coverage,
                                  shrink_seconds=args.shrink_seconds, progress=progress,
                                  seed_drawn=seed_drawn)
        else:
            cases = load_cases(args.cases or [machines.cases_dir(name) for name in targets])
            if args.machine:
                cases = [case for case in cases if case.machine in args.machine]
            entries = read_skip_files(args.skip_file)
            unmatched = unmatched_skip_entries(entries, cases, targets)
            if unmatched:
                raise UnusableRun(unmatched[0], unmatched)
            selection = Selection(run=args.run, skip=args.skip, features=args.feature,
                                  without_features=args.without_feature,
                                  expected_failures=[entry.glob for entry in entries])
            report = conform(args.adapter, cases, selection, timeout=args.timeout,
                             start_timeout=args.start_timeout, max_line_bytes=args.max_line_bytes,
                             progress=progress, window=args.window, coverage=coverage,
                             allow_outside_reads=args.allow_outside_reads)
    except (UnusableRun, CaseFileError) as error:
        # A signal that came while the cases were read or checked ends the run as interrupted, not as
        # the problem found meanwhile (it was lost so: exit 2 and no word of it, PROTO-SIG-1).
        raise_if_interrupted()
        message, problems = str(error), error.problems
        junit_refused = isinstance(error, JunitOverAnotherFile)  # then no JUnit file is written

        def report_problems() -> int:
            if args.json:
                print_json(unusable_report(message, problems))
            for problem in problems:  # the first is the message; each a line of its own, any quote below it
                print(f"inboxspec conform: {message_lines(problem)}", file=sys.stderr)
            junit_problem = None if junit_refused else _write_junit_report(args, None, problems)
            if junit_problem is not None:
                print(f"inboxspec conform: {junit_problem}", file=sys.stderr)
            return 2

        return reported(report_problems, interrupted=False)
    if report.interrupted is None and received() is not None:
        report.interrupted = received()  # the signal came while the run was ending anyway
    return reported(functools.partial(_report_run, args, report), interrupted=report.interrupted is not None)


def _report_run(args: argparse.Namespace, report: RunReport) -> int:
    """The run's report, its JUnit file and its lines on stderr; the exit code they give.

    A JUnit file that cannot be written makes the run unusable (exit 2), and the report says so:
    a CI job reads its verdict from ``--json`` or the last ``conform:`` line, which said "ok" while
    the run ended with 2 (found by an attack helper; docs/ci.md promised ``"ok": false``)."""
    junit_problem = _write_junit_report(args, report)
    if junit_problem is not None and report.interrupted is None and report.unusable is None:
        report.unusable = junit_problem
    if args.json:
        print_json(report.as_json())
    else:
        print_report(report)
    if junit_problem is not None:
        print(f"inboxspec conform: {junit_problem}", file=sys.stderr)
    if report.unusable is not None and report.unusable != junit_problem:
        print(f"inboxspec conform: {len(report.results)} case(s) reported, then the run could not go on: "
              f"{message_lines(report.unusable)}", file=sys.stderr)
    for problem in report.coverage_problems():
        print(f"inboxspec conform: not a pass: {one_line(problem)}", file=sys.stderr)
    if report.interrupted is not None:
        print(f"inboxspec conform: interrupted by {report.interrupted}: {len(report.results)} "
              "case(s) reported; the adapter's processes and the fixture directories are gone",
              file=sys.stderr)
    return report.exit_code if junit_problem is None else 2


def reported(write: Callable[[], int], *, interrupted: bool, command: str = "conform") -> int:
    """The exit code of a run whose report ``write`` writes, returning the code the report gives
    (PROTO-REPORT-2): that code, unless a signal came while it was written (``interrupted``: one had
    come before, and the code is already its). A signal meanwhile lets the report finish, then the
    run ends as the signal asks; a reader that does not take the rest within the grace after the
    signal leaves the report cut (``ReportCut``). ``command`` names the command in what it says on
    stderr (``conform``, ``matrix``); call it where the interrupting signals are recorded, inside
    ``contained_runs``."""
    try:
        with writing_report():
            status = write()
            sys.stdout.flush()  # here, while a signal is still recorded, not at the interpreter's exit
    except OSError as error:  # a reader gone, a full disk, or the grace after a signal (ReportCut)
        name = received()
        if name is None:  # no reader has the report whole
            print(f"inboxspec {command}: the report could not be written: {error}", file=sys.stderr)
            return 2
        # Cut by the grace, or a reader the same signal ended (Ctrl-C on a pipeline): the signal's end.
        said = error.strerror if isinstance(error, ReportCut) else error
        print(f"inboxspec {command}: interrupted by {name} while the report was written: {said}",
              file=sys.stderr)
        return interrupt_exit_code(name)
    name = received()
    if interrupted or name is None:
        return status
    print(f"inboxspec {command}: interrupted by {name} while the report was written", file=sys.stderr)
    return interrupt_exit_code(name)


class JunitOverAnotherFile(UnusableRun):
    """``--junit`` names a file the run writes or reads otherwise: refused, and no JUnit file written."""


def _refuse_junit_over_another_file(args: argparse.Namespace) -> None:
    """UnusableRun when ``--junit`` names the file that standard output or error goes to, or a skip
    file: the JUnit file replaced it at the end of the run, and a JSON report redirected there was
    lost, exit 0, without a word (found by an attack helper)."""
    if args.junit is None:
        return
    try:
        junit = os.stat(args.junit)
    except OSError:
        return  # not there yet (or not to be written: the write says why)
    others: list[tuple[str, os.stat_result]] = []
    for what, descriptor in (("standard output", 1), ("standard error", 2)):
        with contextlib.suppress(OSError):
            others.append((f"the file {what} goes to", os.fstat(descriptor)))
    for skip_file in args.skip_file:
        with contextlib.suppress(OSError):
            others.append((f"the skip file {str(skip_file)!r}", os.stat(skip_file)))
    for what, other in others:
        if (other.st_dev, other.st_ino) == (junit.st_dev, junit.st_ino) and stat.S_ISREG(junit.st_mode):
            raise JunitOverAnotherFile(f"--junit {str(args.junit)!r} is {what}: the JUnit report would "
                                       "replace it")


def _write_junit_report(args: argparse.Namespace, report: RunReport | None,
                        unusable: Sequence[str] = ()) -> str | None:
    """Write ``--junit FILE`` when asked; the problem when it cannot be written, else None. The path
    is quoted as Python writes a string, so that a control character in it reaches no terminal."""
    if args.junit is None:
        return None
    from inboxspec.conformance.junit import write_junit

    try:
        write_junit(args.junit, report, unusable)
    except (OSError, ValueError) as error:
        return f"cannot write --junit {str(args.junit)!r}: {one_line(str(error))}"
    return None


def add_run_options(parser: argparse.ArgumentParser, *, adapter_help: str, many_adapters: bool,
                    machine_help: str, without_feature_help: str) -> None:
    """The options ``conform`` and ``matrix`` share: the adapter, which cases, and the limits.

    Declared once, so that an odd value is the same argument error in both (PROTO-CLI-1).
    """
    parser.add_argument("--adapter", action="append" if many_adapters else "store", required=True,
                        metavar="CMD", type=_adapter_command, help=adapter_help)
    parser.add_argument("--cases", action="append", type=Path, default=[],
                        help="a case directory or file (repeatable; default: the bundled cases)")
    parser.add_argument("--machine", action="append", default=[], metavar="NAME", help=machine_help)
    parser.add_argument("--run", action="append", default=[], metavar="GLOB", type=_glob_argument,
                        help="run only cases whose id matches (repeatable)")
    parser.add_argument("--skip", action="append", default=[], metavar="GLOB", type=_glob_argument,
                        help="leave out cases whose id matches (repeatable)")
    parser.add_argument("--feature", action="append", default=[],
                        help="run only cases tagged with this feature (repeatable)")
    parser.add_argument("--without-feature", action="append", default=[], help=without_feature_help)
    parser.add_argument("--timeout", type=seconds_argument, default=DEFAULT_TIMEOUT_S,
                        help="seconds per case (default %(default)s)")
    parser.add_argument("--start-timeout", type=seconds_argument, default=DEFAULT_START_TIMEOUT_S,
                        help="seconds for each adapter's start handshake (default %(default)s)")
    parser.add_argument("--max-line-bytes", type=_positive_int, default=DEFAULT_MAX_LINE_BYTES,
                        help="longest reply line accepted (default %(default)s)")
    parser.add_argument("--window", type=_positive_int, default=DEFAULT_WINDOW,
                        help="run requests in flight at once; 1 is strictly one at a time "
                             "(default %(default)s)")
    parser.add_argument(confinement.ALLOW_OPTION, action="store_true",
                        help="run cases from outside the bundled suite that may lead a port to read "
                             "outside their fixtures (PROTO-FIX-5); by default such a run is refused")


def add_conform_parser(commands: Any) -> None:
    parser = commands.add_parser("conform", help="run the conformance cases through an adapter")
    add_run_options(
        parser, many_adapters=False,
        adapter_help='the adapter command, split as a POSIX shell would, e.g. "node adapter.mjs"',
        machine_help="run only this machine's cases, or fuzz only this machine (repeatable; "
                     "default: every machine)",
        without_feature_help="treat this feature as unsupported: its cases are skipped")
    parser.add_argument("--skip-file", action="append", type=Path, default=[],
                        help="known failures, one id glob a line; each must still fail (a regular "
                             f"file of UTF-8 text, not a link, at most {MAX_SKIP_FILE_BYTES:,} bytes)")
    parser.add_argument("--require", action="append", default=[], metavar="MACHINE",
                        help="fail as unusable (exit 2) unless some case of MACHINE was executed "
                             "(repeatable)")
    parser.add_argument("--min-executed", type=_positive_int, default=1, metavar="N",
                        help="fail as unusable (exit 2) unless at least N cases were executed "
                             "(default %(default)s: a run that executed nothing is never a pass)")
    parser.add_argument("--max-skipped", type=_natural_int, default=None, metavar="N",
                        help="fail as unusable (exit 2) when more than N cases were skipped, for any "
                             "reason: a feature the adapter does not list, --without-feature, or the "
                             "adapter's own skipped reply (default: any number; 0 demands every case)")
    parser.add_argument("--fuzz", type=_fuzz_count, default=None, metavar="N",
                        help="instead of the bundled cases, send N random cases per machine "
                             f"(at most {MAX_FUZZ_CASES:,}; run more seeds for more), expected "
                             "outputs from the reference; failures are shrunk and printed as "
                             "case files")
    parser.add_argument("--seed", type=_natural_int, default=None,
                        help="seed of --fuzz (default: a fresh one drawn at random and printed); "
                             "a seed gives the same cases")
    parser.add_argument("--shrink-seconds", type=seconds_argument, default=120.0,
                        help="wall-clock cap on shrinking one fuzz failure (default %(default)s)")
    parser.add_argument("--json", action="store_true", help="machine-readable report")
    parser.add_argument("--junit", type=Path, default=None, metavar="FILE",
                        help="also write the run as JUnit XML to FILE, on every exit (replaced "
                             "atomically; an unusable run writes its reason as an error)")
    # It handles the interrupting signals itself (contained_runs), so the command line leaves them be.
    parser.set_defaults(func=_command, handles_signals=True)


def _shown(text: str) -> str:
    """An argument as a message quotes it: at most 40 characters of it."""
    return repr(text) if len(text) <= 40 else f"{text[:40]!r}... ({len(text)} characters)"


def _integer(text: str) -> int:
    """ASCII digits with an optional minus, as ``explore``'s bounds (``int`` would also take ``1_0``,
    `` 12`` and other scripts' digits)."""
    try:
        return bound_integer(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {_shown(text)}") from None


def seconds_argument(text: str) -> float:
    """A number of seconds: finite, above 0, at most MAX_SECONDS (``nan``, ``inf``, ``1e300`` are not)."""
    if not _DECIMAL.fullmatch(text):
        raise argparse.ArgumentTypeError(f"not a number of seconds: {_shown(text)}")
    value = float(text)
    if not math.isfinite(value) or not 0 < value <= MAX_SECONDS:
        raise argparse.ArgumentTypeError(f"must be a number of seconds above 0 and at most "
                                         f"{MAX_SECONDS:g}, not {_shown(text)}")
    return value


# A number of seconds as the command line writes it: ASCII digits, a decimal point, an exponent
# (``float`` would also take ``1_0``, `` 2 `` and other scripts' digits).
_DECIMAL = re.compile(r"(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?")


def _adapter_command(text: str) -> str:
    try:
        split_command(text)
    except AdapterFault as fault:
        raise argparse.ArgumentTypeError(fault.detail) from None
    return text


def _glob_argument(text: str) -> str:
    if len(text) > MAX_GLOB_CHARS:
        raise argparse.ArgumentTypeError(f"a glob of {len(text):,} characters, more than {MAX_GLOB_CHARS:,}")
    return text


def _positive_int(text: str) -> int:
    value = _integer(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


# WARNING: written out in spec/conformance-protocol.md (PROTO-CLI-1); change both together.
# The most random cases per machine one fuzz run sends: each is kept with its result to the end of
# the run (a host case and its outputs take about 28 kB), so --fuzz 1000000 asked for 28 GB.
MAX_FUZZ_CASES = 10_000


def _fuzz_count(text: str) -> int:
    value = _positive_int(text)
    if value > MAX_FUZZ_CASES:
        raise argparse.ArgumentTypeError(f"at most {MAX_FUZZ_CASES:,} random cases per machine a run "
                                         "(run more seeds for more)")
    return value


def _natural_int(text: str) -> int:
    value = _integer(text)
    if value < 0:
        raise argparse.ArgumentTypeError("must be at least 0")
    return value
