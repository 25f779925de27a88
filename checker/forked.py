"""The checker's forked processes: a pool's workers, a sharded search's shards, a mutant's child.

They are forked, not spawned: they see the registry as the parent has it (a
test's temporary registry included), and the shards agree on every hash (one
hash seed). A forked process also inherits what its parent did to its signals,
and that must not reach it: each calls :func:`take_default_termination` first.

Why. The sharded search ends its shards with SIGTERM and then joins them. A
Python handler the parent installed (a command's, a test harness's, or
``benchmarks/mutation_score.py``'s, which turns SIGTERM into ``SystemExit``)
would make a shard unwind through Python instead of ending: its exit then waits
for its queues' feeder threads to write into pipes that nobody reads any more.
``tests/test_parallel.py`` plants that moment; without the default in the
shard, and with the coordinator's KILL after ``END_GRACE_SECONDS`` put off, the
search never ends. The pool's workers (``Pool.terminate``) have no feeder
threads, so they cannot hang so, but a handler would still run Python code in
a worker being ended; a mutant's child is ended by its alarm or a KILL, and by
SIGTERM when a cancelled job TERMs its process group.
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.context
import signal
from collections.abc import Iterable
from typing import Final

_METHOD: Final = "fork"


def can_fork() -> bool:
    """Whether this system forks processes (not Windows)."""
    return _METHOD in multiprocessing.get_all_start_methods()


def fork_context() -> multiprocessing.context.ForkContext:
    """The start method of every process of the checker (callers check :func:`can_fork` first)."""
    return multiprocessing.get_context(_METHOD)


def take_default_termination(also: Iterable[signal.Signals] = ()) -> None:
    """In a forked process, first thing: SIGTERM (and each of ``also``, a mutant child's SIGALRM)
    ends it at once, whatever its parent made of that signal.

    Both halves are inherited: the handler, and the signal mask of the thread that forked (a
    parent may hold SIGTERM off around a fork, as ``benchmarks/mutation_score.py`` does).
    """
    signums = {signal.SIGTERM, *also}
    for signum in signums:
        signal.signal(signum, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, signums)
