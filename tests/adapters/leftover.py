"""A process an adapter leaves behind, escaping the runner as its kind says.

``python leftover.py KIND RECORD``: it does what KIND says, appends a line
``pid starttime KIND`` to RECORD (so a test can find it in ``/proc`` later, and
tell it from a process that reused its pid), then sleeps for an hour. It
imports nothing of inboxspec: a daemon kind runs with an empty environment.

- ``holds-pipes``: stays in the adapter's group with its stdin, stdout and stderr;
- ``closed-stdio``: stays in the group, its stdio on /dev/null;
- ``setpgid``: moves to a process group of its own, in the adapter's session;
- ``setsid``: starts a session of its own;
- ``daemon``: double-forks, starts a session, execs itself with an empty
  environment (no token) and its stdio on /dev/null; its parents exit;
- ``ignores-term``: ignores SIGTERM, so only KILL ends it.
"""

from __future__ import annotations

import os
import signal
import sys
import time

KINDS = ("holds-pipes", "closed-stdio", "setpgid", "setsid", "daemon", "ignores-term")


def to_dev_null() -> None:
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.close(null)


def record(path: str, kind: str) -> None:
    with open(f"/proc/{os.getpid()}/stat", "rb") as stat_file:
        stat = stat_file.read()
    starttime = stat[stat.rfind(b")") + 2 :].split()[19].decode()
    descriptor = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    os.write(descriptor, f"{os.getpid()} {starttime} {kind}\n".encode())
    os.close(descriptor)


def main() -> None:
    kind, path = sys.argv[1], sys.argv[2]
    if kind == "daemon":
        if os.fork():
            os._exit(0)
        os.setsid()
        if os.fork():
            os._exit(0)
        to_dev_null()
        os.execve(sys.executable, [sys.executable, os.path.abspath(__file__), "daemon-body", path], {})
    if kind == "daemon-body":
        kind = "daemon"
    elif kind == "closed-stdio":
        to_dev_null()
    elif kind == "setpgid":
        os.setpgid(0, 0)
    elif kind == "setsid":
        os.setsid()
    elif kind == "ignores-term":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    elif kind != "holds-pipes":
        raise SystemExit(f"unknown kind {kind!r}")
    record(path, kind)
    time.sleep(3600)


if __name__ == "__main__":
    main()
