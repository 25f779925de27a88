"""The reports pipelines read, against their schemas: ``inboxspec conform --json``'s
(conformance/schemas/conform-report.schema.json) and ``inboxspec matrix --json FILE``'s
(conformance/schemas/matrix-report.schema.json). The tests that read reports check each one they
parse as it is read, so every kind of run the suite makes (passing, failing, erroring, interrupted,
unusable, fuzzed; a matrix with an adapter that could not run) keeps to the schema a pipeline reads
it by."""

from __future__ import annotations

import functools
import json
from importlib import resources
from typing import Any

import jsonschema

CONFORM = "conform-report"
MATRIX = "matrix-report"


@functools.cache
def report_validator(schema_name: str = CONFORM) -> jsonschema.Draft202012Validator:
    text = resources.files("inboxspec.conformance").joinpath(f"schemas/{schema_name}.schema.json")
    schema = json.loads(text.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def report_problems(report: Any, schema_name: str = CONFORM) -> list[str]:
    """How ``report`` departs from the schema: each error's path and message, in path order."""
    errors = sorted(report_validator(schema_name).iter_errors(report),
                    key=lambda e: [str(p) for p in e.absolute_path])
    return [f"{'/'.join(str(p) for p in e.absolute_path)}: {e.message}" for e in errors]


def checked_report(report: Any, schema_name: str = CONFORM) -> Any:
    """``report`` itself, once it keeps to the schema (AssertionError with the departures if not)."""
    problems = report_problems(report, schema_name)
    assert not problems, problems[:5]
    return report
