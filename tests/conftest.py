"""Shared test settings.

Hypothesis profiles: ``ci`` (default) is bounded so CI stays well under its
budget; ``deep`` runs many more and longer examples. Choose with
``HYPOTHESIS_PROFILE=deep pytest``.

The session checks itself at its end: no fixture directory and no adapter
process may outlive it (``tests/session_hygiene.py``). Its Python processes share
a bytecode cache even where writing bytecode is turned off (``tests/bytecode_cache.py``).
Each worker freezes what collection made and collects its youngest generation less often
(``pytest_collection_finish``).

``explorations`` explores each configuration once in the session, and
``wheel_of_this_tree`` builds the wheel once, whichever xdist worker asks first
(``tests/session_shared.py``).
"""

from __future__ import annotations

import gc
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from hypothesis import HealthCheck, settings

from tests import bytecode_cache, session_hygiene
from tests.session_hygiene import pytest_sessionfinish, signal_handlers_left_alone

if TYPE_CHECKING:
    from tests.session_shared import SharedExplorations

# A hook and an autouse fixture of this conftest, defined there.
__all__ = ["pytest_sessionfinish", "signal_handlers_left_alone"]


def pytest_configure(config: pytest.Config) -> None:
    session_hygiene.pytest_configure(config)
    bytecode_cache.pytest_configure(config)


def pytest_unconfigure(config: pytest.Config) -> None:
    bytecode_cache.pytest_unconfigure(config)


def pytest_collection_finish(session: pytest.Session) -> None:
    """The collector's settings for a worker's tests (measured over whole suite runs on two cores).

    What collection made (the modules, the test items, the parametrized tables) lives until the
    session ends: it is frozen out of the collector's reach, so that no full collection walks its
    180,000 objects again. And the youngest generation is collected every 10,000 allocations, not
    700: the explorations' tests allocate millions of objects that they keep, and Python starts a
    full collection at most every hundred young ones (its other two thresholds), so fewer young
    collections make fewer full ones. The collections' processor time over a run went from 35 s to 24 s
    with the freezing, and to 11 s with the threshold. ``inboxspec check`` sets the same young
    threshold for its own processes (``cli/check.py``'s ``rarer_young_collections``, measured on
    its own); the explorer's search keeps the young thresholds it finds and runs no full
    collection (``checker/explore.py``'s ``young_collections_only``)."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(10_000, 10, 10)


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto`` (pyproject.toml): one worker more than the cores this process may use. Many
    tests wait on subprocesses (adapters, their timeouts, node, tsc), and a third worker on two
    cores runs the suite in 5 min 15 s where two take 5 min 50 s (measured side by side)."""
    from inboxspec.checker.explore import available_cores

    return available_cores() + 1


# What the profiles share: stateful runs vary in speed, so no per-example deadline.
COMMON = {"deadline": None, "suppress_health_check": [HealthCheck.too_slow]}
settings.register_profile("ci", max_examples=150, stateful_step_count=40, **COMMON)  # type: ignore[arg-type]
settings.register_profile("deep", max_examples=5000, stateful_step_count=120, **COMMON)  # type: ignore[arg-type]
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture(scope="session")
def explorations(tmp_path_factory: pytest.TempPathFactory) -> SharedExplorations:
    """Explorations of the registered machines as they are, each configuration explored once in
    the session: only for a test that changes no machine, model or explorer."""
    from tests.session_shared import SharedExplorations

    return SharedExplorations(tmp_path_factory)


@pytest.fixture(scope="session")
def wheel_of_this_tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel of this tree, alone in its directory (a find-links directory for pip), built once
    in the session from a copy of the tracked files: a build/ folder left in the work tree by an
    earlier build would otherwise supply files the package globs miss."""
    from tests.session_shared import computed_once, scratch_directory

    scratch = scratch_directory(tmp_path_factory, "wheel")
    return computed_once(tmp_path_factory, "wheel", lambda: _build_wheel(scratch))


def _build_wheel(scratch: Path) -> Path:
    root = Path(__file__).resolve().parent.parent
    source, wheels = scratch / "source", scratch / "wheels"
    for path in subprocess.run(["git", "ls-files"], cwd=root, capture_output=True, text=True,
                               check=True).stdout.splitlines():
        if (root / path).is_file():
            (source / path).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(root / path, source / path)
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(wheels), str(source)],
                   check=True, capture_output=True, timeout=600)
    (wheel,) = wheels.glob("inboxspec-*.whl")
    return wheel
