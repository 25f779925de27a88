"""The checker's forked processes: the explorations' workers, a sharded search's shards, a mutant's child.

They are forked, not spawned: they see the registry as the parent has it (a
test's temporary registry included), and the shards agree on every hash (one
hash seed). A forked process also inherits what its parent did to its signals,
and that must not reach it: each calls :func:`take_default_termination` first,
and its parent holds those signals off until then (:func:`held_for_fork`).

Why. The sharded search ends its shards with SIGTERM and then joins them. A
Python handler the parent installed (a command's, a test harness's, or
``benchmarks/mutation_score.py``'s, which turns SIGTERM into ``SystemExit``)
would make a shard unwind through Python instead of ending: its exit then waits
for its queues' feeder threads to write into pipes that nobody reads any more.
``tests/test_parallel.py`` plants that moment; without the default in the
shard, and with the coordinator's KILL after ``END_GRACE_SECONDS`` put off, the
search never ends. The explorations' workers (``Workers.close``) have no
feeder threads, so they cannot hang so, but a handler would still run Python
code in a worker being ended, and one that turned SIGTERM into an exception
would let it go on to its next task (``tests/test_forked_workers.py``); a
mutant's child is ended by its alarm or a KILL, and by SIGTERM when a
cancelled job TERMs its process group.

:class:`Workers` runs independent tasks (``Explorations``' explorations) on forked
workers. A ``multiprocessing.Pool`` cannot be used for that: when one of its workers
dies mid-task (the OOM killer, a stray KILL), it starts a new worker and forgets the
task, so whoever waits for that task's result waits forever, and a worker killed
while it held the task queue's lock leaves every other worker waiting on it too.
Here each worker has a pipe of its own to the parent, and the parent's thread for
that worker hands it one task at a time; a worker that ends before it answers makes
its task, and every task not yet answered, raise :class:`WorkerLost`.

A worker ended mid-task (by ``close`` when the caller stops early, or killed) runs no
clean-up of its own: SIGTERM's default ends it at once. So each worker's temporary
files go into a private directory of its ``Workers``, which ``close`` removes once every
worker has ended: a writer-proofs exploration's fixture directory among them.

A parent that is killed outright (SIGKILL: the OOM killer, a CI job's hard time limit) runs
no clean-up either, and its workers used to live on, each waiting forever for its next task:
a worker kept its own pipe's other end open (the parent's end, which the fork copied), so it
never read the pipe's end. So every forked process asks the kernel, first thing, to KILL it
when its parent ends (:func:`end_with_parent`, Linux), and a worker's own shards go with it
(``tests/test_forked_workers.py``). Where the kernel has no such signal, a worker closes the
parent's ends of its pipe and of its elder siblings' and ends when it reads its pipe's end; a
later ``Workers``' worker (the refinements', beside the explorations') still holds an earlier
one's ends until it ends too. The temporary directories of such a parent's ``Workers``
(``inboxspec-workers-*``) are left where they were made: nothing of the run is left to remove
them.
"""

from __future__ import annotations

import collections
import contextlib
import multiprocessing
import multiprocessing.connection
import multiprocessing.context
import multiprocessing.process
import os
import signal
import tempfile
import threading
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, Final, Generic, TypeVar

from inboxspec.conformance.process_tree import prctl
from inboxspec.machines.fixtures import remove

_METHOD: Final = "fork"


def can_fork() -> bool:
    """Whether this system forks processes (not Windows)."""
    return _METHOD in multiprocessing.get_all_start_methods()


def fork_context() -> multiprocessing.context.ForkContext:
    """The start method of every process of the checker (callers check :func:`can_fork` first)."""
    return multiprocessing.get_context(_METHOD)


def take_default_termination(also: Iterable[signal.Signals] = ()) -> None:
    """In a forked process, first thing: SIGTERM (and each of ``also``, a mutant child's SIGALRM)
    ends it at once, whatever its parent made of that signal, unless it is one of ``SERVED_SIGNALS``
    that the parent ignores (the command was started so: ``nohup`` ignores SIGHUP).

    Both halves are inherited: the handler, and the signal mask of the thread that forked (a
    parent may hold SIGTERM off around a fork, as ``benchmarks/mutation_score.py`` does).
    """
    signums = _ending_signals(also)
    for signum in signums:
        # A hang-up or an interrupt the command was started ignoring stays ignored, as in the parent
        # (``interrupts._handled_by``): under nohup a hang-up ended the check's workers. Any other
        # signal takes its default (a mutant child's alarm ends it, whatever the parent makes of it).
        if signum not in SERVED_SIGNALS or signal.getsignal(signum) is not signal.SIG_IGN:
            signal.signal(signum, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, signums)


# prctl(2)'s option: the signal this process gets when the thread that forked it ends.
PR_SET_PDEATHSIG: Final = 1


