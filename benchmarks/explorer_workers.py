"""Explorer on one and on several cores: states/s at 1 and N workers, side by side in one run.

The exploration is one machine's (default: the host at its default bounds,
124,508 states, forever-properties and their cycle pass included) run three
ways, alternated sample by sample so that load from other processes on a
shared machine hits each alike:

* one process (``explore``, what ``--workers 1`` runs);
* the sharded search (``checker/parallel.py``) on 1 worker: its own overhead;
* the sharded search on N workers (default: 2, or every usable core).

Per way it prints the median over the samples of the states and transitions
per second of wall time (the whole call: search, cycle pass and traces), the
wall and processor seconds (processor time summed over the processes), and for
the sharded search its critical processor time: per level the busiest worker's,
plus the coordinator's, which is its wall time with a core to each process and
nothing else running. The ratio is the wall time's, N workers against one
process; beside it, the same ratio from the processor times (one process's
against the critical path), which is what the wall ratio comes to on an idle
machine. On a busy machine the wall ratio says little: Linux shares the cores
between sessions (autogroups), not processes, so N workers of one session get
no more processor time than one process of it while other sessions keep the
cores busy. The load average before and after is printed for that reason.
Every run's state and transition counts and lassos are checked equal. Last, the
yardstick of ``benchmarks/calibration.py``: how fast the machine ran plain Python.

Usage: python benchmarks/explorer_workers.py [--machine NAME ...] [--bound N=V ...] [--workers N]
       [--samples S]
For a quick reading: ``--bound subscriptions=0`` (17,801 host states); peer
delivery's default exploration: ``--machine peer-delivery --samples 3``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable

from calibration import yardstick_line

from inboxspec.checker.explore import Exploration, available_cores, explore
from inboxspec.checker.parallel import explore_on_workers


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--machine", action="append", default=None,
                        help="a machine to measure (repeatable; default: host)")
    parser.add_argument("--bound", action="append", default=[], metavar="NAME=VALUE")
    parser.add_argument("--workers", type=int, default=max(2, available_cores()))
    parser.add_argument("--samples", type=int, default=1)
    args = parser.parse_args()
    bounds = dict(pair.split("=", 1) for pair in args.bound)
    status = 0
    for machine in args.machine or ["host"]:
        status |= measure(machine, bounds, args.workers, args.samples)
    print(yardstick_line())
    return status


def measure(machine: str, bounds: dict[str, str], workers: int, sample_count: int) -> int:
    """One machine's exploration, alternated across the three ways of running it; 1 when they differ."""
    runs: dict[str, Callable[[], Exploration]] = {
        "one process (explore)": lambda: explore(machine, bounds),
        "sharded, 1 worker": lambda: explore_on_workers(machine, bounds, None, 1),
        f"sharded, {workers} workers": lambda: explore_on_workers(machine, bounds, None, workers)}
    # Per way and sample: wall seconds, processor seconds, critical processor seconds.
    samples: dict[str, list[tuple[float, float, float]]] = {label: [] for label in runs}
    load_before = os.getloadavg()
    outcomes = set()
    for _ in range(sample_count):
        for label, run in runs.items():
            began = time.perf_counter()
            result = run()
            wall = time.perf_counter() - began
            # One process's critical path is its processor time.
            critical = result.critical_cpu_seconds or result.cpu_seconds
            samples[label].append((wall, result.cpu_seconds, critical))
            outcomes.add((result.states, result.transitions, repr(sorted(result.lassos)),
                          tuple(len(lasso.prefix) + len(lasso.loop) for lasso in result.lassos.values())))
    load_after = os.getloadavg()
    if len(outcomes) != 1:
        print(f"the runs disagree: {sorted(outcomes)}")
        return 1
    ((states, transitions, lassos, _lengths),) = outcomes
    print(f"== {machine}, bounds {bounds or 'default'}: {states:,} states, {transitions:,} transitions, "
          f"lassos {lassos}; medians of {sample_count} sample(s), {available_cores()} usable cores")
    print(f"   load average before {load_before[0]:.2f}, after {load_after[0]:.2f}")
    print(f"   {'':<24}{'states/s':>10}{'transitions/s':>15}{'wall s':>9}{'cpu s':>9}{'critical cpu s':>16}")
    medians: dict[str, tuple[float, float, float]] = {}
    for label, measured in samples.items():
        wall, cpu, critical = (statistics.median(m[i] for m in measured) for i in range(3))
        medians[label] = (wall, cpu, critical)
        print(f"   {label:<24}{states / wall:>10,.0f}{transitions / wall:>15,.0f}{wall:>9.1f}{cpu:>9.1f}"
              f"{critical:>16.1f}")
    alone, one_worker, many = medians.values()
    print(f"   ratio {workers} workers / one process, wall time:          {alone[0] / many[0]:5.2f}x"
          f"  (target >= 1.7x)")
    print(f"   ratio {workers} workers / one process, critical cpu time:  {alone[1] / many[2]:5.2f}x"
          f"  (the wall ratio on an idle machine)")
    print(f"   ratio {workers} workers / 1 worker, wall time:             {one_worker[0] / many[0]:5.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
