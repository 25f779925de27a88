"""The value checks every machine of the reference implementation shares.

Times, counts and tickets must survive a JSON round trip through any port,
including JavaScript, whose integers are exact only up to 2**53 - 1. ``bool`` is
an ``int`` subclass in Python, and ``True`` is not a time or a count, so every
check below asks for ``type(value) is int``.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
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


def check_argument_names(event: str, args: object, names: Collection[str],
                         invalid: type[Exception]) -> Mapping[str, object]:
    """A step's first two faults, for a reference that takes a step's arguments as sent: ``args``
    must be an object, and may name only the event's arguments (``names``, from the machine's
    interface data); else ``invalid`` (the machine's ``invalid_argument`` error) is raised.
    Returns ``args``; each argument's own value is the event's to check."""
    if not isinstance(args, Mapping):
        raise invalid(f"{event}: args must be an object, got {type(args).__name__}")
    refuse_unknown_arguments(event, args, names, invalid)
    return args


def refuse_unknown_arguments(event: str, args: Iterable[object], names: Collection[str],
                             invalid: type[Exception]) -> None:
    """Raise ``invalid`` naming, sorted, the names among ``args`` that are not the event's
    (``names``): this fault's one wording, for every machine's reference and for the interface
    data's own check (``Interface.argument_fault``)."""
    unknown = sorted(str(name) for name in args if name not in names)
    if unknown:
        raise invalid(f"{event} takes no argument(s) {', '.join(unknown)}")