def end_with_parent() -> None:
    """In a forked process, after :func:`take_default_termination`: the kernel KILLs it when its
    parent ends, however that ends (Linux; elsewhere nothing changes).

    A parent that ended before this line never sends the signal, so a process that finds itself
    adopted by then (its parent's pid no longer the one it was forked by) KILLs itself.

    WARNING: the kernel sends the signal when the *thread* that forked this process ends, not the
    whole process: fork only from a thread that outlives what it forks. Every caller does: a
    ``Workers`` is made and closed by one thread, a sharded search forks and joins its shards in
    one call.
    """
    if not prctl(PR_SET_PDEATHSIG, signal.SIGKILL):
        return
    parent = multiprocessing.parent_process()
    if parent is not None and os.getppid() != parent.pid:
        os.kill(os.getpid(), signal.SIGKILL)


def _ending_signals(also: Iterable[signal.Signals]) -> set[signal.Signals]:
    return {signal.SIGTERM, *also}


@contextlib.contextmanager
def held_for_fork(also: Iterable[signal.Signals] = ()) -> Iterator[None]:
    """Holds SIGTERM and each of ``also`` off in this thread while it forks a process whose first
    line is :func:`take_default_termination` with the same ``also``.

    A signal that reaches a process just forked, before that first line, would meet the handlers
    it inherited: Ctrl-C at a terminal, which reaches a whole process group, would raise
    KeyboardInterrupt in a worker still starting and print its traceback under ``inboxspec check``
    (``tests/test_forked_workers.py`` plants that moment). The child inherits the block with the
    handlers, and its first line puts the defaults back and lifts the block, so a signal held
    until then ends it at once and quietly; here, the block ends when the fork has returned and
    this process meets a held signal as ever.
    """
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, _ending_signals(also))
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


Task = TypeVar("Task")
Answer = TypeVar("Answer")

# How long ``Workers.close`` waits for a TERMed worker before it KILLs it.
END_GRACE_SECONDS: Final = 5.0


class WorkerLost(RuntimeError):
    """A forked worker ended before it answered for a task (or the task was waiting when one did)."""


class ScratchUnavailable(OSError):
    """The workers' temporary directory could not be made (a full or unwritable temporary directory)."""


def _ending(process: multiprocessing.process.BaseProcess) -> str:
    """How a worker that has ended, ended: for the message of :class:`WorkerLost`."""
    process.join(timeout=END_GRACE_SECONDS)
    code = process.exitcode
    if code is None:
        return "its pipe closed while it still ran"
    if code < 0:
        try:
            return f"it was ended by {signal.Signals(-code).name}"
        except ValueError:
            return f"it was ended by signal {-code}"
    return f"it exited with status {code}"


# The signals a worker takes the default of, beside SIGTERM: Ctrl-C at a terminal and a hang-up.
SERVED_SIGNALS: Final = (signal.SIGINT, signal.SIGHUP)


def _serve(work: Callable[[Any], Any], connection: multiprocessing.connection.Connection,
           strays: Sequence[multiprocessing.connection.Connection], scratch: str) -> None:
    """A worker's life: each task the parent sends, worked and answered, until it sends None."""
    # Ctrl-C at a terminal and a hang-up reach the whole process group: a worker then ends at
    # once and quietly, and the parent, which handles them, cleans up after it.
    take_default_termination(also=SERVED_SIGNALS)
    end_with_parent()
    # The parent's ends of this worker's pipe and of those forked before it: while this process held
    # its own pipe's other end, it never read that pipe's end when the parent was gone.
    for stray in strays:
        stray.close()
    # What the tasks make with ``tempfile``, and programs they start, go where ``close`` removes it.
    tempfile.tempdir = os.environ["TMPDIR"] = scratch
    while True:
        try:
            task = connection.recv()
        except EOFError:  # the parent is gone without a word (where end_with_parent cannot act)
            return
        if task is None:
            return
        try:
            answer: tuple[bool, Any] = (True, work(task))
        except Exception as error:  # the task's own failure, raised again where it is asked for
            answer = (False, error)
        try:
            connection.send(answer)
        except OSError:  # the parent is gone
            return
        except Exception as error:  # an answer that does not pickle
            connection.send((False, RuntimeError(f"a worker's answer could not be sent: {error!r}")))


