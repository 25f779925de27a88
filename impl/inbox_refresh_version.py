"""A compatibility pin for the on-disk worker and cache code, not a credential.

The seed's ``inbox-worker-version.ts``: the hash pins the worker, the cache,
the runner, the inbox source and the package version, so a host that was
upgraded underneath a running console notices (the runner refuses to launch,
or the worker reports ``moved``) and tells the person to restart.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path

HERE = Path(__file__).resolve().parent
PINNED = ("inbox_refresh_worker.py", "inbox_refresh.py", "inbox_refresh_runner.py",
          "inbox_refresh_source.py", "inbox_refresh_version.py")


def default_files() -> tuple[Path, ...]:
    return tuple(HERE / name for name in PINNED)


def worker_hash(files: Sequence[Path] | None = None) -> str | None:
    """sha256 over ``[name, sha256(content)]`` of every pinned file and the package version."""
    try:
        digest = hashlib.sha256()
        for path in files if files is not None else default_files():
            inner = hashlib.sha256(Path(path).read_bytes()).hexdigest()
            digest.update(json.dumps([Path(path).name, inner]).encode())
        digest.update(json.dumps(["package", metadata.version("inboxspec")]).encode())
        return digest.hexdigest()
    except (OSError, metadata.PackageNotFoundError):
        return None
