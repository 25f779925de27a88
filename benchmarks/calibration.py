"""How fast this machine runs plain Python today: a fixed workload, timed, to read benchmarks across days.

The machines these benchmarks run on are shared and not all alike: the same exploration of the
same commit has taken 15.9 s of processor time one day and 30.9 s another, with nothing else
running either time. A rate measured one day and a rate measured another can then be compared
only through a yardstick measured beside each, which is this: a fixed loop of what a search's
inner loop does (build a tuple, hash it, look it up in a dict and insert it, call a function),
in processor seconds, the least of a few rounds. A figure printed with its yardstick can be
scaled, roughly, to another day's (rate times yardstick stays about the same for the same code on
processors of one kind; across kinds, workloads scale differently); ratios measured side by side
in one run need no yardstick.

Usage (also printed by the other benchmarks): python benchmarks/calibration.py
"""

from __future__ import annotations

import time

ROUNDS = 3
STEPS = 400_000


def _step(seen: dict[tuple[int, int, str], int], i: int) -> int:
    key = (i % 5_003, i % 7, "session")
    if key in seen:
        return 0
    seen[key] = i
    return 1


def reference_seconds() -> float:
    """Processor seconds of the fixed workload, the least of ``ROUNDS`` rounds (the least is the
    round least disturbed by other load)."""
    best = float("inf")
    for _ in range(ROUNDS):
        began = time.process_time()
        seen: dict[tuple[int, int, str], int] = {}
        met = 0
        for i in range(STEPS):
            met += _step(seen, i)
        spent = time.process_time() - began
        assert met == len(seen)
        best = min(best, spent)
    return best


def yardstick_line(seconds: float | None = None) -> str:
    """The line the benchmarks print: ``seconds``, or the workload timed now."""
    taken = reference_seconds() if seconds is None else seconds
    return (f"yardstick: the fixed workload of benchmarks/calibration.py took {taken:.3f} processor "
            f"seconds here now (smaller is a faster machine)")


if __name__ == "__main__":
    print(yardstick_line())
