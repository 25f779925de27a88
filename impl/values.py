"""The value checks every machine of the reference implementation shares.

Times, counts and tickets must survive a JSON round trip through any port,
including JavaScript, whose integers are exact only up to 2**53 - 1. ``bool`` is
an ``int`` subclass in Python, and ``True`` is not a time or a count, so every
check below asks for ``type(value) is int``.
"""

from __future__ import annotations

from typing import Final

MAX_SAFE_INTEGER: Final = 2**53 - 1


def is_safe_natural(value: object) -> bool:
    """An integer in ``[0, 2**53 - 1]``."""
    return type(value) is int and 0 <= value <= MAX_SAFE_INTEGER


def is_positive_safe_integer(value: object) -> bool:
    """An integer in ``[1, 2**53 - 1]``."""
    return type(value) is int and 0 < value <= MAX_SAFE_INTEGER


def is_safe_integer(value: object) -> bool:
    """An integer in ``[-(2**53 - 1), 2**53 - 1]``."""
    return type(value) is int and -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER


def describe(value: object) -> str:
    """A short, never-failing description of a bad value for an error message."""
    try:
        text = repr(value)
    except Exception:  # a hostile __repr__, or an int too long to print
        return f"a {type(value).__name__}"
    return text if len(text) <= 60 else f"{text[:57]}..."
