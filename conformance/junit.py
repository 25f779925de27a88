"""``conform --junit FILE``: the run as JUnit XML, the format CI dashboards read.

One ``<testsuite>`` per machine and one ``<testcase>`` per case (classname the
machine, name the case id). Outcomes map onto JUnit's own elements:

===================  ===============================================
outcome              element
===================  ===============================================
pass                 none
fail                 ``<failure type="fail">``: the first difference
unexpected-pass      ``<failure type="unexpected-pass">``
error                ``<error type="FAULT">``: the fault (its kind, the report's ``fault``)
skip                 ``<skipped>``: why
expected-fail        ``<skipped type="expected-fail">``: the skip file
===================  ===============================================

so a suite's ``failures``, ``errors`` and ``skipped`` equal the JSON report's
``failed``, ``errored`` and ``skipped`` plus ``expected_failures`` for that
machine. Each case's requirement IDs and feature tags are its properties
(``requirement``, ``feature``), and its ``time`` runs from sending the case to
judging the reply; a suite's time is the sum of its cases'.

The file is written on every exit. A run that cannot start writes one suite,
``inboxspec-conform``, with one errored case that gives the reason; so does a
run that executed too little (its machines' suites are written as well).

The file is replaced atomically (``reportfile.write_atomically``): a failed
write leaves no partial file, and a symbolic link at the destination is
replaced, not written through.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

from inboxspec.conformance.reportfile import write_atomically
from inboxspec.conformance.runner import (
    ERROR,
    EXPECTED_FAIL,
    FAIL,
    SKIP,
    UNEXPECTED_PASS,
    CaseResult,
    RunReport,
)

# The suite that carries what concerns the run as a whole (cannot start, proved too little).
RUN_SUITE = "inboxspec-conform"
# Longest attribute text: a message is one line for a dashboard's list; the element text has the rest.
MESSAGE_CHARS = 1000


def _clean(text: str) -> str:
    """``text`` as XML 1.0 can hold it: characters XML forbids become ``\\uXXXX`` escapes, and so do
    DEL and the C1 controls (U+007F..U+009F), which XML discourages and the text report escapes.

    An adapter's error message may carry any code point, a lone surrogate
    included; ElementTree would write the forbidden ones and produce a file
    no parser reads. A C1 control written as itself (U+009B, the 8-bit CSI) starts an escape
    sequence on a terminal that shows the file (found by an attack helper).
    """
    return "".join(c if c in "\t\n\r" or (" " <= c <= "\x7e") or ("\xa0" <= c <= "\ud7ff")
                   or ("\ue000" <= c <= "\ufffd") or ("\U00010000" <= c <= "\U0010ffff")
                   else f"\\u{ord(c):04x}" for c in text)


def _message(text: str) -> str:
    line = _clean(text.splitlines()[0] if text else "")
    return line if len(line) <= MESSAGE_CHARS else line[:MESSAGE_CHARS] + "…"


def _seconds(value: float | None) -> str:
    return f"{value or 0.0:.6f}"


def _testcase(result: CaseResult) -> ET.Element:
    case = result.case
    element = ET.Element("testcase", classname=_clean(case.machine), name=_clean(case.id),
                         time=_seconds(result.seconds), file=_clean(case.source))
    properties = ET.SubElement(element, "properties")
    for requirement in case.requirements:
        ET.SubElement(properties, "property", name="requirement", value=_clean(requirement))
    for feature in case.features:
        ET.SubElement(properties, "property", name="feature", value=_clean(feature))
    if result.outcome in (FAIL, UNEXPECTED_PASS):
        message = result.difference.message() if result.difference else result.detail
        failure = ET.SubElement(element, "failure", message=_message(message), type=result.outcome)
        failure.text = _clean(result.detail)
    elif result.outcome == ERROR:
        # The fault's kind (crashed, timeout, ..., errored), as the JSON report's `fault` gives it.
        error = ET.SubElement(element, "error", message=_message(result.detail), type=result.fault or ERROR)
        error.text = _clean(result.detail)
    elif result.outcome == SKIP:
        ET.SubElement(element, "skipped", message=_message(result.detail))
    elif result.outcome == EXPECTED_FAIL:
        skipped = ET.SubElement(element, "skipped", type=EXPECTED_FAIL,
                                message=_message(f"expected failure (skip file): {result.detail}"))
        skipped.text = _clean(result.detail)
    return element


def _suite(name: str, cases: Sequence[ET.Element], seconds: float) -> ET.Element:
    counts = {kind: sum(1 for c in cases if c.find(kind) is not None)
              for kind in ("failure", "error", "skipped")}
    suite = ET.Element("testsuite", name=_clean(name), tests=str(len(cases)),
                       failures=str(counts["failure"]), errors=str(counts["error"]),
                       skipped=str(counts["skipped"]), time=_seconds(seconds))
    suite.extend(cases)
    return suite


def _run_problems_suite(problems: Sequence[str]) -> ET.Element:
    cases = []
    for index, problem in enumerate(problems, start=1):
        case = ET.Element("testcase", classname=RUN_SUITE,
                          name="run" if len(problems) == 1 else f"run-{index}", time=_seconds(0))
        error = ET.SubElement(case, "error", message=_message(problem), type="unusable")
        error.text = _clean(problem)
        cases.append(case)
    return _suite(RUN_SUITE, cases, 0.0)


def junit_tree(report: RunReport | None, unusable: Sequence[str] = ()) -> ET.ElementTree[ET.Element]:
    """The JUnit document of a run: ``report`` when the run happened, ``unusable`` its reasons if not."""
    root = ET.Element("testsuites", name="inboxspec conform")
    problems = list(unusable)
    if report is not None:
        implementation = report.implementation
        root.set("name", _clean(f"inboxspec conform: {implementation.get('name', '?')} "
                                f"{implementation.get('version', '')}".rstrip()))
        by_machine: dict[str, list[CaseResult]] = defaultdict(list)
        for machine in report.counts():  # every machine the run covers, even with no case
            by_machine[machine] = []
        for result in report.results:
            by_machine[result.case.machine].append(result)
        for machine, results in sorted(by_machine.items()):
            seconds = sum(r.seconds or 0.0 for r in results)
            root.append(_suite(machine, [_testcase(r) for r in results], seconds))
        if report.unusable is not None:  # a failed restart ended the run (PROTO-RUN-6)
            problems.append(report.unusable)
        problems.extend(report.coverage_problems())
    if problems:
        root.append(_run_problems_suite(problems))
    suites = list(root)
    for total in ("tests", "failures", "errors", "skipped"):
        root.set(total, str(sum(int(s.get(total, "0")) for s in suites)))
    root.set("time", _seconds(sum(float(s.get("time", "0")) for s in suites)))
    ET.indent(root)
    return ET.ElementTree(root)


def write_junit(path: Path, report: RunReport | None, unusable: Sequence[str] = ()) -> None:
    tree = junit_tree(report, unusable)
    data = ET.tostring(tree.getroot(), encoding="utf-8", xml_declaration=True) + b"\n"
    write_atomically(path, data)
