"""The adversarial adapter corpus: every attack an adapter can make on the runner, and its verdict.

``tests/test_conform_process.py::test_adversarial_adapter_corpus`` runs each
entry through ``inboxspec conform`` as a subprocess and checks the verdict,
that no traceback is printed, and that no process the adapter started
survives the run (found through ``/proc`` by the run's own token and by the
pids the leftovers recorded). A new fault mode of ``tests/adapters/`` gets an
entry here; a new machine or fixture keeps every entry passing. The threat
model they make up is ``conformance/WRITING-AN-ADAPTER.md``, section *Threat
model: adapters and the runner*.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

ADAPTERS = Path(__file__).parent / "adapters"
TRIGGER_ID = "wake-gate/announce-on-fresh-gate"
# The faulty adapter's faults hit the trigger case; these four cases include it, then two more
# (--machine: the wake gate's case files alone are loaded).
CASES = ("--machine", "wake-gate", "--run", "wake-gate/a*", "--run", "wake-gate/f1-*")


@dataclass(frozen=True)
class Attack:
    name: str
    attempts: str  # what the adapter tries
    fault: str = ""  # a mode of faulty_adapter.py, or ...
    hostile: tuple[str, ...] = ()  # ... the options of hostile_adapter.py (--record is added)
    exit_code: int = 1
    # The outcome of the trigger case and how its detail starts; None: judged by exit code alone.
    trigger: tuple[str, str] | None = ("error", "")
    errored: int | None = None  # how many cases error in all, where the attack decides it
    arguments: tuple[str, ...] = CASES

    def command(self, scratch: Path) -> str:
        if self.fault:
            return f"{sys.executable} {ADAPTERS / 'faulty_adapter.py'} {self.fault} " \
                   f"announce-on-fresh-gate {scratch / 'once'}"
        return (f"{sys.executable} {ADAPTERS / 'hostile_adapter.py'} --record {scratch / 'record'} "
                f"--once {scratch / 'once'} " + " ".join(self.hostile))


EVERY_LEFTOVER = tuple(f"--spawn={kind}" for kind in
                       ("holds-pipes", "closed-stdio", "setpgid", "setsid", "daemon", "ignores-term"))

CORPUS: tuple[Attack, ...] = (
    # Replies that break the framing or the protocol.
    Attack("crash", "exits mid-case", fault="crash", trigger=("error", "crashed")),
    Attack("not-json", "writes a line that is not JSON", fault="not-json", trigger=("error", "not-json")),
    Attack("partial-line", "closes stdout in the middle of a reply", fault="partial-line",
           trigger=("error", "not-json")),
    Attack("wrong-seq", "echoes another seq", fault="wrong-seq", trigger=("error", "wrong-seq")),
    Attack("missing-seq", "leaves seq out", fault="missing-seq", trigger=("error", "bad-reply")),
    Attack("other-case", "answers for another case id", fault="other-case",
           trigger=("error", "wrong-case")),
    Attack("stale-seq", "echoes the seq of a case answered long ago, with yet another id, so that "
           "the innocent earlier case takes the blame", fault="stale-seq", trigger=("error", "wrong-seq")),
    Attack("duplicate", "answers one case twice", fault="duplicate",
           trigger=("error", "duplicate-reply")),
    Attack("enormous-line", "writes a line past --max-line-bytes and then hangs", fault="enormous-line",
           trigger=("error", "oversized-line"), arguments=(*CASES, "--max-line-bytes", "1048576")),
    Attack("nan", "writes NaN", fault="nan", trigger=("error", "not-json")),
    Attack("infinity", "writes Infinity", fault="infinity", trigger=("error", "not-json")),
    Attack("huge-number", "writes a number of 5000 digits", fault="huge-number",
           trigger=("error", "not-json")),
    Attack("deep", "nests 100 000 levels", fault="deep", trigger=("error", "not-json")),
    Attack("hang", "never answers", fault="hang", trigger=("error", "timeout"),
           arguments=(*CASES, "--timeout", "2")),
    # Answers that are wrong, and adapters that prove nothing.
    Attack("lie", "gives a wrong output", fault="lie", trigger=("fail", "step 0")),
    Attack("stringly-true", "answers 1 for true", fault="stringly-true", trigger=("fail", "step 0")),
    Attack("wrong-outputs", "gives too few outputs", fault="wrong-outputs", trigger=("fail", "expected 2")),
    Attack("skip-all", "skips every case", fault="skip-all", exit_code=2,
           trigger=("skip", "adapter skipped")),
    Attack("no-machines", "lists no machine", fault="no-machines", exit_code=2,
           trigger=("skip", "the adapter")),
    Attack("never-start", "never answers start", fault="never-start", exit_code=2, trigger=None,
           arguments=(*CASES, "--start-timeout", "1")),
    Attack("bad-start", "answers start with garbage", fault="bad-start", exit_code=2, trigger=None),
    # Processes: what an adapter leaves behind (PROTO-PROC-1 to PROTO-PROC-3).
    Attack("leftovers-at-the-end", "leaves one process of every kind behind (in its group holding "
           "the pipes, with stdio closed, in another group, in another session, a double-forked "
           "daemon with an empty environment, one that ignores TERM) and exits on stop",
           hostile=EVERY_LEFTOVER, exit_code=0, trigger=("pass", "")),
    Attack("exit-with-children-on-the-pipes", "exits mid-case while its children hold its pipes "
           "open, so that stdout never ends", hostile=(*EVERY_LEFTOVER, "--on-trigger=exit"),
           trigger=("error", "crashed"), arguments=(*CASES, "--timeout", "60")),
    Attack("exit-after-reply", "answers, then exits with its children holding the pipes",
           hostile=(*EVERY_LEFTOVER, "--on-trigger=exit-after-reply"), trigger=("pass", ""),
           errored=1),
    Attack("hang-with-children", "hangs with children of every kind", hostile=(
        *EVERY_LEFTOVER, "--on-trigger=hang"), trigger=("error", "timeout"),
        arguments=(*CASES, "--timeout", "2")),
)
