"""Where the main job's time goes: ``inboxspec check``'s wall and processor time, by phase and exploration.

``inboxspec check`` explores on worker processes (one per usable core) and refines on one more,
while its own process lints and replays the cases, then compares what the workers found. Per run
this prints:

* the wall time, and the processor time of the main process and of the workers (user and
  system each): their sum over the cores is the floor that no split of the work beats;
* per phase of the main process, its wall and processor seconds;
* per exploration, its states, transitions, the steps it took from its family's record instead of
  firing them (``checker/option_steps.py``), its processor seconds, and when it ended;
* the timeline: when the workers' last exploration ended, and how long the main process ran
  on after it (a core idle meanwhile) or waited for it.

The figures of the last run are printed in full, the wall times of all of them side by side,
and the yardstick of ``benchmarks/calibration.py`` (``yardstick_s`` in ``--json``).
The check runs in this process, as ``inboxspec check`` runs it, with the memos it makes and
starts (``started_check``), and its temporary directories where the command makes them.

Usage: python benchmarks/check_time.py [--machine NAME ...] [--workers N] [--runs N] [--json]
The issue's five machines: ``--machine wake-gate --machine peer-delivery --machine
idle-subscriptions --machine inbox-refresh --machine writer-proofs``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import sys
import threading
import time
from typing import Any

from calibration import reference_seconds, yardstick_line

from inboxspec import machines
from inboxspec.check import check_configurations, run_check, started_check
from inboxspec.checker.explore import available_cores
from inboxspec.conformance.progress import Progress
from inboxspec.temporary import temporary_directories_in_memory


class _Recorder(Progress):
    """A progress display that draws nothing and notes when each phase began, by the wall clock and
    the main process's processor clock."""

    def __init__(self, began: float) -> None:
        super().__init__({}, enabled=False)
        self.began_at = began
        self.phases: list[tuple[str, float, float]] = []  # (phase, wall offset, processor seconds)

    def set_phase(self, phase: str) -> None:
        self.phases.append((phase, time.perf_counter() - self.began_at, time.process_time()))
        super().set_phase(phase)


def one_run(names: list[str] | None, workers: int) -> dict[str, Any]:
    began = time.perf_counter()
    cpu_began = time.process_time()
    ended_at: dict[Any, float] = {}
    lock = threading.Lock()

    def explored(key: Any) -> None:  # called on a thread of the workers, or in this process
        with lock:
            ended_at[key] = time.perf_counter() - began

    recorder = _Recorder(began)
    children_before = resource.getrusage(resource.RUSAGE_CHILDREN)
    self_before = resource.getrusage(resource.RUSAGE_SELF)
    with machines.only(names or machines.names()):
        configurations = check_configurations()
        with started_check(workers, recorder, on_explored=explored) as (memo, refinements):
            result = run_check(explorations=memo, progress=recorder, refinements=refinements)
            recorder.set_phase("end")
            explorations = {}
            for configuration in configurations:
                key = memo.key(configuration)
                if key not in explorations:
                    explorations[key] = (configuration, memo.get(*configuration))
    wall = time.perf_counter() - began
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    itself = resource.getrusage(resource.RUSAGE_SELF)
    phases = [{"phase": name, "began_s": round(at, 3), "wall_s": round(next_at - at, 3),
               "cpu_s": round(next_cpu - cpu, 3)}
              for (name, at, cpu), (_n, next_at, next_cpu)
              in zip([("set-up", 0.0, cpu_began), *recorder.phases], recorder.phases, strict=False)]
    rows: list[dict[str, Any]] = [
        {"machine": machine, "bounds": dict(bounds), "options": dict(options),
         "states": exploration.states, "transitions": exploration.transitions,
         "steps_reused": exploration.steps_reused, "cpu_s": round(exploration.cpu_seconds, 3),
         "ended_s": round(ended_at.get(key, wall), 3)}
        for key, ((machine, bounds, options), exploration) in explorations.items()]
    last_exploration = max((float(row["ended_s"]) for row in rows), default=0.0)
    main_user = itself.ru_utime - self_before.ru_utime
    main_sys = itself.ru_stime - self_before.ru_stime
    workers_user = children.ru_utime - children_before.ru_utime
    workers_sys = children.ru_stime - children_before.ru_stime
    total = main_user + main_sys + workers_user + workers_sys
    return {
        "ok": result["ok"],
        "machines": names or machines.names(),
        "workers": workers,
        "wall_s": round(wall, 3),
        "main_cpu_s": {"user": round(main_user, 3), "system": round(main_sys, 3)},
        "workers_cpu_s": {"user": round(workers_user, 3), "system": round(workers_sys, 3)},
        "total_cpu_s": round(total, 3),
        "floor_s": round(total / max(1, min(workers, available_cores())), 3),
        "last_exploration_ended_s": round(last_exploration, 3),
        "phases": phases,
        "explorations": rows,
    }


