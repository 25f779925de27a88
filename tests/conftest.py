"""Shared test settings.

Hypothesis profiles: ``ci`` (default) is bounded so CI stays well under its
budget; ``deep`` runs many more and longer examples. Choose with
``HYPOTHESIS_PROFILE=deep pytest``.

The session checks itself at its end: no fixture directory and no adapter
process may outlive it (``tests/session_hygiene.py``).

``explorations`` is one memo of explorations for the session (per xdist worker):
the tests that take it are marked ``xdist_group("explorations")``, and the suite
runs with ``--dist loadgroup`` (``pyproject.toml``), so they run in one worker
and each configuration is explored once among them.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest
from hypothesis import HealthCheck, settings

from tests.session_hygiene import pytest_configure, pytest_sessionfinish

if TYPE_CHECKING:
    from inboxspec.checker.explore import Explorations

__all__ = ["pytest_configure", "pytest_sessionfinish"]  # hooks of this conftest, defined there

# What the profiles share: stateful runs vary in speed, so no per-example deadline.
COMMON = {"deadline": None, "suppress_health_check": [HealthCheck.too_slow]}
settings.register_profile("ci", max_examples=150, stateful_step_count=40, **COMMON)  # type: ignore[arg-type]
settings.register_profile("deep", max_examples=5000, stateful_step_count=120, **COMMON)  # type: ignore[arg-type]
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture(scope="session")
def explorations() -> Iterator[Explorations]:
    """Explorations of the registered machines as they are, memoised by (machine, bounds, options).

    Only for a test that changes no machine, model or explorer: a result is shared with every
    later test of the worker that asks for the same configuration.
    """
    from inboxspec.checker.explore import Explorations

    with Explorations() as memo:
        yield memo
