"""Progress on a terminal of a conformance run, or of ``inboxspec check``: what is done of each
total (cases per machine; cases and explorations), a word on the phase, and the time taken.

A run that ends within :data:`SHOW_AFTER_S` prints nothing, and a stream that
is not a terminal (a pipe, a file, a CI log) never gets a byte: the line is
for a person watching, and would only garble a log. While shown, the line is
redrawn in place (carriage return, then erase to the end of the line) by a
ticker thread, so the elapsed time moves on while one slow case runs; it is
cut to the terminal's width so that it never wraps, and erased at the end.
"""

from __future__ import annotations

import io
import os
import sys
import threading
import time
from collections.abc import Callable, Mapping
from types import TracebackType
from typing import TextIO

# A run shorter than this shows no progress at all.
SHOW_AFTER_S = 2.0
# How often the line is redrawn while shown.
REDRAW_EVERY_S = 0.25
ERASE_LINE = "\r\x1b[K"


class Progress:
    """Cases done of each machine's total, drawn on ``stream`` when it is a terminal."""

    def __init__(self, totals: Mapping[str, int], *, enabled: bool = True, stream: TextIO | None = None,
                 show_after: float = SHOW_AFTER_S, redraw_every: float = REDRAW_EVERY_S,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.totals = dict(sorted(totals.items()))
        # The cases finished, by key: a case answered again (a duplicate reply) counts once.
        self.finished_cases: dict[str, set[object]] = {machine: set() for machine in self.totals}
        self.phase = ""
        self.enabled = enabled and _is_terminal(self.stream)
        self.show_after = show_after
        self.redraw_every = redraw_every
        self.clock = clock
        self.began = clock()
        self.drawn = False
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None

    def __enter__(self) -> Progress:
        self.start()
        return self

    def start(self) -> None:
        """Start the ticker that redraws the line; :meth:`close` stops it."""
        if self.enabled and self._ticker is None and not self._stop.is_set():
            self._ticker = threading.Thread(target=self._tick, name="conform-progress", daemon=True)
            self._ticker.start()

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self.close()

    def finished(self, machine: str, key: object) -> None:
        """One case of ``machine`` is done; ``key`` (its seq) tells a case finished again."""
        with self._lock:
            done = self.finished_cases.setdefault(machine, set())
            done.add(key)
            self.totals[machine] = max(self.totals.get(machine, 0), len(done))
        self.draw()

    def set_total(self, key: str, total: int) -> None:
        """How many of ``key`` there are, once known (``inboxspec check`` learns its case count
        after it has linted them)."""
        with self._lock:
            self.finished_cases.setdefault(key, set())
            self.totals = dict(sorted({**self.totals, key: total}.items()))
        self.draw()

    def set_phase(self, text: str) -> None:
        """A word on what the run does besides running cases (shrinking a failure)."""
        with self._lock:
            self.phase = text
        self.draw()

    def line(self) -> str:
        with self._lock:
            parts = [f"{self.clock() - self.began:.1f}s"]
            parts.extend(f"{machine} {len(self.finished_cases[machine])}/{total}"
                         for machine, total in self.totals.items())
            if self.phase:
                parts.append(self.phase)
        return "  ".join(parts)

    def draw(self) -> None:
        """Redraw the line, once the run has lasted long enough to show it."""
        if not self.enabled or self.clock() - self.began < self.show_after:
            return
        text = self.line()[: _columns(self.stream) - 1]
        with self._lock:
            if self._stop.is_set():
                return
            self.stream.write(ERASE_LINE + text)
            self.stream.flush()
            self.drawn = True

    def close(self) -> None:
        """Stop redrawing and erase the line, so the report starts on a clean line."""
        with self._lock:
            self._stop.set()
        if self._ticker is not None:
            self._ticker.join()
            self._ticker = None
        if self.drawn:
            self.stream.write(ERASE_LINE)
            self.stream.flush()
            self.drawn = False

    def _tick(self) -> None:
        while not self._stop.wait(self.redraw_every):
            try:
                self.draw()
            except (OSError, ValueError):  # the terminal went away: progress is not worth a crash
                return


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def _columns(stream: TextIO) -> int:
    """The terminal's width; 80 when it does not say (a fresh pseudo-terminal reports 0)."""
    try:
        columns = os.get_terminal_size(stream.fileno()).columns
    except (AttributeError, OSError, ValueError, io.UnsupportedOperation):
        return 80
    return max(20, columns) if columns else 80