def print_run(run: dict[str, Any]) -> None:
    main, workers = run["main_cpu_s"], run["workers_cpu_s"]
    print(f"machines: {', '.join(run['machines'])}; {run['workers']} worker(s); check ok: {run['ok']}")
    print(f"wall {run['wall_s']:.2f} s; processor: main {main['user'] + main['system']:.2f} s "
          f"(user {main['user']:.2f}, system {main['system']:.2f}), workers "
          f"{workers['user'] + workers['system']:.2f} s (user {workers['user']:.2f}, system "
          f"{workers['system']:.2f}); total {run['total_cpu_s']:.2f} s, which is {run['floor_s']:.2f} s "
          f"of wall time on {min(run['workers'], available_cores())} core(s) at best")
    print("\nphases of the main process:")
    print(f"  {'phase':45} {'began':>7} {'wall':>7} {'cpu':>7}")
    for phase in run["phases"]:
        print(f"  {phase['phase']:45} {phase['began_s']:7.2f} {phase['wall_s']:7.2f} {phase['cpu_s']:7.2f}")
    print("\nexplorations (processor seconds in the process that ran each; ended: seconds from the start):")
    print(f"  {'machine':20} {'options, or bounds':38} {'states':>8} {'transitions':>12} "
          f"{'reused':>10} {'cpu-s':>7} {'ended':>7}")
    for row in sorted(run["explorations"], key=lambda r: r["ended_s"]):
        bounds = ",".join(f"{name}={value}" for name, value in row["bounds"].items())
        options = ",".join(row["options"]) or (f"bounds {bounds}" if bounds else "(default bounds)")
        print(f"  {row['machine']:20} {options[:38]:38} {row['states']:8,} {row['transitions']:12,} "
              f"{row['steps_reused']:10,} {row['cpu_s']:7.2f} {row['ended_s']:7.2f}")
    after = run["wall_s"] - run["last_exploration_ended_s"]
    print(f"\nthe last exploration ended at {run['last_exploration_ended_s']:.2f} s; the main process "
          f"ran {after:.2f} s after it (those seconds, one core did nothing)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--machine", action="append", default=None, help="a machine to check (repeatable)")
    parser.add_argument("--workers", type=int, default=available_cores())
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--json", action="store_true", help="every run's figures as JSON")
    args = parser.parse_args()
    load_before = os.getloadavg()
    yardstick = reference_seconds()
    with temporary_directories_in_memory():  # as the command makes them (cli/temporary.py)
        runs = [one_run(args.machine, args.workers) for _ in range(args.runs)]
    load_after = os.getloadavg()
    if args.json:
        print(json.dumps({"runs": runs, "load_average_before": load_before,
                          "load_average_after": load_after, "yardstick_s": round(yardstick, 4)}, indent=2))
    else:
        print_run(runs[-1])
        walls = [run["wall_s"] for run in runs]
        print(f"\nwall seconds of the {len(runs)} run(s): {', '.join(f'{w:.2f}' for w in walls)} "
              f"(median {statistics.median(walls):.2f}); load average {load_before[0]:.2f} before, "
              f"{load_after[0]:.2f} after, on {os.cpu_count()} cores")
        print(yardstick_line(yardstick))
    return 0 if all(run["ok"] for run in runs) else 1


if __name__ == "__main__":
    sys.exit(main())
