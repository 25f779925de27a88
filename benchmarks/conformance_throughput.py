"""Conformance steps per second: in-process replay vs. the harness protocol, per machine and whole.

Both paths run the same bundled cases against the same reference
implementation, side by side in one run, so their ratio is meaningful on a
shared, noisy machine even when the absolute numbers are not.

- in-process: the driver is called directly, the comparison done exactly as
  the runner does it;
- protocol: one long-lived reference adapter, one `run` message per case,
  replies validated and compared by the runner's own code, fixtures laid out
  by the runner's own pool (PROTO-FIX-1, PROTO-FIX-4).

Each machine is measured on its own cases, and the whole suite on all of them;
samples alternate between the paths so that drift in machine load hits both.
A sample is one run of a few passes over a group's cases, and starts cold on
both paths: no fixture laid out yet, neither in the runner's pool nor in the
in-process driver's cache, so each lays a fixture out once per distinct
content in the sample and reuses it as a run does. The defaults finish in
well under a minute.

Usage: python benchmarks/conformance_throughput.py [--seconds S | --passes N] [--samples N]
                                                   [--adapter CMD] [--lockstep]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

from inboxspec import machines
from inboxspec.conformance import runner
from inboxspec.conformance.casefiles import Case, bundled_cases_dir, load_cases
from inboxspec.conformance.compare import first_difference
from inboxspec.conformance.runner import DEFAULT_WINDOW, PASS, Session, run_cases
from inboxspec.machines import writer_proofs_driver


def in_process(cases: list[Case], rounds: int) -> float:
    # Each sample starts cold on both paths, as a run does: the in-process writer-proofs driver
    # lays each fixture out once and keeps it, as the runner's pool does for one run.
    writer_proofs_driver.forget_fixtures()
    steps = 0
    began = time.perf_counter()
    for _ in range(rounds):
        for case in cases:
            result = machines.get(case.machine).run_case(case.config, case.inputs)
            assert first_difference(case, result) is None, case.id
            steps += len(case.steps)
    return steps / (time.perf_counter() - began)


def through_protocol(session: Session, cases: list[Case], rounds: int, window: int) -> float:
    work = list(enumerate(cases * rounds, start=1))
    steps = 0
    try:
        began = time.perf_counter()
        for _, result in run_cases(session, work, timeout=30, window=window):
            assert result.outcome == PASS, (result.case.id, result.detail)
            steps += len(result.case.steps)
        elapsed = time.perf_counter() - began
    finally:
        runner._FIXTURES.close()  # as a run ends: every fixture directory removed, the next starts cold
    return steps / elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=0.3,
                        help="in-process time a sample aims at; each group gets the passes over its "
                             "cases that take about this long (at least one)")
    parser.add_argument("--passes", type=int, default=None,
                        help="passes over its cases in every sample of every group, instead of --seconds")
    parser.add_argument("--samples", type=int, default=3, help="alternating samples of each path")
    parser.add_argument("--adapter", default=f"{sys.executable} -m inboxspec.conformance.adapter")
    parser.add_argument("--lockstep", action="store_true",
                        help="also measure the whole suite one request at a time (window 1)")
    args = parser.parse_args()
    cases = load_cases([bundled_cases_dir()])
    groups = {name: [c for c in cases if c.machine == name] for name in sorted({c.machine for c in cases})}
    groups["whole suite"] = cases
    session = Session(args.adapter, start_timeout=30, max_line_bytes=8 * 1024 * 1024)
    session.start()
    rates: dict[str, tuple[list[float], list[float]]] = {name: ([], []) for name in groups}
    rounds: dict[str, int] = {}
    for name, group in groups.items():  # a warm-up pass, which also sizes the samples
        began = time.perf_counter()
        in_process(group, 1)
        rounds[name] = args.passes or max(1, round(args.seconds / (time.perf_counter() - began)))
    lockstep: list[float] = []
    try:
        for _ in range(args.samples):
            for name, group in groups.items():
                local, remote = rates[name]
                local.append(in_process(group, rounds[name]))
                remote.append(through_protocol(session, group, rounds[name], DEFAULT_WINDOW))
            if args.lockstep:
                lockstep.append(through_protocol(session, cases, rounds["whole suite"], 1))
    finally:
        session.stop()
    sizing = f"{args.passes} passes each" if args.passes else f"about {args.seconds}s in process each"
    print(f"cases: {len(cases)}, samples: {args.samples} (medians), {sizing}, "
          f"window {DEFAULT_WINDOW}, adapter: {args.adapter}")
    print(f"{'':20} {'cases':>6} {'steps':>6} {'passes':>6} {'in-process':>12} {'protocol':>12} {'ratio':>6}")
    for name, group in groups.items():
        local_rate, remote_rate = (statistics.median(r) for r in rates[name])
        steps = sum(len(c.steps) for c in group)
        print(f"{name:20} {len(group):6} {steps:6} {rounds[name]:6} {local_rate:10,.0f}/s "
              f"{remote_rate:10,.0f}/s {remote_rate / local_rate:6.2f}")
    if lockstep:
        print(f"whole suite, window 1: {statistics.median(lockstep):,.0f} steps/s through the protocol")
    print("targets: writer-proofs ratio >= 0.50, whole suite >= 0.80")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
