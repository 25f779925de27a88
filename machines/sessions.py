"""The case runners every driver shares: the reference's and the model's.

A driver keeps what differs between machines: how a config builds the
reference (or the chart) and how one step becomes calls and an output. The
loop over the steps, and the ``config_error`` result when the config is
rejected, are written once here.
"""

from __future__ import annotations

import contextlib
import json
import signal
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from inboxspec.impl.errors import InboxSpecError
from inboxspec.model.chart import ModelChart

Target = TypeVar("Target")
Chart = TypeVar("Chart", bound=ModelChart[Any])


def run_reference_case(config: Mapping[str, Any], steps: Sequence[Mapping[str, Any]],
                       build: Callable[[Mapping[str, Any]], Target],
                       apply_step: Callable[[Target, Mapping[str, Any]], dict[str, Any]],
                       rejects: type[InboxSpecError]) -> dict[str, Any]:
    """``{"outputs": [...]}``, one output a step, or ``{"config_error": code}`` when ``build``
    raises the machine's typed error (``rejects``): then no step runs."""
    try:
        target = build(config)
    except rejects as error:
        return {"config_error": error.code}
    return {"outputs": bounded_outputs(steps, lambda step: apply_step(target, step))}


# WARNING: written out in spec/conformance-protocol.md (PROTO-RUN-5); change both together.
# The most JSON one case's outputs come to in the reference. Outputs repeat what the state holds at
# every step (the host's every address, peer delivery's held senders), so a case file of a few
# megabytes (two addresses of a million characters, then ten thousand ticks) asked the reference
# adapter for 20 GB; past this the case is refused instead, as the reference's own error. Well
# above the runner's default reply bound (conformance/adapter_process.py's DEFAULT_MAX_LINE_BYTES), so no
# reply the runner takes by default comes near it. Measured as PROTO-RUN-5 says: each output as
# compact JSON, every character past ASCII escaped, the lengths summed.
MAX_CASE_OUTPUT_BYTES = 64 * 1024 * 1024
# The measure's encoder, made once: ``json.dumps`` with any argument besides the value makes a new
# encoder at every call, and every step of every reference run is measured.
_MEASURE = json.JSONEncoder(default=repr, separators=(",", ":"))


class OutputsTooLarge(Exception):
    """A case whose outputs pass MAX_CASE_OUTPUT_BYTES of JSON in the reference (PROTO-RUN-5), or the
    smaller bound a caller set (``CaseBounds``)."""


class CaseTooSlow(Exception):
    """A case still running past the deadline a caller set (``CaseBounds``): checked between steps,
    and inside one where the process can be interrupted (``_interrupted_at``)."""


class CaseCutOff(CaseTooSlow):
    """A case cut off inside a step, or the build of its config, at its deadline. What the step was
    changing may be left half changed in this process (a writer proofs fixture whose path swaps a
    ``finally`` was undoing, say): its caller runs no further case in it."""


class _PastDeadline(BaseException):
    """Raised by the alarm inside a step or a config's build. A BaseException, so that no ``except
    Exception`` of a reference or a model on the way takes it for a machine's error; ``bounded_by``
    turns it into CaseCutOff."""


@dataclass(frozen=True)
class CaseBounds:
    """What one case may cost in this process: its outputs' JSON (``output_bytes``, the reason
    ``past`` names), and a ``time.monotonic()`` deadline (None: none). The reference adapter keeps
    the defaults (the runner times each case itself); ``cases expect``, which runs case files in its
    own process, sets both (``bounded_by``)."""

    output_bytes: int = MAX_CASE_OUTPUT_BYTES
    past: str = "beyond what the suite compares (PROTO-RUN-5)"
    deadline: float | None = None


_SUITE_BOUNDS = CaseBounds()  # frozen: one object serves every context
_BOUNDS: ContextVar[CaseBounds] = ContextVar("case_bounds", default=_SUITE_BOUNDS)
# Under a deadline: the steps done and the steps in all, as ``on_time`` last heard (0 of 0: none yet),
# for the message of a case cut off inside a step.
_PROGRESS: ContextVar[list[int] | None] = ContextVar("case_progress", default=None)


@contextlib.contextmanager
def bounded_by(bounds: CaseBounds) -> Iterator[None]:
    """The reference's and the model's case runners keep to ``bounds`` inside."""
    token = _BOUNDS.set(bounds)
    progress = [0, 0]
    counted = _PROGRESS.set(progress)
    try:
        with _interrupted_at(bounds.deadline):
            yield
    except _PastDeadline:
        done, steps = progress
        where = ("in its first step or the build of its config" if not done
                 else f"in step {done + 1} of {steps}" if done < steps else "after its last step")
        raise CaseCutOff(f"this case was still running at its deadline, {where}") from None
    finally:
        _PROGRESS.reset(counted)
        _BOUNDS.reset(token)


def _alarm(_signal: int, _frame: object) -> None:
    raise _PastDeadline


