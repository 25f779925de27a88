"""The invalid-input tests' common check: a call given anything either returns or raises its
machine's typed error with the one code the spec names for it. Any other exception propagates, and
so fails the test."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, cast


class Coded(Protocol):
    code: str


def raises_only(error: type[Exception], code: str, call: Callable[[], object]) -> None:
    """``call()`` returns, or raises ``error`` whose code is ``code``."""
    try:
        call()
    except error as raised:
        assert cast(Coded, raised).code == code, raised
