"""Peer delivery: the cost of one buffer operation at buffer sizes 10, 100 and 10 000.

Each operation is timed on a buffer held at the size (the cap is set to it, so
every hold past it evicts): hold (a send judged held, below the cap), evict
(a send at the cap: hold plus eviction of the oldest), approve and deny (of
the oldest entry, by ticket), advance (one entry expiring) and a drain round
(per entry re-judged). The reference keeps the buffer in an ordered map by
ticket and the deadlines in a heap, so these should not grow with the size;
fair eviction (PEER-OPT-1) walks the buffer and is shown separately.
Prints microseconds per operation; no assertions.

Usage: python benchmarks/peer_delivery_buffer.py [--sizes 10,100,10000] [--ops N]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

from inboxspec.impl.peer_delivery import DeliveryOptions, PeerDelivery, Recipient


def filled(size: int, setting: str = "hold", fair: bool = False, cap: int | None = None) -> PeerDelivery:
    delivery = PeerDelivery(held_cap=cap or size, box_cap=2**53 - 1, recipient=Recipient(setting, False, "x"),
                            options=DeliveryOptions(fair_eviction=fair))
    for i in range(size):
        delivery.send_message(f"s{i % 7}", "x")
    return delivery


def per_op(setup: Callable[[], PeerDelivery], op: Callable[[PeerDelivery, int], object], ops: int) -> float:
    delivery = setup()
    began = time.perf_counter()
    for i in range(ops):
        op(delivery, i)
    return (time.perf_counter() - began) / ops * 1e6


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10,100,10000")
    parser.add_argument("--ops", type=int, default=2000)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    ops = args.ops

    def oldest(d: PeerDelivery) -> int:
        return next(iter(d._held))  # the oldest ticket, without copying the buffer

    rows: dict[str, Callable[[int], float]] = {
        # below the cap: the cap is twice the size, and each hold is approved again to keep the size
        "hold": lambda n: per_op(lambda: filled(n, cap=2 * n), lambda d, i: (d.send_message("a", "x"),
                                                                             d.approve(oldest(d))), ops),
        "evict (hold at the cap)": lambda n: per_op(lambda: filled(n),
                                                    lambda d, i: d.send_message("a", "x"), ops),
        "approve + hold": lambda n: per_op(lambda: filled(n), lambda d, i: (d.approve(oldest(d)),
                                                                            d.send_message("a", "x")), ops),
        "deny + hold": lambda n: per_op(lambda: filled(n), lambda d, i: (d.deny(oldest(d)),
                                                                         d.send_message("a", "x")), ops),
        "evict, fair_eviction": lambda n: per_op(lambda: filled(n, fair=True),
                                                 lambda d, i: d.send_message("a", "x"), min(ops, 200)),
    }
    print(f"{'operation':<26}" + "".join(f"{f'size {n:,}':>14}" for n in sizes) + "   (µs per operation)")
    for name, measure in rows.items():
        print(f"{name:<26}" + "".join(f"{measure(n):>14.2f}" for n in sizes))

    # A drain round re-judges every waiting entry: report the cost per entry.
    drain_costs = []
    for n in sizes:
        delivery = filled(n)
        delivery.set_recipient(setting=None, starting_up=True)  # each entry is judged again and stays held
        began = time.perf_counter()
        delivery.drain()
        drain_costs.append((time.perf_counter() - began) / n * 1e6)
    print(f"{'drain (per entry)':<26}" + "".join(f"{c:>14.2f}" for c in drain_costs))

    # Advance: one review-cause entry expires per step, among n held.
    advance_costs = []
    for n in sizes:
        delivery = PeerDelivery(held_cap=n + 1, box_cap=2**53 - 1, recipient=Recipient(None, False, "x"))
        for _ in range(n):
            delivery.send_message("a", "y")  # mode-mismatch: armed 5 min after the hold
            delivery.advance(delivery.now_ms + 1)
        steps = min(ops, n)
        began = time.perf_counter()
        for _ in range(steps):
            delivery.advance(delivery.now_ms + 1)  # from 5 min on, one deadline passes per ms
        advance_costs.append((time.perf_counter() - began) / steps * 1e6)
    print(f"{'advance (nothing due)':<26}" + "".join(f"{c:>14.2f}" for c in advance_costs))
    expiry_costs = []
    for n in sizes:
        delivery = PeerDelivery(held_cap=n + 1, box_cap=2**53 - 1, recipient=Recipient(None, False, "x"))
        for _ in range(n):
            delivery.send_message("a", "y")
            delivery.advance(delivery.now_ms + 1)
        start = 300_000
        steps = min(ops, n)
        began = time.perf_counter()
        for k in range(steps):
            delivery.advance(start + k)  # each step passes exactly one deadline
        expiry_costs.append((time.perf_counter() - began) / steps * 1e6)
    print(f"{'advance (one expires)':<26}" + "".join(f"{c:>14.2f}" for c in expiry_costs))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
