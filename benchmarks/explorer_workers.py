"""Explorer on one and on several cores: states/s at 1 and N workers, side by side in one run.

The exploration is one machine's (default: peer delivery, the largest at its
default bounds, 12,822 states) through ``checker/parallel.py`` with 1 worker
(the parallel search's own overhead) and with N workers, and through the
single-process search, alternated sample by sample so that load from other
processes on a shared machine hits each alike. Medians are printed, with the
load average before and after, since a ratio measured on a busy machine says
little about an idle one. Every run's state and transition counts are checked
equal.

The host is measured with ``--machine host``; at its default bounds one
sample is about two minutes per run here, so ``--machine host --bound
subscriptions=0 --samples 1`` (19,124 states) is the quick reading. The
parallel search checks no forever-properties, so the host's cycle pass is
not in these numbers; its state and transition counts are the same.

Usage: python benchmarks/explorer_workers.py [--machine NAME ...] [--bound N=V ...] [--workers N]
       [--samples S]
"""

from __future__ import annotations

import argparse
import os
import statistics

from inboxspec.checker.explore import available_cores, explore
from inboxspec.checker.parallel import explore_on_workers


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--machine", action="append", default=None,
                        help="a machine to measure (repeatable; default: peer-delivery)")
    parser.add_argument("--bound", action="append", default=[], metavar="NAME=VALUE")
    parser.add_argument("--workers", type=int, default=max(2, available_cores()))
    parser.add_argument("--samples", type=int, default=5)
    args = parser.parse_args()
    bounds = dict(pair.split("=", 1) for pair in args.bound)
    status = 0
    for machine in args.machine or ["peer-delivery"]:
        status |= measure(machine, bounds, args.workers, args.samples)
    return status


def measure(machine: str, bounds: dict[str, str], workers: int, sample_count: int) -> int:
    """One machine's exploration, alternated across the three ways of running it; 1 when counts differ."""
    runs = {"one process (explore)": lambda: explore(machine, bounds),
            "parallel search, 1 worker": lambda: explore_on_workers(machine, bounds, None, 1),
            f"parallel search, {workers} workers": lambda: explore_on_workers(machine, bounds, None, workers)}
    rates: dict[str, list[tuple[float, float]]] = {label: [] for label in runs}
    load_before = os.getloadavg()
    counts = set()
    for _ in range(sample_count):
        for label, run in runs.items():
            result = run()
            counts.add((result.states, result.transitions))
            rates[label].append((result.states / result.seconds, result.transitions / result.seconds))
    load_after = os.getloadavg()
    if len(counts) != 1:
        print(f"the runs disagree on the counts: {sorted(counts)}")
        return 1
    ((states, transitions),) = counts
    print(f"== {machine}, bounds {bounds or 'default'}: {states:,} states, {transitions:,} transitions; "
          f"medians of {sample_count} samples, {available_cores()} usable cores")
    print(f"   load average before {load_before[0]:.2f}, after {load_after[0]:.2f}")
    medians = {label: statistics.median(r[0] for r in samples) for label, samples in rates.items()}
    for label, samples in rates.items():
        print(f"   {label:<30}{medians[label]:>10,.0f} states/s"
              f"{statistics.median(r[1] for r in samples):>12,.0f} transitions/s")
    one_worker, many = list(medians.values())[1:]
    print(f"   ratio {workers} workers / 1 worker:      {many / one_worker:6.2f}x  (target >= 1.7x)")
    print(f"   ratio {workers} workers / one process:   {many / medians['one process (explore)']:6.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