class Workers(Generic[Task, Answer]):
    """``work(task)`` for each of ``tasks`` (keyed, in the order given), on ``count`` forked workers.

    The workers are forked at once, before any thread of this object starts (a process forked
    while another thread holds a lock could inherit it held). Each worker then takes the next
    task as it finishes one, so a long task and short ones share the workers as a pool's would.
    ``answer(key)`` waits for a task's answer: its value, or its exception raised again, or
    :class:`WorkerLost`. ``close`` TERMs the workers, KILLs those still running after
    ``END_GRACE_SECONDS``, and leaves no process, thread or temporary file of this object
    behind (``scratch``: the workers' temporary directory); a task not answered by then raises
    :class:`WorkerLost` when it is asked for.
    """

    def __init__(self, work: Callable[[Task], Answer], tasks: Sequence[tuple[Hashable, Task]],
                 count: int, on_answer: Callable[[Hashable], None] | None = None) -> None:
        """``on_answer(key)``, if given, is called on a thread of this object as each answer arrives."""
        self._on_answer = on_answer
        self._changed = threading.Condition()
        self._queue: collections.deque[tuple[Hashable, Task]] = collections.deque(tasks)
        self._answers: dict[Hashable, tuple[bool, Any]] = {}
        self._given = {key for key, _task in tasks}
        self._processes: list[multiprocessing.process.BaseProcess] = []
        self._connections: list[multiprocessing.connection.Connection] = []
        self._closing = False
        self._threads: list[threading.Thread] = []  # those started
        # Held while one of this object's threads waits for a worker's end or asks whether it has
        # ended: multiprocessing reaps a child with waitpid, and of two threads reaping one child at
        # once, the one that finds it reaped already (ECHILD) before the other has noted its exit
        # status takes it for alive. ``close`` would then KILL a pid that may be another process's
        # by then, and a lost worker's WorkerLost would say that it still ran
        # (tests/test_forked_workers.py). multiprocessing's own sweep of ended children, at each
        # process another object starts, is beyond this lock.
        self._reaping = threading.Lock()
        try:
            self.scratch = tempfile.mkdtemp(prefix="inboxspec-workers-")  # mode 0700
        except OSError as error:
            # The error names the directory, or every one tried (gettempdir's own, where none is usable).
            raise ScratchUnavailable(f"the workers' temporary directory could not be made: {error}") from None
        # Whatever stops the start here (a fork that fails, Ctrl-C at ``inboxspec check``'s start)
        # leaves no worker, thread or directory of this object: ``close`` ends what was started.
        try:
            context = fork_context()
            for _ in range(count):
                mine, theirs = context.Pipe()
                self._connections.append(mine)
                try:
                    strays = list(self._connections)  # this worker's pipe's other end among them
                    process = context.Process(target=_serve, args=(work, theirs, strays, self.scratch),
                                              daemon=True)
                    # WARNING: the signals _serve's first line takes the defaults of.
                    with held_for_fork(also=SERVED_SIGNALS):
                        process.start()
                        self._processes.append(process)  # before a signal held off meets this process
                finally:
                    theirs.close()  # so that this end reads the end of the pipe when the worker ends
            for index in range(count):
                thread = threading.Thread(target=self._feed, args=(index,), daemon=True)
                thread.start()
                self._threads.append(thread)
        except BaseException:
            self.close()
            raise

    def __contains__(self, key: object) -> bool:
        return key in self._given

    def _feed(self, index: int) -> None:
        """The parent's side of worker ``index``: the next task, its answer, until none is left."""
        connection = self._connections[index]
        while True:
            with self._changed:
                task = self._queue.popleft() if self._queue and not self._closing else None
            try:
                connection.send(None if task is None else task[1])
                if task is None:
                    return
                answer = connection.recv()
            except (EOFError, OSError):
                self._lose(index, task)
                return
            with self._changed:
                self._answers[task[0]] = answer
                self._changed.notify_all()
            if self._on_answer is not None:
                self._on_answer(task[0])

    def _lose(self, index: int, task: tuple[Hashable, Task] | None) -> None:
        """Worker ``index`` ended: its task, and every task still waiting, raise WorkerLost."""
        with self._changed:
            if self._closing:  # ``close`` ended it, and joins it itself
                return
        with self._reaping:
            ending = _ending(self._processes[index])
        with self._changed:
            if task is not None and task[0] not in self._answers:
                self._answers[task[0]] = (False, WorkerLost(f"its worker ended before it answered: {ending}"))
            while self._queue:
                key, _waiting = self._queue.popleft()
                self._answers[key] = (False, WorkerLost(
                    f"it was not begun: a worker ended before the others took it ({ending})"))
            self._changed.notify_all()

    def answer(self, key: Hashable) -> Answer:
        """The answer for the task ``key``, once a worker has given it (see the class)."""
        if key not in self._given:
            raise KeyError(key)
        with self._changed:
            while key not in self._answers:
                self._changed.wait()
            succeeded, value = self._answers.pop(key)
            self._given.discard(key)
        if succeeded:
            answer: Answer = value
            return answer
        raise value

    def close(self) -> None:
        with self._changed:
            self._closing = True
            self._queue.clear()
        with self._reaping:
            for process in self._processes:
                if process.is_alive():
                    process.terminate()
            for process in self._processes:
                process.join(timeout=END_GRACE_SECONDS)
                if process.is_alive():
                    process.kill()
                    process.join()
        for thread in self._threads:  # after the reaping: a feeder thread may be waiting to reap
            thread.join()
        for connection in self._connections:
            connection.close()
        remove(Path(self.scratch))  # what a worker ended mid-task left (see the module's doc)
        with self._changed:  # what was not answered never will be: asking for it must not wait
            for key in self._given - self._answers.keys():
                self._answers[key] = (False, WorkerLost("the workers were closed before it was answered"))
            self._changed.notify_all()
