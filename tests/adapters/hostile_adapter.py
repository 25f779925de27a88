"""An adapter that answers like the reference but leaves processes behind and misbehaves on cue.

``python hostile_adapter.py --record FILE [--spawn KIND]... [--on-trigger ACTION]
[--trigger ID-PART] [--once FILE] [--hanging FILE] [--ignore-term] [--litter]``

- ``--spawn KIND`` (repeatable): on every ``start``, before answering, it starts
  one ``leftover.py KIND`` (see there) and waits until it has recorded itself in
  the record file, so that a test knows every process it must find gone.
- ``--on-trigger``: what it does on the first ``run`` whose case id contains
  ``--trigger``: ``exit`` (exits at once with code 3, its leftovers still
  holding its pipes), ``hang`` (never answers; with ``--hanging FILE`` it first
  creates that file, so a test knows the run is waiting), ``exit-after-reply``
  (answers, then exits), ``replace-root`` (moves the run's private root, the
  parent of the case's fixture directory, to ``<root>.moved``, makes an empty
  directory at its name, and answers), or ``none``. With ``--once FILE`` it
  does so once across restarts.
- ``--ignore-term``: it ignores SIGTERM, so only KILL ends it.
- ``--litter``: on that ``run``, before the action, it makes a directory holding a file in its
  temporary directory (``tempfile``, which reads ``TMPDIR``) and never removes it; it writes the
  directory's path to ``FILE.litter``.
- On every ``start`` it also writes to ``FILE.restarts`` which processes of
  earlier starts are still alive: a restart must come after they are gone.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from inboxspec.conformance.adapter import handle

LEFTOVER = Path(__file__).with_name("leftover.py")


def records(path: Path) -> list[tuple[int, str, str]]:
    try:
        lines = path.read_text().splitlines()
    except FileNotFoundError:
        return []
    return [(int(pid), start, kind) for pid, start, kind in (line.split() for line in lines)]


def running(pid: int, starttime: str) -> bool:
    """Whether this very process (not one that reused its pid) is alive and not a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return False
    fields = stat[stat.rfind(b")") + 2 :].split()
    return fields[0] != b"Z" and fields[19].decode() == starttime


def spawn(kinds: list[str], record: Path) -> None:
    before = len(records(record))
    for kind in kinds:
        subprocess.Popen([sys.executable, str(LEFTOVER), kind, str(record)])
    deadline = time.monotonic() + 20
    while len(records(record)) < before + len(kinds) and time.monotonic() < deadline:
        time.sleep(0.01)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--record", type=Path, required=True)
    parser.add_argument("--spawn", action="append", default=[])
    parser.add_argument("--on-trigger", default="none",
                        choices=["none", "exit", "hang", "exit-after-reply", "replace-root"])
    parser.add_argument("--trigger", default="announce-on-fresh-gate")
    parser.add_argument("--once", type=Path)
    parser.add_argument("--hanging", type=Path)
    parser.add_argument("--ignore-term", action="store_true")
    parser.add_argument("--litter", action="store_true")
    options = parser.parse_args()
    if options.ignore_term:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    for line in sys.stdin:
        request = json.loads(line)
        if request.get("cmd") == "stop":
            break
        if request.get("cmd") == "start":
            alive = [pid for pid, start, _ in records(options.record) if running(pid, start)]
            with open(f"{options.record}.restarts", "a") as log:
                log.write(json.dumps(alive) + "\n")
            spawn(options.spawn, options.record)
        reply = handle(request)
        hit = request.get("cmd") == "run" and options.trigger in request["case"]["id"]
        if hit and options.once is not None:
            hit = not options.once.exists()
            options.once.touch()
        if hit and options.litter:
            litter = tempfile.mkdtemp(prefix="litter-")
            Path(litter, "file").write_text("left behind\n")
            with open(f"{options.record}.litter", "a") as log:
                log.write(litter + "\n")
        if hit and options.on_trigger == "replace-root":
            root = os.path.dirname(request["case"]["fixture_dir"])
            os.rename(root, f"{root}.moved")
            os.mkdir(root)
        if hit and options.on_trigger == "exit":
            os._exit(3)
        if hit and options.on_trigger == "hang":
            if options.hanging is not None:
                options.hanging.touch()
            time.sleep(3600)
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()
        if hit and options.on_trigger == "exit-after-reply":
            os._exit(3)


if __name__ == "__main__":
    main()
