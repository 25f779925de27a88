"""Explorer throughput: compiled chart view vs. plain python-statemachine dispatch.

For each machine, measured side by side in one run (medians of several samples):
- the explorer at its default bounds (invariants checked on every step);
- the same reachable transition relation built through the compiled view and
  through plain ``send()`` on a real chart, and their ratio;
- how the state count and time grow with the bounds;
and at the end, states/s and transitions/s of every machine side by side, the host's
included, per wall second and per processor second of the whole exploration (the search,
its traces and its cycle pass), and the yardstick of ``benchmarks/calibration.py``, to read
the rates against another day's.

The host is explored only (its default exploration has 1,088,572 transitions:
plain ``send()`` over them would take about an hour, and ``edges`` keeps the
whole relation), in ``--host-samples`` samples (1 by default, about half a
minute each here).

Usage: python benchmarks/explorer_throughput.py [--samples N] [--host-samples N] [--explorer-only]
       [--machine NAME ...]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

from calibration import yardstick_line

from inboxspec import machines
from inboxspec.checker.explore import edges, explore

GROWTH = {"wake-gate": [{"max_streak": str(n)} for n in (3, 30, 300, 3000)]}
EXPLORED_ONLY = frozenset({"host"})  # no plain send() and no growth runs (see above)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=7)
    parser.add_argument("--host-samples", type=int, default=1,
                        help="samples of the host's exploration (explored only: see above)")
    parser.add_argument("--explorer-only", action="store_true",
                        help="skip plain send() and the growth runs: the side-by-side table alone, quickly")
    parser.add_argument("--machine", action="append", default=None,
                        help="a machine to measure (repeatable; default: every machine)")
    args = parser.parse_args()
    total = 0.0
    side_by_side: dict[str, tuple[int, int, float, float, float]] = {}
    for name in args.machine or machines.names():
        explorer_only = args.explorer_only or name in EXPLORED_ONLY
        explorer_rates, dispatch_rates, cpu_rates, cpu_seconds = [], [], [], []
        samples = args.host_samples if name in EXPLORED_ONLY else args.samples
        for _ in range(samples):  # alternate, so load on the machine hits both paths alike
            result = explore(name, workers=1)
            explorer_rates.append(result.states_per_second)
            cpu_rates.append(result.transitions / result.cpu_seconds if result.cpu_seconds else float("inf"))
            cpu_seconds.append(result.cpu_seconds)
            total_s = result.seconds
            if explorer_only:
                continue
            began = time.perf_counter()
            relation = edges(name, via="dispatch")
            dispatch_rates.append(result.states / (time.perf_counter() - began))
            assert len(relation) == result.transitions
        explorer_rate = statistics.median(explorer_rates)
        side_by_side[name] = (result.states, result.transitions, explorer_rate, statistics.median(cpu_rates),
                              statistics.median(cpu_seconds))
        total += total_s
        if explorer_only:
            continue
        dispatch_rate = statistics.median(dispatch_rates)
        print(f"== {name}: default bounds {result.summary()['bounds']}")
        print(f"   {result.states:,} distinct states, {result.transitions:,} transitions, "
              f"medians of {args.samples} samples")
        print(f"   explorer, compiled chart view:  {explorer_rate:10,.0f} states/s  (target >= 50,000)")
        print(f"   same exploration, plain send(): {dispatch_rate:10,.0f} states/s  (no invariants)")
        print(f"   ratio compiled / send():        {explorer_rate / dispatch_rate:10.1f}x")
        print("   growth with the bounds (explorer):")
        print(f"   {'bounds':<24}{'states':>10}{'transitions':>14}{'seconds':>10}{'states/s':>12}")
        for bounds in GROWTH.get(name, []):
            grown = explore(name, bounds)
            print(f"   {bounds!s:<24}{grown.states:>10,}{grown.transitions:>14,}"
                  f"{grown.seconds:>10.3f}{grown.states_per_second:>12,.0f}")
    print(f"these machines, default bounds: {total:.3f}s of wall time, the last sample of each")
    print()
    load = os.getloadavg()[0]
    print("per machine at default bounds, side by side (medians; per-core target >= 300,000 transitions/s).")
    print("The rates are per wall second, then per processor second of the exploration: on a machine that")
    print(f"others share (load average {load:.2f} on {os.cpu_count()} cores), the last are the rates "
          "per core.")
    print(f"   {'machine':<22}{'states':>10}{'transitions':>14}{'states/s':>12}{'transitions/s':>16}"
          f"{'cpu-s':>9}{'states/cpu-s':>15}{'transitions/cpu-s':>20}")
    for name, (states, transitions, states_rate, cpu_rate, cpu) in side_by_side.items():
        print(f"   {name:<22}{states:>10,}{transitions:>14,}{states_rate:>12,.0f}"
              f"{states_rate * transitions / states:>16,.0f}{cpu:>9.2f}"
              f"{cpu_rate * states / transitions:>15,.0f}{cpu_rate:>20,.0f}")
    print(yardstick_line())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