@contextlib.contextmanager
def _interrupted_at(deadline: float | None) -> Iterator[None]:
    """Interrupt what runs inside once it has computed for as long as is left until ``deadline``
    (``time.monotonic()``): by SIGPROF, at that many seconds of this process's processor time, in
    user and system mode both (the profiling timer: the virtual one counts user time alone, and a
    step that spends its time in system calls, laying out or reading files, ran on past it).

    Checked between steps alone, a deadline did not bound one step: a case file can make a single
    step compute for hours (a peer delivery send to two million recipients, an inbox refresh result
    screened against as many deny words). A step that computes is what runs long, and its processor
    time is at most its wall time, so the alarm never comes before the deadline; a step that waits
    instead is caught by the check after it. Processor time, not SIGALRM's wall clock: SIGALRM is the
    interrupts' (``conformance/interrupts.py``'s ``raising_on_signals`` resends a lost signal by it)
    and pytest-timeout's. Only where the alarm is this process's to take: on the main thread (the
    only one a signal handler runs on), where the system has the timer and nobody has set it already;
    elsewhere the deadline is checked between steps only."""
    if (deadline is None or not hasattr(signal, "setitimer")
            or threading.current_thread() is not threading.main_thread()
            or signal.getitimer(signal.ITIMER_PROF)[0] > 0):
        yield
        return
    previous = signal.signal(signal.SIGPROF, _alarm)
    try:
        signal.setitimer(signal.ITIMER_PROF, max(deadline - time.monotonic(), 1e-6))
        yield
    finally:
        try:
            signal.setitimer(signal.ITIMER_PROF, 0)
        finally:  # the alarm may land here too: the handler is put back all the same
            signal.signal(signal.SIGPROF, previous)


def on_time(number: int, steps: int) -> None:
    """After step ``number`` of ``steps``: CaseTooSlow when the deadline set has passed."""
    progress = _PROGRESS.get()
    if progress is not None:
        progress[:] = number, steps
    deadline = _BOUNDS.get().deadline
    if deadline is not None and time.monotonic() > deadline:
        raise CaseTooSlow(f"this case was still running at its deadline, after step {number} of {steps}")


def outputs_size(outputs: Sequence[Any]) -> int:
    """The outputs' JSON as PROTO-RUN-5 measures it (each output compact, every character past ASCII
    escaped, the lengths summed)."""
    return sum(len(_MEASURE.encode(output)) for output in outputs)


def bounded_outputs(steps: Sequence[Mapping[str, Any]],
                    apply_step: Callable[[Mapping[str, Any]], dict[str, Any]]) -> list[dict[str, Any]]:
    """Each step's output, in order; OutputsTooLarge as soon as they pass MAX_CASE_OUTPUT_BYTES of
    JSON together (or the caller's smaller bound), before the next step runs; CaseTooSlow past the
    caller's deadline, the same way."""
    bounds = _BOUNDS.get()
    outputs = []
    size = 0
    for number, step in enumerate(steps, 1):
        output = apply_step(step)
        size += len(_MEASURE.encode(output))
        if size > bounds.output_bytes:
            raise OutputsTooLarge(f"the outputs of this case pass {bounds.output_bytes:,} bytes of JSON "
                                  f"at step {number} of {len(steps)}: {bounds.past}")
        outputs.append(output)
        on_time(number, len(steps))
    return outputs


class ModelSession(ABC, Generic[Chart]):
    """Valid steps applied to a machine's model chart, in the reference's output shape.

    The model has no input validation (it describes behaviour, not parsing), so
    it has no fault order either: callers give it only configs and steps the
    reference accepts, and an invalid step is a caller's bug with an undefined
    result. The errors a chart does output (a ticket that is not held, say) are
    behaviour, and each machine's session says which.
    """

    chart: Chart  # built by ``case_chart``, so that ``run_case`` can hand it on

    @abstractmethod
    def __init__(self, config: Mapping[str, Any]) -> None:
        """Build the chart from a case's ``config``, with ``case_chart``."""

    @abstractmethod
    def apply(self, step: Mapping[str, Any]) -> dict[str, Any]:
        """Send one step's event(s) to the chart and return its output."""

    @classmethod
    def run_case(cls, config: Mapping[str, Any], steps: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        """The model's case runner (``Machine.run_model_case``)."""
        session = cls(config)
        outputs = []
        for number, step in enumerate(steps, 1):
            outputs.append(session.apply(step))
            on_time(number, len(steps))
        case_ended(session.chart)
        return {"outputs": outputs}


# Charts whose case has ended, by class: the next case restarts one (``ModelChart.restarted``)
# instead of building a chart, which costs about a millisecond, the most part of replaying a short
# case on the model. A chart is here or in one case's hands, never both.
_ENDED: dict[type[Any], list[Any]] = {}
_ENDED_KEPT = 4  # per class: as many as replay at once, and more


def case_chart(chart: type[Chart], *args: Any, **kwargs: Any) -> Chart:
    """``chart(*args, **kwargs)``: an ended case's chart of that class restarted, or a new one."""
    ended = _ENDED.get(chart)
    if ended:
        try:
            kept = ended.pop()
        except IndexError:  # another thread took the last one meanwhile
            pass
        else:
            if kept.why_not_restartable() is None:  # else (a test's patch, say) build one anew
                return kept.restarted(*args, **kwargs)  # type: ignore[no-any-return]
    return chart(*args, **kwargs)


def case_ended(chart: ModelChart[Any]) -> None:
    """``chart``'s case has ended, and nothing reads the chart any more: a later case may restart it."""
    ended = _ENDED.setdefault(type(chart), [])
    # A chart ended twice would be handed to two cases.
    if len(ended) < _ENDED_KEPT and not any(kept is chart for kept in ended):
        ended.append(chart)
