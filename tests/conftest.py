"""Shared test settings.

Hypothesis profiles: ``ci`` (default) is bounded so CI stays well under its
budget; ``deep`` runs many more and longer examples. Choose with
``HYPOTHESIS_PROFILE=deep pytest``.

The session checks itself at its end: no fixture directory and no adapter
process may outlive it (``tests/session_hygiene.py``).
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

from tests.session_hygiene import pytest_configure, pytest_sessionfinish

__all__ = ["pytest_configure", "pytest_sessionfinish"]  # hooks of this conftest, defined there

# What the profiles share: stateful runs vary in speed, so no per-example deadline.
COMMON = {"deadline": None, "suppress_health_check": [HealthCheck.too_slow]}
settings.register_profile("ci", max_examples=150, stateful_step_count=40, **COMMON)  # type: ignore[arg-type]
settings.register_profile("deep", max_examples=5000, stateful_step_count=120, **COMMON)  # type: ignore[arg-type]
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
