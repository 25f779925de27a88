"""The session's Python processes share one bytecode cache, even where writing bytecode is turned off.

A pytest plugin (``tests/conftest.py`` loads it). The suite starts some 380 Python
processes: ``inboxspec conform`` runs, reference and test adapters, CLI calls. Each imports
the package. Where ``PYTHONDONTWRITEBYTECODE`` is set, as in many container images and CI
machines, no process keeps the bytecode it compiles. Then every process compiles the
package's sources again, about 0.2 s of processor time each, a tenth of the whole suite's
(measured: ``inboxspec conform --help`` takes 0.47 s without the cache and 0.26 s with it).
A pip-installed package is compiled at install time. The sources of an editable install,
which the README's test command makes, are not.

So, at the start of a session, in the controller (or the only process, with ``-n 0``), and
only where the variable is set: it is taken out of the environment, and
``PYTHONPYCACHEPREFIX`` points every later process at a fresh directory of the session's own.
What the variable is there to prevent, bytecode files written beside the sources, still does
not happen: the cache lives outside the work tree and is removed at the end of the session.
The controller keeps its own setting, which Python reads at start-up (with ``-n 0`` it is
the one process that runs the tests, and compiles them without a cache, as before); xdist
workers, and every process the session starts, inherit the change.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import MutableMapping

import pytest

_made: list[str] = []


def share_a_bytecode_cache(environment: MutableMapping[str, str], directory: str) -> bool:
    """Where ``environment`` turns bytecode writing off, turn it on with its cache in ``directory``.

    Returns whether it changed anything. An environment that already writes bytecode (where it
    goes is then the user's choice, ``PYTHONPYCACHEPREFIX`` included) is left as it is."""
    if not environment.get("PYTHONDONTWRITEBYTECODE"):
        return False
    del environment["PYTHONDONTWRITEBYTECODE"]
    environment["PYTHONPYCACHEPREFIX"] = directory
    return True


def pytest_configure(config: pytest.Config) -> None:
    if hasattr(config, "workerinput"):  # an xdist worker: it inherited the controller's choice
        return
    directory = tempfile.mkdtemp(prefix="pytest-bytecode-")
    if share_a_bytecode_cache(os.environ, directory):
        _made.append(directory)
    else:
        os.rmdir(directory)


def pytest_unconfigure(config: pytest.Config) -> None:
    while _made:
        shutil.rmtree(_made.pop(), ignore_errors=True)
