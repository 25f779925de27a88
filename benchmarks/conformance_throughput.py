"""Conformance steps per second: in-process replay vs. the harness protocol.

Both paths run the same bundled cases against the same reference
implementation, side by side in one run, so their ratio is meaningful on a
shared, noisy machine even when the absolute numbers are not.

- in-process: the driver is called directly, the comparison done exactly as
  the runner does it;
- protocol: one long-lived reference adapter, one `run` message per case,
  replies validated and compared by the runner's own code.

Usage: python benchmarks/conformance_throughput.py [--rounds N] [--adapter CMD]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

from inboxspec import machines
from inboxspec.conformance.casefiles import bundled_cases_dir, load_cases
from inboxspec.conformance.compare import first_difference
from inboxspec.conformance.runner import DEFAULT_WINDOW, PASS, Session, run_cases


def in_process(cases: list, rounds: int) -> float:
    steps = 0
    began = time.perf_counter()
    for _ in range(rounds):
        for case in cases:
            result = machines.get(case.machine).run_case(case.config, case.inputs)
            assert first_difference(case, result) is None, case.id
            steps += len(case.steps)
    return steps / (time.perf_counter() - began)


def through_protocol(cases: list, rounds: int, adapter: str, window: int) -> float:
    session = Session(adapter, start_timeout=30, max_line_bytes=8 * 1024 * 1024)
    session.start()
    work = list(enumerate(cases * rounds, start=1))
    steps = 0
    try:
        began = time.perf_counter()
        for _, result in run_cases(session, work, timeout=30, window=window):
            assert result.outcome == PASS, (result.case.id, result.detail)
            steps += len(result.case.steps)
        elapsed = time.perf_counter() - began
    finally:
        session.stop()
    return steps / elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=40, help="passes over the cases per sample")
    parser.add_argument("--samples", type=int, default=5, help="alternating samples of each path")
    parser.add_argument("--adapter", default=f"{sys.executable} -m inboxspec.conformance.adapter")
    args = parser.parse_args()
    cases = load_cases([bundled_cases_dir()])
    local, remote, lockstep = [], [], []
    for _ in range(args.samples):  # alternate, so drift in machine load hits every path
        local.append(in_process(cases, args.rounds))
        remote.append(through_protocol(cases, args.rounds, args.adapter, DEFAULT_WINDOW))
        lockstep.append(through_protocol(cases, args.rounds, args.adapter, 1))
    local_rate, remote_rate = statistics.median(local), statistics.median(remote)
    one_at_a_time = statistics.median(lockstep)
    steps = sum(len(c.steps) for c in cases)
    print(f"cases: {len(cases)}, steps per pass: {steps}, passes per sample: {args.rounds}, "
          f"samples: {args.samples} (medians shown)")
    print(f"in-process replay:   {local_rate:12,.0f} steps/s")
    print(f"harness protocol:    {remote_rate:12,.0f} steps/s   window {DEFAULT_WINDOW}, "
          f"adapter: {args.adapter}")
    print(f"  one at a time:     {one_at_a_time:12,.0f} steps/s   window 1")
    print(f"ratio protocol/in-process: {remote_rate / local_rate:.2f}  (target >= 0.50)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
