"""A function replaced, for one test, by one that records each argument it is called with and then
calls the real one: how a test counts the work a change should save."""

from __future__ import annotations

from typing import Any

import pytest


def calls_of(monkeypatch: pytest.MonkeyPatch, owner: object, name: str) -> list[Any]:
    """The arguments ``owner.name`` is called with from now until the test ends, in call order."""
    real = getattr(owner, name)
    called: list[Any] = []

    def recorded(argument: Any) -> Any:
        called.append(argument)
        return real(argument)

    monkeypatch.setattr(owner, name, recorded)
    return called
