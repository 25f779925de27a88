"""Loading the bundled cases: the case loader's schema pass with fastjsonschema first, and with
jsonschema alone, side by side in one run.

Each sample loads every bundled case file cold, as a fresh ``inboxspec conform`` process does
(no schema verdict remembered, ``casefiles._SCHEMA_CLEAN``), once each way, alternating, so that
load on the machine hits both alike. Printed: the processor seconds of each way (medians), their
ratio, the seconds of the schema pass alone each way, and the yardstick of
``benchmarks/calibration.py``.

Usage: python benchmarks/case_loading.py [--samples N]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable
from typing import Any

from calibration import yardstick_line

from inboxspec.conformance import casefiles
from inboxspec.conformance.casefiles import bundled_cases_dir, case_files, load_cases


def _cold_load(fast: Callable[[Any], bool] | None) -> float:
    """Processor seconds of loading every bundled case with ``fast`` as the first pass (None: none)."""
    full = casefiles._case_file_validators()[1]
    original = casefiles._case_file_validators
    casefiles._SCHEMA_CLEAN.clear()
    casefiles._case_file_validators = lambda: (fast, full)  # type: ignore[assignment]
    try:
        began = time.process_time()
        load_cases([bundled_cases_dir()])
        return time.process_time() - began
    finally:
        casefiles._case_file_validators = original


def _schema_pass(check: Callable[[Any], object], documents: list[Any]) -> float:
    began = time.process_time()
    for document in documents:
        check(document)
    return time.process_time() - began


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=7)
    args = parser.parse_args()
    fast, full = casefiles._case_file_validators()
    assert fast is not None, "the installed fastjsonschema gives no fast pass (machines/schema_dialect.py)"
    files = case_files([bundled_cases_dir()])
    documents = [json.loads(path.read_text(encoding="utf-8")) for path in files]
    with_fast, alone, fast_pass, full_pass = [], [], [], []
    for _ in range(args.samples):
        with_fast.append(_cold_load(fast))
        alone.append(_cold_load(None))
        fast_pass.append(_schema_pass(fast, documents))
        full_pass.append(_schema_pass(lambda document: list(full.iter_errors(document)), documents))
    print(f"{len(files)} bundled case files, medians of {args.samples} samples, processor seconds")
    print(f"  loading them all, fastjsonschema first: {statistics.median(with_fast):7.3f} s")
    print(f"  loading them all, jsonschema alone:     {statistics.median(alone):7.3f} s"
          f"   ({statistics.median(alone) / statistics.median(with_fast):.1f}x)")
    print(f"  the schema pass alone, fastjsonschema:  {statistics.median(fast_pass):7.3f} s")
    print(f"  the schema pass alone, jsonschema:      {statistics.median(full_pass):7.3f} s"
          f"   ({statistics.median(full_pass) / statistics.median(fast_pass):.1f}x)")
    print(yardstick_line())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
