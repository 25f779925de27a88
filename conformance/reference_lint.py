"""``cases lint`` against the reference's own config check.

The interface data types each config key (``conformance/interface_lint.py``), but some configs
are refused for reasons only the machine knows: the host's two harness-line options at once, a
floor past ``2^53 - 1``. A case whose config the reference refuses while its steps expect
ordinary outputs is one that no port may pass: every correct port answers ``config_error``. So
lint asks the reference to build each such case's machine (``Machine.run_case`` with no steps,
which runs nothing) and names each case it refuses.

Left to the run, not built here: a case that expects the config error (that is its point), a
config the interface data already faults (lint names it there), and every case of a machine
whose config has a key the runner handles (the writer proofs' ``fixture`` and ``fixture_dir``,
PROTO-FIX-*): building one writes a directory, the case's files or an empty one of its own,
which ``conform`` makes only after its own checks, and lint makes none.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from inboxspec import machines

if TYPE_CHECKING:
    from inboxspec.conformance.casefiles import Case


def problems(cases: Iterable[Case]) -> list[str]:
    """Every case with steps whose config the reference refuses, in file order."""
    found: list[str] = []
    # The machines whose cases are built here: not those with a config key the runner handles.
    built = {entry.name for entry in machines.all_machines()
             if entry.interface is None or all(key.runner is None for key in entry.interface.config_keys)}
    for case in cases:
        if case.machine not in built or case.expect_config_error is not None or not case.steps:
            continue
        entry = machines.get(case.machine)
        interface = entry.interface
        if interface is not None and interface.config_fault(case.config) is not None:
            continue
        try:
            answer = entry.run_case(case.config, [])
        except Exception as error:  # a fault of the reference's own: named, not a traceback
            found.append(f"{case.source}: {case.id}: the reference failed building this config "
                         f"({type(error).__name__}: {error}): a fault of the reference, not of the case")
            continue
        if "config_error" in answer:
            found.append(f"{case.source}: {case.id}: the reference refuses this config "
                         f"({answer['config_error']}), so no port may give the outputs its steps expect: "
                         f"expect the config error with no steps, or change the config")
    return found
