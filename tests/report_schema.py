"""The report of ``inboxspec conform --json`` against its schema
(conformance/schemas/conform-report.schema.json), for the tests that read reports: each report
they parse is checked as it is read, so every kind of run the suite makes (passing, failing,
erroring, interrupted, unusable, fuzzed) keeps to the schema a pipeline reads it by."""

from __future__ import annotations

import functools
import json
from importlib import resources
from typing import Any

import jsonschema


@functools.cache
def report_validator() -> jsonschema.Draft202012Validator:
    text = resources.files("inboxspec.conformance").joinpath("schemas/conform-report.schema.json")
    schema = json.loads(text.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def report_problems(report: Any) -> list[str]:
    """How ``report`` departs from the schema: each error's path and message, in path order."""
    errors = sorted(report_validator().iter_errors(report), key=lambda e: [str(p) for p in e.absolute_path])
    return [f"{'/'.join(str(p) for p in e.absolute_path)}: {e.message}" for e in errors]


def checked_report(report: Any) -> Any:
    """``report`` itself, once it keeps to the schema (AssertionError with the departures if not)."""
    problems = report_problems(report)
    assert not problems, problems[:5]
    return report
