"""Idle subscriptions: cost per operation of the reference, and the label sanitiser's throughput.

Printed side by side in one run (medians of several samples):
- subscribe, add_subscriber, a fire answering every subscriber, and a sweep
  of every subscriber, per operation, at table sizes 32 (the seed's caps) and
  10 000 (the caps raised through the config), so that the two sizes show
  whether a cost grows with the table;
- an ``advance`` with nothing due, at both sizes (it stops at the first entry
  that is not due);
- the sanitiser on 1 KB and 10 MB of plain text, of control and format
  characters, of astral characters, and of the prefix phrase nested in itself
  (the linear stack pass), in MB/s; the 10 MB figures next to the 1 KB ones
  show that the cost per byte does not grow with the input.

Usage: python benchmarks/idle_subscriptions_throughput.py [--samples N]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

from inboxspec.impl.idle_label import peer_idle_notice_label
from inboxspec.impl.idle_subscriptions import IdleConfig, IdleSubscriptions


def median_seconds(samples: int, run: Callable[[], float]) -> float:
    return statistics.median(run() for _ in range(samples))


def table_costs(size: int, samples: int) -> dict[str, float]:
    """Microseconds per operation at one table size."""
    config = IdleConfig(outstanding_cap=size, subscriber_cap=size, ttl_ms=1_000_000, debounce_ms=10)

    def subscribe() -> float:
        machine = IdleSubscriptions(config)
        began = time.perf_counter()
        for i in range(size):
            machine.subscribe(f"session-{i // 2}", i, "Peer")
        return (time.perf_counter() - began) / size

    def add() -> float:
        machine = IdleSubscriptions(config)
        began = time.perf_counter()
        for i in range(size):
            machine.add_subscriber(f"requester-{i}", i)
        return (time.perf_counter() - began) / size

    def filled() -> IdleSubscriptions:
        machine = IdleSubscriptions(config)
        for i in range(size):
            machine.subscribe(f"session-{i // 2}", i, "Peer")
            machine.add_subscriber(f"requester-{i}", i)
        return machine

    def fire() -> float:
        machine = filled()
        machine.turn_started()
        machine.turn_finished("done")
        began = time.perf_counter()
        effects = machine.advance(10)
        assert len(effects.sent) == size
        return (time.perf_counter() - began) / size

    def sweep() -> float:
        machine = filled()
        began = time.perf_counter()
        effects = machine.advance(1_000_000)
        assert len(effects.swept) == size and len(effects.notices) == size
        return (time.perf_counter() - began) / (2 * size)

    def idle_advance() -> float:
        machine = filled()
        began = time.perf_counter()
        for now in range(1, 1001):
            machine.advance(now)
        return (time.perf_counter() - began) / 1000

    runs = {"subscribe": subscribe, "add_subscriber": add, "fire (per subscriber)": fire,
            "expire + sweep (per entry)": sweep, "advance, nothing due": idle_advance}
    return {name: median_seconds(samples, run) * 1e6 for name, run in runs.items()}


INPUTS: dict[str, Callable[[int], str]] = {
    "plain text": lambda n: ("Build bot finished the release checklist. " * (n // 42 + 1))[:n],
    "controls and format": lambda n: ("a\u200b\u202e\t[b]\u2066" * (n // 7 + 1))[:n],
    "astral": lambda n: "\U0001F600" * (n // 4),
    "nested phrase": lambda n: "peer idle " * (n // 20) + "notice " * (n // 20),
}


def sanitiser_rate(text: str, samples: int) -> float:
    """MB of UTF-8 input per second."""
    size = len(text.encode("utf-8", "surrogatepass")) / 1e6

    def run() -> float:
        began = time.perf_counter()
        peer_idle_notice_label(text)
        return time.perf_counter() - began

    return size / median_seconds(samples, run)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=5)
    args = parser.parse_args()
    small, large = table_costs(32, args.samples), table_costs(10_000, max(1, args.samples // 2))
    print("== reference, microseconds per operation")
    print(f"   {'operation':<30}{'size 32':>12}{'size 10 000':>14}{'ratio':>8}")
    for name in small:
        print(f"   {name:<30}{small[name]:>12.2f}{large[name]:>14.2f}{large[name] / small[name]:>8.1f}x")
    print("== label sanitiser, MB/s of UTF-8 input")
    print(f"   {'input':<24}{'1 KB':>10}{'10 MB':>10}")
    for name, make in INPUTS.items():
        kilobyte = sanitiser_rate(make(1_000), args.samples * 20)
        ten_megabytes = sanitiser_rate(make(10_000_000), max(1, args.samples // 2))
        print(f"   {name:<24}{kilobyte:>10.1f}{ten_megabytes:>10.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
